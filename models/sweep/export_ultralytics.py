"""Ultralytics detectors exported by torch.onnx (opset 17) with torch's outputs, in the ONNX test
layout: YOLOv8 detect / segment / pose / classify / oriented boxes, YOLOv10 (NMS-free, TopK and
GatherElements), YOLO11, YOLO12 (area attention) and RT-DETR (deformable attention: GridSample,
TopK), from their yaml configs (random weights; nothing is downloaded), at 320x320 (224 for cls).

  python3 models/sweep/export_ultralytics.py OUT_DIR && onnxrun test --precisions fp32,fp16 OUT_DIR

Needs torch and torchvision (Debian's python3-torch works in a venv with --system-site-packages and
`pip install ultralytics "numpy<2"`). With random weights RT-DETR's query selection (TopK over
scores equal to 1e-7) is a near tie: ONNX Runtime differs from torch on 208 of its 1800 outputs,
onnxrun on 12 (the 2026-11-29 sweep); the others match at fp32's and fp16's tolerance."""
import os
import sys

import onnx
import torch
from onnx import numpy_helper
from ultralytics import RTDETR, YOLO

CONFIGS = ["yolov8n.yaml", "yolov8n-seg.yaml", "yolov8n-pose.yaml", "yolov8n-cls.yaml", "yolov8n-obb.yaml",
           "yolov10n.yaml", "yolo11n.yaml", "yolo12n.yaml", "rtdetr-l.yaml"]


def export(config, out):
    torch.manual_seed(0)
    model = (RTDETR if config.startswith("rtdetr") else YOLO)(config).model.eval()
    for module in model.modules():  # the export forms of the heads (what `yolo export` sets)
        if hasattr(module, "export"):
            module.export = True
        if hasattr(module, "format"):
            module.format = "onnx"
    size = 224 if "-cls" in config else 320
    x = torch.rand(1, 3, size, size)
    with torch.no_grad():
        y = model(x)
    outputs = [t for t in (y if isinstance(y, (list, tuple)) else [y]) if isinstance(t, torch.Tensor)]
    case = os.path.join(out, config.replace(".yaml", ""))
    os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
    torch.onnx.export(model, x, os.path.join(case, "model.onnx"), opset_version=17, input_names=["images"],
                      output_names=[f"output{i}" for i in range(len(outputs))])
    onnx.save_tensor(numpy_helper.from_array(x.numpy(), "images"), os.path.join(case, "test_data_set_0", "input_0.pb"))
    for i, t in enumerate(outputs):
        onnx.save_tensor(numpy_helper.from_array(t.numpy(), f"output{i}"),
                         os.path.join(case, "test_data_set_0", f"output_{i}.pb"))
    print(config, [tuple(t.shape) for t in outputs])


if __name__ == "__main__":
    for config in CONFIGS:
        export(config, sys.argv[1] if len(sys.argv) > 1 else "ultralytics")
