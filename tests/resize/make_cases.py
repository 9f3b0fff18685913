#!/usr/bin/env python3
"""Writes tests/resize/cases: nearest Resize and Upsample nodes where the choice of source pixel
depends on how the coordinate is rounded, with the outputs ONNX Runtime (CPU) computed: Resize-10 and
Upsample (opset 9, 7) enlarging by 3 and 4 and shrinking by 0.6 (floor when enlarging, ceil when
shrinking) and to a size torch wrote as float32 scales (the output size is floor of a float32 product), and Resize-13 with nearest_mode floor at torch's scale 1/3 (0.33333334, whose float32
quotient lands on the integer a double one misses) and 0.6, asymmetric and half_pixel. Each input
holds its element's index, so a wrong pixel is a wrong value.
Needs `python3 -m pip install onnx onnxruntime numpy`. Deterministic."""
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from ort_case import write_case  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")


def model(opset, node, x_shape, scales, initializers=()):
    y_shape = [int(np.floor(np.float32(d) * np.float32(s))) for d, s in zip(x_shape, scales)]
    graph = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7 if opset >= 10 else (4 if opset >= 9 else 3)  # initializers as inputs before IR 4
    return m


def scales_tensor(values):
    return helper.make_tensor("scales", TensorProto.FLOAT, [len(values)], values)


def index_input(shape):
    return {"x": np.arange(np.prod(shape), dtype=np.float32).reshape(shape)}


def old_nearest(name, opset, op, shape, scales):
    """Resize-10 (X, scales) or Upsample-9 (X, scales) or Upsample-7 (scales attribute), nearest."""
    if opset == 7:
        node = helper.make_node(op, ["x"], ["y"], mode="nearest", scales=scales)
        write_case(HERE, name, model(opset, node, shape, scales), index_input(shape))
        return
    node = helper.make_node(op, ["x", "scales"], ["y"], mode="nearest")
    write_case(HERE, name, model(opset, node, shape, scales, [scales_tensor(scales)]), index_input(shape))


def floor_resize(name, shape, scales, ctm):
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest", nearest_mode="floor",
                            coordinate_transformation_mode=ctm)
    write_case(HERE, name, model(13, node, shape, scales, [scales_tensor(scales)]), index_input(shape))


def main():
    shutil.rmtree(HERE, ignore_errors=True)
    old_nearest("resize10_nearest_x3", 10, "Resize", [1, 1, 4, 4], [1, 1, 3, 3])
    old_nearest("resize10_nearest_x4_x2p5", 10, "Resize", [1, 2, 3, 4], [1, 1, 4, 2.5])
    old_nearest("resize10_nearest_shrink_0p6", 10, "Resize", [1, 1, 10, 10], [1, 1, 0.6, 0.6])
    old_nearest("upsample9_nearest_x3", 9, "Upsample", [1, 1, 4, 4], [1, 1, 3, 3])
    old_nearest("upsample7_nearest_x4", 7, "Upsample", [1, 1, 3, 3], [1.0, 1.0, 4.0, 4.0])
    # torch's exporter writes F.interpolate(size=(10, 13)) of a 7x9 map at opsets 9-10 as float32
    # scales: 9 * 1.4444444 is 13 in float32 (ORT's and torch's output size), 12.99999976 in double.
    to_10x13 = [1.0, 1.0, float(np.float32(10 / 7)), float(np.float32(13 / 9))]
    old_nearest("upsample9_nearest_to_10x13", 9, "Upsample", [1, 3, 7, 9], to_10x13)
    old_nearest("resize10_nearest_to_10x13", 10, "Resize", [1, 3, 7, 9], to_10x13)
    third = float(np.float32(1 / 3))
    floor_resize("resize13_floor_third_asymmetric", [1, 2, 15, 15], [1, 1, third, third], "asymmetric")
    floor_resize("resize13_floor_0p6_asymmetric", [1, 1, 10, 10], [1, 1, 0.6, 0.6], "asymmetric")
    floor_resize("resize13_floor_0p6_half_pixel", [1, 1, 10, 10], [1, 1, 0.6, 0.6], "half_pixel")


if __name__ == "__main__":
    main()
