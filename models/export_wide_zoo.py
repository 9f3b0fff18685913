"""Exports architectures beyond the test zoo (models/export_zoo.py) in the ONNX test layout, for
`onnxrun test` on the GPU machine: more torchvision classifiers and segmenters (ResNeXt, RegNet,
ShuffleNet, MnasNet, MobileNetV3, ConvNeXt, Swin, EfficientNet, GoogLeNet, Inception v3,
SqueezeNet 1.0, AlexNet, ViT-B/32, LR-ASPP, DeepLabV3), a GPT-2-style decoder (causal mask by
masked_fill), a LLaMA-style block (RMSNorm, rotary embedding, causal SDPA, SiLU-gated MLP) and
nn.TransformerDecoder with a causal float mask. Seeded random weights (BN calibrated as in
export_zoo.py), batch 2, the reference computed by torch in float64. Several are also exported
through torch's dynamo exporter (opset 20+), which writes different patterns than the TorchScript
one (opset 17).

  python3 models/export_wide_zoo.py OUT_DIR [name,name,...]
  .gpu/run bin/onnxrun test --device cuda --precisions fp32,fp16,bf16 OUT_DIR

Needs torch, torchvision, onnx (and onnxscript for the dynamo exports).
"""

import os
import shutil
import sys
import time

import onnx
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_zoo  # noqa: E402  (its BN calibration and tensor writer)

F = torch.nn.functional

CLASSIFIERS = {name: 224 for name in [
    "resnext50_32x4d", "regnet_y_400mf", "regnet_x_400mf", "shufflenet_v2_x1_0", "mnasnet1_0",
    "mobilenet_v3_large", "convnext_tiny", "swin_t", "efficientnet_b0", "googlenet", "squeezenet1_0",
    "alexnet", "vit_b_32"]}
CLASSIFIERS["inception_v3"] = 299
SEGMENTERS = ["deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]
SEQUENCE = ["gpt2_like", "llama_like", "tf_decoder"]
ALSO_DYNAMO = {"resnext50_32x4d", "convnext_tiny", "swin_t", "vit_b_32", "gpt2_like", "llama_like"}


class Gpt2Like(torch.nn.Module):
    """Two pre-LayerNorm decoder layers: fused QKV, causal mask by masked_fill(-inf), tanh-GELU MLP."""

    def __init__(self, width=256, heads=4, layers=2, vocab=1000):
        super().__init__()
        self.heads = heads
        self.embed = torch.nn.Embedding(vocab, width)
        self.position = torch.nn.Embedding(128, width)
        self.norms = torch.nn.ModuleList([torch.nn.LayerNorm(width) for _ in range(2 * layers)])
        self.qkv = torch.nn.ModuleList([torch.nn.Linear(width, 3 * width) for _ in range(layers)])
        self.out = torch.nn.ModuleList([torch.nn.Linear(width, width) for _ in range(layers)])
        self.up = torch.nn.ModuleList([torch.nn.Linear(width, 4 * width) for _ in range(layers)])
        self.down = torch.nn.ModuleList([torch.nn.Linear(4 * width, width) for _ in range(layers)])
        self.head = torch.nn.Linear(width, vocab, bias=False)

    def forward(self, ids):
        batch, length = ids.shape
        x = self.embed(ids) + self.position(torch.arange(length, device=ids.device))[None]
        causal = torch.tril(torch.ones(length, length, dtype=torch.bool, device=ids.device))
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](self.norms[2 * i](x)).split(x.shape[-1], dim=-1)
            q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
            attention = scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
            x = x + self.out[i](attention.transpose(1, 2).reshape(batch, length, -1))
            x = x + self.down[i](F.gelu(self.up[i](self.norms[2 * i + 1](x)), approximate="tanh"))
        return self.head(x)


