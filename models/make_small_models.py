#!/usr/bin/env python3
"""Builds the small models committed under models/ (seeded random weights) and their reference
outputs computed by ONNX Runtime (CPU), in the ONNX test layout:
  models/<name>/model.onnx, models/<name>/test_data_set_0/{input_0,output_0}.pb
Needs `python3 -m pip install onnx onnxruntime numpy` (test-only tools). Deterministic: rerunning
gives the same files."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def tiny_cnn(rng):
    """Conv-BN-Relu-MaxPool-Conv-Relu-GlobalAveragePool-Flatten-Gemm-Softmax, input [N,3,32,32]."""
    def w(name, *shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        w("conv1_w", 8, 3, 3, 3), w("conv1_b", 8),
        w("bn_scale", 8, scale=1.0), w("bn_bias", 8),
        w("bn_mean", 8, scale=0.1),
        numpy_helper.from_array((rng.uniform(0.5, 1.5, 8)).astype(np.float32), "bn_var"),
        w("conv2_w", 16, 8, 3, 3), w("conv2_b", 16),
        w("fc_w", 10, 16), w("fc_b", 10),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv1_w", "conv1_b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["b1"],
                         name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2_w", "conv2_b"], ["c2"], name="conv2", pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="onnxrun")
    model.ir_version = 8
    onnx.checker.check_model(model)
    inputs = [rng.standard_normal((2, 3, 32, 32)).astype(np.float32)]
    return model, inputs


def save(name, model, inputs):
    import onnxruntime as ort
    folder = os.path.join(HERE, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: x for i, x in zip(session.get_inputs(), inputs)}
    outputs = session.run(None, feeds)
    for i, x in enumerate(inputs):
        onnx.save_tensor(numpy_helper.from_array(x, session.get_inputs()[i].name),
                         os.path.join(data, f"input_{i}.pb"))
    for i, y in enumerate(outputs):
        onnx.save_tensor(numpy_helper.from_array(y, session.get_outputs()[i].name),
                         os.path.join(data, f"output_{i}.pb"))
    print(f"wrote {folder}")


if __name__ == "__main__":
    save("tiny_cnn", *tiny_cnn(np.random.default_rng(7)))
