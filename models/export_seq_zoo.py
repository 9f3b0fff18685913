"""Exports the zoo's non-torchvision architectures with seeded random weights to ONNX, with torch's
outputs as the reference: recurrent, attention and LRN networks, whose exports use the ops the
torchvision CNNs do not (LSTM, GRU, attention with a padding mask, LRN).

Usage: /usr/bin/python3 models/export_seq_zoo.py OUT_DIR [MODEL ...]

Same layout and conventions as export_zoo.py (opset 13, ONNX backend-test layout, reference computed
by torch in float64 from the float32 weights and inputs, everything seeded):

  OUT_DIR/<name>/model.onnx
  OUT_DIR/<name>/test_data_set_0/input_<i>.pb   graph-input order
  OUT_DIR/<name>/test_data_set_0/output_0.pb
"""

import inspect
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import torch

# ONNXRUN_ZOO_OPSET overrides the opset: newer torch (2.x) exports nn.MultiheadAttention through
# scaled_dot_product_attention, which needs opset 14.
OPSET = int(os.environ.get("ONNXRUN_ZOO_OPSET", "13"))


class Recurrent(torch.nn.Module):
    """A 2-layer bidirectional LSTM or GRU over [N, T, 32] with a linear head on the last step."""

    def __init__(self, kind):
        super().__init__()
        cls = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
        self.rnn = cls(32, 48, num_layers=2, batch_first=True, bidirectional=True)
        self.head = torch.nn.Linear(96, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y[:, -1])


