#!/usr/bin/env python3
"""Writes tests/integer_inputs/cases: models that take integer inputs and Cast them to float, as
image models exported with uint8 pixels do (the normalisation and the first conv after the Cast),
with the outputs ONNX Runtime (CPU) computed. On the GPU the Cast runs on the device from the
integer type (no float32 detour; in fp16 plans straight to float16). Needs
`python3 -m pip install onnx onnxruntime numpy`. Deterministic."""
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from ort_case import write_case  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
RNG = np.random.default_rng(11)


def model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "integer_inputs", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def uint8_image_conv():
    """uint8 NCHW pixels -> Cast -> /255 -> (x - mean) / std -> 3x3 conv + ReLU -> global pool."""
    const = lambda name, value: numpy_helper.from_array(np.asarray(value, np.float32), name)  # noqa: E731
    inits = [const("scale", 1 / 255), const("mean", np.array([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1)),
             const("std", np.array([0.229, 0.224, 0.225]).reshape(1, 3, 1, 1)),
             const("w", RNG.normal(0, 0.2, (16, 3, 3, 3))), const("b", RNG.normal(0, 0.1, 16))]
    nodes = [helper.make_node("Cast", ["image"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["f", "scale"], ["unit"]),
             helper.make_node("Sub", ["unit", "mean"], ["centred"]),
             helper.make_node("Div", ["centred", "std"], ["x"]),
             helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("image", TensorProto.UINT8, [2, 3, 32, 48])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, 1, 1])], inits)
    pixels = RNG.integers(0, 256, (2, 3, 32, 48), dtype=np.uint8)
    pixels[0, 0, 0, :4] = [0, 1, 254, 255]  # the range's ends
    write_case(HERE, "uint8_image_conv", m, {"image": pixels})


def uint8_cast_into_stem_conv():
    """uint8 pixels Cast straight into a 3-channel conv: the Cast and the channel Pad the partitioner
    puts before such a conv are one step (on the GPU: the Cast from uint8, then the Pad)."""
    inits = [numpy_helper.from_array(RNG.normal(0, 0.01, (8, 3, 3, 3)).astype(np.float32), "w")]
    nodes = [helper.make_node("Cast", ["image"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Conv", ["f", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("image", TensorProto.UINT8, [2, 3, 16, 16])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, 16, 16])], inits)
    write_case(HERE, "uint8_cast_into_stem_conv", m, {"image": RNG.integers(0, 256, (2, 3, 16, 16), dtype=np.uint8)})


def casts_of_every_integer_type():
    """bool, int8, int32 and int64 inputs each Cast to float and summed with a float input."""
    types = {"flag": (TensorProto.BOOL, np.bool_), "small": (TensorProto.INT8, np.int8),
             "count": (TensorProto.INT32, np.int32), "index": (TensorProto.INT64, np.int64)}
    nodes, inputs, feeds, terms = [], [], {}, []
    for name, (proto_type, np_type) in types.items():
        inputs.append(helper.make_tensor_value_info(name, proto_type, [4, 6]))
        nodes.append(helper.make_node("Cast", [name], [name + "_f"], to=TensorProto.FLOAT))
        terms.append(name + "_f")
        if np_type == np.bool_:
            feeds[name] = RNG.integers(0, 2, (4, 6)).astype(np.bool_)
        else:
            info = np.iinfo(np_type)
            bound = min(info.max, 2000)  # float16 plans hold the sums (integers up to 2048 exactly)
            feeds[name] = RNG.integers(max(info.min, -bound), bound, (4, 6), dtype=np_type)
    inputs.append(helper.make_tensor_value_info("base", TensorProto.FLOAT, [4, 6]))
    feeds["base"] = RNG.uniform(-1, 1, (4, 6)).astype(np.float32)
    total = "base"
    for i, term in enumerate(terms):
        nodes.append(helper.make_node("Add", [total, term], [f"sum{i}"]))
        total = f"sum{i}"
    nodes.append(helper.make_node("Identity", [total], ["y"]))
    m = model(nodes, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])])
    write_case(HERE, "casts_of_every_integer_type", m, feeds)


def main():
    shutil.rmtree(HERE, ignore_errors=True)
    uint8_image_conv()
    uint8_cast_into_stem_conv()
    casts_of_every_integer_type()


if __name__ == "__main__":
    main()
