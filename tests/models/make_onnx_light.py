"""Regenerates tests/models/onnx_light.tar.xz: ONNX's "light" model-zoo models (the onnx package's
backend test data, onnx/backend/test/data/light: AlexNet, DenseNet-121, Inception v1/v2, ResNet-50,
ShuffleNet, SqueezeNet, VGG-19, ZFNet-512 at opset 9 / IR 3, their weights made by ConstantOfShape)
in the ONNX test layout, with the inputs ONNX's own runner generates for them and their stored
outputs. Needs the onnx package from PyPI (1.23.2: `pip install onnx==1.23.2 numpy`). Usage:
  python make_onnx_light.py OUT/onnx_light && tar cf - -C OUT onnx_light | xz -9 > onnx_light.tar.xz
"""
import glob
import os
import shutil
import sys

import onnx
from onnx.backend.test.runner import Runner

out = sys.argv[1]
light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
for path in sorted(glob.glob(os.path.join(light, "light_*.onnx"))):
    name = os.path.basename(path)[:-len(".onnx")]
    model = onnx.load(path)
    data = os.path.join(out, name, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    shutil.copy(path, os.path.join(out, name, "model.onnx"))
    initializers = {i.name for i in model.graph.initializer}
    graph_inputs = [x for x in model.graph.input if x.name not in initializers]
    for k, x in enumerate(graph_inputs):  # as ONNX's runner makes them for these models
        value = Runner.generate_dummy_data(x, seed=0, name=name, random=False)
        onnx.save_tensor(onnx.numpy_helper.from_array(value, x.name), os.path.join(data, f"input_{k}.pb"))
    shutil.copy(path[:-len(".onnx")] + "_output_0.pb", os.path.join(data, "output_0.pb"))
    print(name)
