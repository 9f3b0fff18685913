#!/usr/bin/env python3
"""Writes tests/declared_dims/cases: models whose declared input and output shapes use the forms
PaddlePaddle's exports (paddle2onnx) write, with the outputs ONNX Runtime (CPU) computed: -1 for an
unknown dim (rapidocr's PP-OCR classifier: x is [-1, 3, 48, 192]) and "?" as the name of every unknown
dim ([-1, 3, '?', '?']: a non-square image must run, "?" is not one symbol all of them equal).
Needs `python3 -m pip install onnx onnxruntime numpy`. Deterministic."""
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from ort_case import write_case  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
RNG = np.random.default_rng(7)


def value_info(name, dims):
    """A float tensor's declaration; ints are dim_value (-1 included), strings dim_param."""
    info = helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
    for d in dims:
        dim = info.type.tensor_type.shape.dim.add()
        if isinstance(d, str):
            dim.dim_param = d
        else:
            dim.dim_value = d
    return info


def model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "declared_dims", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 7
    return m


def uniform(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def main():
    shutil.rmtree(HERE, ignore_errors=True)
    # -1 as the batch dim, fed a batch of 2.
    write_case(HERE, "minus_one_batch",
               model([helper.make_node("Relu", ["x"], ["y"])], [value_info("x", [-1, 3])],
                     [value_info("y", [-1, 3])]),
               {"x": uniform(2, 3)})
    # A PP-OCR-like head: [-1, 3, '?', '?'] through a conv, fed a 2x3x8x12 image.
    w = numpy_helper.from_array(uniform(4, 3, 3, 3), "w")
    b = numpy_helper.from_array(uniform(4), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    write_case(HERE, "question_mark_dims_conv",
               model(nodes, [value_info("x", [-1, 3, "?", "?"])], [value_info("y", [-1, 4, "?", "?"])], [w, b]),
               {"x": uniform(2, 3, 8, 12)})
    # "?" across two inputs of different sizes: [?, ?] + [?] broadcast.
    write_case(HERE, "question_mark_dims_two_inputs",
               model([helper.make_node("Add", ["a", "v"], ["y"])], [value_info("a", ["?", "?"]), value_info("v", ["?"])],
                     [value_info("y", ["?", "?"])]),
               {"a": uniform(3, 5), "v": uniform(5)})


if __name__ == "__main__":
    main()
