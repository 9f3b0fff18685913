"""Exports timm architectures (random init, 10 classes, each at its default input size) to ONNX in
the test layout with ONNX Runtime's CPU outputs as the reference, for `onnxrun test`: the families
torchvision lacks — mobile CNNs (LCNet, GhostNet, ReXNet, HardCoReNAS, TinyNet, MobileOne, RepVGG),
hybrid and efficient transformers (LeViT, EfficientFormer, EfficientViT, FastViT, EdgeNeXt,
MobileViT v1/v2, PVT v2, Twins, XCiT, CaiT, CrossViT, GCViT, NesT, MaxViT, CoAtNet), MLP and pooling
mixers (MLP-Mixer, PoolFormer, Sequencer2D), and other CNNs (HRNet, Res2Net, ResNeSt, DLA, DPN,
TResNet, Inception v4, SelecSLS, VoVNet, RegNetX).

Not part of the build or CI. Needs timm from PyPI beside Debian's torch 1.13 (onnx and onnxruntime
from PyPI too):

  python3 -m venv --system-site-packages /tmp/timm && /tmp/timm/bin/pip install timm==0.9.16 onnxruntime
  /tmp/timm/bin/python models/sweep/export_timm.py OUT_DIR [name,name,...]
  bazel-bin/cli/onnxrun test --device cpu OUT_DIR
"""

import os
import sys

import numpy as np
import onnxruntime
import timm
import torch
from sweep_io import run_cases, write_tensor

ARCHITECTURES = [
    "lcnet_050", "ghostnet_100", "rexnet_100", "hardcorenas_a", "tinynet_a", "mobileone_s0", "repvgg_a0",
    "levit_128s", "efficientformer_l1", "efficientvit_b0", "fastvit_t8", "edgenext_xx_small", "mobilevit_xs",
    "mobilevitv2_050", "pvt_v2_b0", "twins_svt_small", "xcit_nano_12_p16_224", "cait_xxs24_224", "crossvit_tiny_240",
    "gcvit_xxtiny", "nest_tiny", "maxvit_tiny_rw_224", "coatnet_0_rw_224", "mixer_b16_224", "poolformer_s12",
    "sequencer2d_s", "hrnet_w18_small", "res2net50_26w_4s", "resnest14d", "dla34", "dpn68", "tresnet_m",
    "inception_v4", "selecsls42b", "vovnet39a", "regnetx_002",
]


def export(name, out_dir):
    model = timm.create_model(name, pretrained=False, num_classes=10).eval()
    x = torch.randn(1, *model.pretrained_cfg.get("input_size", (3, 224, 224)))
    folder = os.path.join(out_dir, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"], opset_version=17)
        torch_out = model(x).numpy()
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": x.numpy()})
    write_tensor(os.path.join(folder, "test_data_set_0", "input_0.pb"), x.numpy(), "x")
    write_tensor(os.path.join(folder, "test_data_set_0", "output_0.pb"), y, "y")
    return float(np.abs(y - torch_out).max() / max(np.abs(torch_out).max(), 1e-12))


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    names = argv[2].split(",") if len(argv) > 2 else ARCHITECTURES

    def run_one(name):
        torch.manual_seed(0)
        return f"exported at opset 17; ONNX Runtime vs torch {export(name, argv[1]):.2e} of max"

    return run_cases(names, run_one)

if __name__ == "__main__":
    sys.exit(main(sys.argv))
