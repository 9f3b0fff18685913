"""Exports a zoo of torchvision CNNs with seeded random weights to ONNX, with torch's outputs.

Usage: /usr/bin/python3 models/export_zoo.py OUT_DIR [MODEL ...]

Needs Debian 12's python3-torch (1.13), python3-torchvision (0.14) and python3-onnx, hence
/usr/bin/python3 rather than the pyenv python3 on PATH. For each model (all of MODELS when none is
named) it writes the ONNX backend-test layout:

  OUT_DIR/<name>/model.onnx                     opset 13, input 'input' float32[N,3,224,224]
  OUT_DIR/<name>/test_data_set_0/input_0.pb     seeded input of batch 2 (TensorProto)
  OUT_DIR/<name>/test_data_set_0/output_0.pb    torch's output for it, float32[2,1000]

Weights are torchvision's random init under torch.manual_seed (no pretrained weights), with
BatchNorm affine parameters randomised, BN running stats calibrated on a seeded batch (in forward
order, on noise like the test inputs, for EXTRA_MODELS and EfficientNets) and perturbed per channel (so BN is far from an identity, yet the signal survives 50+ layers), and the
classifier layers re-randomised (torchvision zero-initialises their biases, some heads are tiny).
BatchNormalization nodes are kept (TrainingMode.PRESERVE on an eval() model, no constant folding),
so the ONNX runtime, not the exporter, has to get BN right. The reference output is computed by
torch in float64 from the same float32 weights and input, then rounded to float32, so it carries
almost no rounding error of its own; the float32 torch output's distance from it is printed for
scale. Everything is seeded: two runs write identical files.
"""

import inspect
import os
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torchvision

MODELS = [
    "resnet18",
    "resnet50",
    "mobilenet_v2",
    "mobilenet_v3_small",
    "squeezenet1_1",
    "vgg11_bn",
    "densenet121",
    "vit_b_16",
]
# Exported only when named (not part of the CPU test zoo): checked on the GPU machine.
EXTRA_MODELS = ["efficientnet_b0"]
# ONNXRUN_ZOO_OPSET overrides the opset (newer torch exports attention, vit_b_16, through ops of opset 14).
OPSET = int(os.environ.get("ONNXRUN_ZOO_OPSET", "13"))
BATCH = 2


def randomise(model, seed, in_order=False):
    """Randomises BN and the classifier so that every part of the model matters.

    Random BN running stats alone make the signal vanish or explode over 50 layers (mobilenets'
    outputs then do not depend on the input at all), so the stats are first calibrated on a seeded
    batch, as training would, and then perturbed: BN still computes (x - mean) / sqrt(var + eps)
    with per-channel values far from 0 and 1, and the output still depends on the input.
    """
    gen = torch.Generator().manual_seed(seed + 1000)
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    with torch.no_grad():
        for bn in bns:
            c = bn.num_features
            bn.weight.copy_(torch.rand(c, generator=gen) + 0.5)  # in [0.5, 1.5)
            bn.bias.copy_(torch.randn(c, generator=gen) * 0.1)
        # The last layer producing the logits: a Linear, or squeezenet's 1x1 Conv. torchvision
        # initialises it with std 0.01 and zero bias, so re-randomise it at a normal scale.
        last = [m for m in model.modules() if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d))][-1]
        fan_in = last.weight[0].numel()
        last.weight.copy_(torch.randn(last.weight.shape, generator=gen) * (2.0 / fan_in) ** 0.5)
        if last.bias is not None:
            last.bias.copy_(torch.randn(last.bias.shape, generator=gen) * 0.1)
        # Other zero-initialised biases of Linear layers (vgg's and mobilenet_v3's classifiers).
        for module in model.modules():
            if isinstance(module, torch.nn.Linear) and module.bias is not None:
                if not torch.count_nonzero(module.bias):
                    module.bias.copy_(torch.randn(module.bias.shape, generator=gen) * 0.1)
    if bns:
        (calibrate_in_order if in_order else calibrate_then_perturb)(model, bns, gen)


def calibrate_then_perturb(model, bns, gen):
    """The zoo's first calibration (its CPU tests' exports): every BN's stats from one train-mode
    forward of plain noise, then each perturbed by 0.2 std and [0.7, 1.3)."""
    with torch.no_grad():
        for bn in bns:
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average: the stats of the calibration batch
        model.train()
        model(torch.randn((8, 3, 224, 224), generator=gen))
        for bn in bns:
            c = bn.num_features
            std = bn.running_var.sqrt()
            bn.running_mean.add_(torch.randn(c, generator=gen) * 0.2 * std)
            bn.running_var.mul_(torch.rand(c, generator=gen) * 0.6 + 0.7)  # x [0.7, 1.3)
            bn.running_var.clamp_(min=1e-3)  # positive even for a channel that is constant
            bn.momentum = 0.1
    model.eval()