class LlamaLike(torch.nn.Module):
    """One block: RMSNorm, rotary embedding on Q and K, causal SDPA, SiLU-gated MLP, no biases."""

    def __init__(self, width=256, heads=4, hidden=512):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.Parameter(torch.rand(width) + 0.5)
        self.norm2 = torch.nn.Parameter(torch.rand(width) + 0.5)
        self.q, self.k, self.v, self.o = (torch.nn.Linear(width, width, bias=False) for _ in range(4))
        self.gate = torch.nn.Linear(width, hidden, bias=False)
        self.up = torch.nn.Linear(width, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, width, bias=False)

    @staticmethod
    def rms_norm(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight

    @staticmethod
    def rotary(x):
        length, dim = x.shape[-2], x.shape[-1]
        inverse = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        angles = torch.outer(torch.arange(length).float(), inverse)
        even, odd = x[..., ::2], x[..., 1::2]
        return torch.stack([even * angles.cos() - odd * angles.sin(), even * angles.sin() + odd * angles.cos()],
                           -1).flatten(-2)

    def forward(self, x):
        batch, length, width = x.shape
        y = self.rms_norm(x, self.norm1)
        heads = lambda t: t.view(batch, length, self.heads, -1).transpose(1, 2)  # noqa: E731
        q, k, v = self.rotary(heads(self.q(y))), self.rotary(heads(self.k(y))), heads(self.v(y))
        attention = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(attention.transpose(1, 2).reshape(batch, length, width))
        y = self.rms_norm(x, self.norm2)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class CausalDecoder(torch.nn.Module):
    """nn.TransformerDecoder (2 pre-norm layers) with a causal float mask and cross-attention."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerDecoderLayer(256, 4, 1024, batch_first=True, norm_first=True)
        self.decoder = torch.nn.TransformerDecoder(layer, 2)

    def forward(self, x, memory):
        length = x.shape[1]
        return self.decoder(x, memory, tgt_mask=torch.triu(torch.full((length, length), float("-inf")), 1))


class SegmentationOut(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def build(name):
    """(model in eval mode, example inputs, input names, dynamic axes)."""
    torch.manual_seed(0)
    if name in CLASSIFIERS or name in SEGMENTERS:
        if name in SEGMENTERS:
            model = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None)
        else:
            extra = {"aux_logits": False, "init_weights": True} if name in ("googlenet", "inception_v3") else {}
            model = getattr(torchvision.models, name)(weights=None, **extra)
        export_zoo.randomise(model, 0)
        model = SegmentationOut(model) if name in SEGMENTERS else model
        size = CLASSIFIERS.get(name, 224)
        return model.eval(), (torch.randn(2, 3, size, size),), ["input"], {"input": {0: "N"}}
    if name == "gpt2_like":
        return Gpt2Like().eval(), (torch.randint(0, 1000, (2, 64)),), ["ids"], {"ids": {0: "N", 1: "T"}}
    if name == "llama_like":
        return LlamaLike().eval(), (torch.randn(2, 64, 256),), ["x"], {"x": {0: "N", 1: "T"}}
    if name == "tf_decoder":
        inputs = (torch.randn(2, 32, 256), torch.randn(2, 48, 256))
        return CausalDecoder().eval(), inputs, ["x", "mem"], {"x": {0: "N"}, "mem": {0: "N"}}
    raise KeyError(name)


def export(name, dynamo, out_dir):
    tag = name + ("_dynamo" if dynamo else "")
    folder = os.path.join(out_dir, tag)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    start = time.time()
    model, inputs, names, axes = build(name)
    with torch.no_grad():
        y32 = model(*inputs)
        y64 = model.double()(*[t.double() if t.is_floating_point() else t for t in inputs]).float()
        model.float()
    path = os.path.join(folder, "model.onnx")
    if dynamo:
        torch.onnx.export(model, inputs, path, input_names=names, output_names=["output"], dynamo=True,
                          external_data=False)
    else:
        torch.onnx.export(model, inputs, path, input_names=names, output_names=["output"], opset_version=17,
                          dynamic_axes=axes, dynamo=False)
    for i, t in enumerate(inputs):
        export_zoo.write_tensor(t.numpy(), names[i], os.path.join(folder, "test_data_set_0", f"input_{i}.pb"))
    export_zoo.write_tensor(y64.numpy(), "output", os.path.join(folder, "test_data_set_0", "output_0.pb"))
    proto = onnx.load(path)
    error = (y32 - y64).abs().max().item() / y64.abs().max().item()
    print(f"{tag}: {len(proto.graph.node)} nodes, opset {proto.opset_import[0].version}, exported in "
          f"{time.time() - start:.1f} s, torch fp32 vs fp64 {error:.1e}", flush=True)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    names = argv[2].split(",") if len(argv) > 2 else list(CLASSIFIERS) + SEGMENTERS + SEQUENCE
    failed = 0
    for name in names:
        for dynamo in [False, True] if name in ALSO_DYNAMO else [False]:
            try:
                export(name, dynamo, argv[1])
            except Exception as e:  # an export failure is a finding about torch, not a stop
                failed += 1
                print(f"{name}{'_dynamo' if dynamo else ''}: EXPORT FAILED {type(e).__name__}: {str(e)[:300]}")
                shutil.rmtree(os.path.join(argv[1], name + ("_dynamo" if dynamo else "")), ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