class Encoder(torch.nn.Module):
    """A 2-layer transformer encoder (d 64, 4 heads) with a key-padding mask (True = padding)."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, x, padding):
        return self.encoder(x, src_key_padding_mask=padding)


class LrnFunction(torch.autograd.Function):
    """torch's local_response_norm, exported as ONNX's LRN op (torch decomposes it otherwise)."""

    @staticmethod
    def forward(ctx, x, size, alpha, beta, k):
        return torch.nn.functional.local_response_norm(x, size, alpha, beta, k)

    @staticmethod
    def symbolic(g, x, size, alpha, beta, k):
        return g.op("LRN", x, size_i=size, alpha_f=alpha, beta_f=beta, bias_f=k)


class AlexNetLrn(torch.nn.Module):
    """The original AlexNet's pattern at a small scale: conv, ReLU, LRN (size 5), max pool, twice,
    then a classifier (as in the ONNX Model Zoo's AlexNet, CaffeNet and GoogLeNet)."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 24, 11, stride=4, padding=2)
        self.c2 = torch.nn.Conv2d(24, 48, 5, padding=2)
        self.c3 = torch.nn.Conv2d(48, 64, 3, padding=1)
        self.fc = torch.nn.Linear(64 * 6 * 6, 100)

    def forward(self, x):
        lrn = lambda t: LrnFunction.apply(t, 5, 1e-4 * 50, 0.75, 2.0)
        x = torch.nn.functional.max_pool2d(lrn(torch.relu(self.c1(x))), 3, 2)
        x = torch.nn.functional.max_pool2d(lrn(torch.relu(self.c2(x))), 3, 2)
        x = torch.nn.functional.max_pool2d(torch.relu(self.c3(x)), 3, 2)  # 13x13 -> 6x6
        return self.fc(torch.flatten(x, 1))


class TinyYolo(torch.nn.Module):
    """A YOLO-style detector with dynamic H and W: a strided conv backbone (BN, SiLU), a top-down
    path (upsample, concat) and a head at strides 16 and 32 whose boxes are decoded on grids built
    from the feature maps' H and W at run time, as YOLOv5/v8 exports do (Shape, Range, Expand,
    ConstantOfShape in the export). Output [N, boxes, 5 + classes] with boxes = 2 (HW/256 + HW/1024)."""

    ANCHORS, CLASSES = 2, 4

    def __init__(self):
        super().__init__()
        conv = lambda ci, co: torch.nn.Sequential(torch.nn.Conv2d(ci, co, 3, 2, 1, bias=False),
                                                  torch.nn.BatchNorm2d(co), torch.nn.SiLU())
        self.backbone16 = torch.nn.Sequential(conv(3, 16), conv(16, 32), conv(32, 48), conv(48, 64))
        self.down32 = conv(64, 96)
        self.lateral = torch.nn.Conv2d(96, 64, 1)
        outputs = self.ANCHORS * (5 + self.CLASSES)
        self.head16 = torch.nn.Conv2d(128, outputs, 1)
        self.head32 = torch.nn.Conv2d(96, outputs, 1)

    def decode(self, p, stride):
        n, _, h, w = p.shape
        p = p.view(n, self.ANCHORS, 5 + self.CLASSES, h, w).permute(0, 1, 3, 4, 2)
        gy, gx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        grid = torch.stack((gx, gy), -1).view(1, 1, h, w, 2).to(p.dtype)
        xy = (p[..., :2].sigmoid() + grid) * stride
        wh = torch.exp(p[..., 2:4].clamp(max=4.0)) * stride
        return torch.cat((xy, wh, p[..., 4:].sigmoid()), -1).reshape(n, -1, 5 + self.CLASSES)

    def forward(self, x):
        f16 = self.backbone16(x)
        f32 = self.down32(f16)
        top = torch.nn.functional.interpolate(self.lateral(f32), scale_factor=2.0, mode="nearest")
        p16 = self.head16(torch.cat((f16, top), 1))
        return torch.cat((self.decode(p16, 16), self.decode(self.head32(f32), 32)), 1)


def sequence(gen, n, t, d):
    return torch.randn((n, t, d), generator=gen)


def padding_mask(n, t):
    mask = torch.zeros((n, t), dtype=torch.bool)
    mask[1, t - 3:] = True  # the second sequence is 3 steps shorter
    return mask


# name -> (model, data sets(gen): a list of input lists (the first is exported with), input names,
# dynamic axes of the inputs, dynamic axes of the output)
SPECS = {
    "lstm": (lambda: Recurrent("lstm"), lambda gen: [[sequence(gen, 2, 7, 32)]], ["x"], {"x": {0: "N", 1: "T"}},
             {0: "N"}),
    "gru": (lambda: Recurrent("gru"), lambda gen: [[sequence(gen, 2, 7, 32)]], ["x"], {"x": {0: "N", 1: "T"}},
            {0: "N"}),
    "transformer_encoder": (Encoder, lambda gen: [[sequence(gen, 2, 9, 64), padding_mask(2, 9)]], ["x", "padding"],
                            {"x": {0: "N", 1: "S"}, "padding": {0: "N", 1: "S"}}, {0: "N"}),
    "alexnet_lrn": (AlexNetLrn, lambda gen: [[torch.randn((2, 3, 224, 224), generator=gen)]], ["input"],
                    {"input": {0: "N"}}, {0: "N"}),
    # Two input sizes, run by one session: a plan per dims.
    "yolo_dynamic": (TinyYolo, lambda gen: [[torch.randn((1, 3, 256, 256), generator=gen)],
                                            [torch.randn((2, 3, 192, 320), generator=gen)]], ["images"],
                     {"images": {0: "N", 2: "H", 3: "W"}}, {0: "N", 1: "boxes"}),
}
MODELS = list(SPECS)


def write_tensor(array, name, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def export(name, seed, out_dir):
    build, make_data_sets, input_names, dynamic, output_dynamic = SPECS[name]
    torch.manual_seed(seed + 100)
    model = build().eval()
    data_sets = make_data_sets(torch.Generator().manual_seed(seed + 2100))
    model_dir = os.path.join(out_dir, name)
    os.makedirs(model_dir, exist_ok=True)
    model_path = os.path.join(model_dir, "model.onnx")
    extra = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(model, tuple(data_sets[0]), model_path, opset_version=OPSET, input_names=input_names,
                      output_names=["output"], dynamic_axes={**dynamic, "output": output_dynamic}, **extra)
    model.double()
    for d, inputs in enumerate(data_sets):
        data_dir = os.path.join(model_dir, f"test_data_set_{d}")
        os.makedirs(data_dir, exist_ok=True)
        with torch.no_grad():
            y64 = model(*[t.double() if t.is_floating_point() else t for t in inputs]).float().numpy()
        for i, (t, input_name) in enumerate(zip(inputs, input_names)):
            write_tensor(t.numpy(), input_name, os.path.join(data_dir, f"input_{i}.pb"))
        write_tensor(y64, "output", os.path.join(data_dir, "output_0.pb"))
    proto = onnx.load(model_path)
    onnx.checker.check_model(proto)
    ops = sorted({node.op_type for node in proto.graph.node})
    print(f"{name}: {len(proto.graph.node)} nodes, output {list(y64.shape)} std {y64.std():.3g}; ops {' '.join(ops)}",
          flush=True)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    names = argv[2:] or MODELS
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"export_seq_zoo.py: unknown model(s) {unknown}; known: {MODELS}", file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in names:
        export(name, MODELS.index(name), argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