def calibrate_in_order(model, bns, gen):
    """Sets each BN's running stats from the input it really sees, then perturbs them.

    One eval() forward of a seeded batch (plain noise and noise drawn as the test inputs are): a hook on each BN computes its input's per-channel mean
    and variance (upstream BNs already perturbed, as the forward reaches them in order), stores them
    shifted by 0.2 std and scaled by [0.7, 1.3), and BN then normalises with those. Calibrating every
    BN first and perturbing afterwards, on plain noise, left BNs whose input varies by 1e-3 seeing
    shifted inputs at test time and amplifying them 30x (efficientnet_b0's output then moved by
    10-30% under torch's own TF32 / fp16 runs; efficientnet_b1's and efficientnet_v2_s's even in
    torch's own float32, 0.29 and 0.46). Used for EXTRA_MODELS and the EfficientNets: on the CPU
    zoo's models it measured no better (mobilenet_v2's CPU fp16 error 1.1e-2 instead of 8.9e-3).
    """

    def set_stats(bn, inputs):
        x = inputs[0]
        c = bn.num_features
        mean = x.mean(dim=(0, 2, 3))
        std = x.var(dim=(0, 2, 3), unbiased=False).sqrt()
        bn.running_mean.copy_(mean + torch.randn(c, generator=gen) * 0.2 * std)
        var = std.square() * (torch.rand(c, generator=gen) * 0.6 + 0.7)  # x [0.7, 1.3)
        bn.running_var.copy_(var.clamp(min=1e-3))  # positive even for a channel that is constant

    hooks = [bn.register_forward_pre_hook(set_stats) for bn in bns]
    model.eval()
    with torch.no_grad():
        noise = torch.randn((8, 3, 224, 224), generator=gen)
        model(torch.cat([noise, make_input(gen, 8)]))
    for hook in hooks:
        hook.remove()


def make_input(gen, batch):
    """Noise with a per-image, per-channel scale and offset: global pooling averages i.i.d. noise
    away, so without them every image would give about the same output."""
    scale = torch.rand((batch, 3, 1, 1), generator=gen) * 1.5 + 0.5
    offset = torch.randn((batch, 3, 1, 1), generator=gen) * 0.5
    return torch.randn((batch, 3, 224, 224), generator=gen) * scale + offset


def write_tensor(array, name, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def export(name, seed, out_dir):
    start = time.time()
    torch.manual_seed(seed)
    model = getattr(torchvision.models, name)(weights=None)
    randomise(model, seed, in_order=name in EXTRA_MODELS or name.startswith("efficientnet"))
    model.eval()

    x = make_input(torch.Generator().manual_seed(seed + 2000), BATCH)

    model_dir = os.path.join(out_dir, name)
    data_dir = os.path.join(model_dir, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    model_path = os.path.join(model_dir, "model.onnx")
    # Newer torch (2.9+) exports through dynamo by default; the TorchScript exporter keeps
    # TrainingMode.PRESERVE (BN nodes), so ask for it where the argument exists.
    extra = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(
        model,
        x,
        model_path,
        export_params=True,
        opset_version=OPSET,
        training=torch.onnx.TrainingMode.PRESERVE,
        do_constant_folding=False,
        input_names=["input"],
        output_names=["output"],
        dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
        **extra,
    )
    export_s = time.time() - start

    with torch.no_grad():
        y32 = model(x).numpy()
        y64 = model.double()(x.double()).float().numpy()
    write_tensor(x.numpy(), "input", os.path.join(data_dir, "input_0.pb"))
    write_tensor(y64, "output", os.path.join(data_dir, "output_0.pb"))

    proto = onnx.load(model_path)
    onnx.checker.check_model(proto)
    ops = sorted({node.op_type for node in proto.graph.node})
    n_bn = sum(node.op_type == "BatchNormalization" for node in proto.graph.node)
    has_bn = any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules())
    if has_bn and n_bn == 0:
        raise RuntimeError(f"{name}: the export has no BatchNormalization node")
    rel32 = np.abs(y32 - y64).max() / np.abs(y64).max()
    # On a GPU machine: how far PyTorch's own TF32 and fp16 runs land from the fp64 reference,
    # the yardstick for onnxrun's tolerances in those precisions.
    peers = ""
    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        with torch.no_grad():
            gpu = model.float().cuda().to(memory_format=torch.channels_last)
            xg = x.cuda().to(memory_format=torch.channels_last)
            ytf32 = gpu(xg).cpu().numpy()
            y16 = gpu.half()(xg.half()).float().cpu().numpy()
        model.float().cpu()
        peers = (f"; torch GPU tf32 vs fp64 {np.abs(ytf32 - y64).max() / np.abs(y64).max():.2e}, "
                 f"fp16 vs fp64 {np.abs(y16 - y64).max() / np.abs(y64).max():.2e}")
    # How much the output depends on the input: 0 would mean the test checks only the weights.
    spread = np.abs(y64[0] - y64[1]).max() / np.abs(y64).max()
    print(
        f"{name}: {len(proto.graph.node)} nodes ({n_bn} BatchNormalization), "
        f"{os.path.getsize(model_path) / 2**20:.1f} MiB, exported in {export_s:.1f} s, "
        f"total {time.time() - start:.1f} s; output min {y64.min():.3g} max {y64.max():.3g} "
        f"std {y64.std():.3g}, max|y0-y1|/max|y| {spread:.2f}; "
        f"torch fp32 vs fp64 max rel err {rel32:.2e}{peers}; ops {' '.join(ops)}",
        flush=True,
    )


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    out_dir = argv[1]
    names = argv[2:] or MODELS
    unknown = [n for n in names if n not in MODELS + EXTRA_MODELS]
    if unknown:
        print(f"export_zoo.py: unknown model(s) {unknown}; known: {MODELS + EXTRA_MODELS}",
              file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in names:
        export(name, (MODELS + EXTRA_MODELS).index(name), out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
