"""Writes one case of the ONNX test layout for the make_cases.py scripts (tests/zipmap, tests/ml_maps,
tests/resize): a folder with model.onnx and test_data_set_0/input_i.pb (the feeds) and output_i.pb
(what ONNX Runtime's CPU provider computes for them). Needs `python3 -m pip install onnx onnxruntime numpy`."""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def tensor_proto(value, name):
    """A feed or an output as a TensorProto (object arrays of strings as str)."""
    array = np.asarray(value)
    return numpy_helper.from_array(array.astype(str) if array.dtype == object else array, name)


def write_case(root, name, model, feeds, input_proto=tensor_proto, output_proto=tensor_proto, reference=None):
    """root/name: the model, its feeds (input_proto(value, name) turns one into a proto) and ONNX
    Runtime's outputs for them (output_proto(value, name) likewise). `reference`, when given, is the
    model ONNX Runtime runs instead (one of the same inputs and outputs, of standard ops, for a model
    of ops ORT's CPU provider lacks); its outputs are returned."""
    folder = os.path.join(root, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    run = model if reference is None else reference
    session = ort.InferenceSession(run.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs = session.run(None, feeds)
    for i, meta in enumerate(session.get_inputs()):
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(input_proto(feeds[meta.name], meta.name).SerializeToString())
    for i, (meta, y) in enumerate(zip(session.get_outputs(), outputs)):
        with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
            f.write(output_proto(y, meta.name).SerializeToString())
    print(f"wrote {folder}")
    return outputs
