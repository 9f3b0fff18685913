#!/usr/bin/env python3
"""Writes tests/contrib_matmul/cases: ONNX Runtime's com.microsoft.FusedMatMul with transBatchA /
transBatchB (what its transpose fusion writes into a saved optimized model: an attention's head split
folded into Q.K^T and P.V, as in an nn.TransformerEncoder or a ViT exported at opset 17 and saved by
ORT at ORT_ENABLE_EXTENDED), with and without transA / transB and alpha, at ranks 3 and 4, with the
outputs ONNX Runtime (CPU) computed. Needs `python3 -m pip install onnx onnxruntime numpy`.
Deterministic."""
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from ort_case import write_case  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
RNG = np.random.default_rng(7)


def model(nodes, inputs, out_dims):
    graph = helper.make_graph(nodes, "fused_matmul",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in inputs],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_dims)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


def feeds(inputs):
    return {n: RNG.standard_normal(s).astype(np.float32) for n, s in inputs}


def fused(a, b, out, **attrs):
    return helper.make_node("FusedMatMul", [a, b], [out], domain="com.microsoft", **attrs)


def main():
    shutil.rmtree(HERE, ignore_errors=True)
    # Attention as ORT's transpose fusion leaves it: q, k, v [L, B*H, d].
    qkv = [(n, (9, 8, 16)) for n in ("q", "k", "v")]
    nodes = [fused("q", "k", "s", transBatchA=1, transBatchB=1, transB=1, alpha=0.25),
             helper.make_node("Softmax", ["s"], ["p"], axis=-1), fused("p", "v", "y", transBatchB=1)]
    write_case(HERE, "attention_trans_batch", model(nodes, qkv, [8, 9, 16]), feeds(qkv))
    # Rank 4, transBatchA with transA; transBatchB alone.
    ab = [("a", (5, 2, 3, 4)), ("b", (5, 2, 3, 7))]
    write_case(HERE, "rank4_trans_batch_and_trans", model([fused("a", "b", "y", transBatchA=1, transA=1,
                                                                 transBatchB=1)], ab, [2, 3, 4, 7]), feeds(ab))
    # Rank 3, both batch-transposed, B transposed too, a negative alpha. (ORT refuses transBatch
    # where the ranks differ or are below 3; so does onnxrun.)
    ab = [("a", (4, 6, 8)), ("b", (5, 6, 8))]
    write_case(HERE, "rank3_trans_batch_alpha", model([fused("a", "b", "y", transBatchA=1, transBatchB=1, transB=1,
                                                             alpha=-1.5)], ab, [6, 4, 5]), feeds(ab))

if __name__ == "__main__":
    main()
