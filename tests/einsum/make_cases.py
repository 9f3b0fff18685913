#!/usr/bin/env python3
"""Writes tests/einsum/cases: Einsum equations as exporters write them (attention scores and values,
projections to and from heads with a weight initializer, symbolic batch and sequence dims, ellipsis
broadcasting, inner and outer products, sums before contracting, one-input transposes and sums),
with the outputs ONNX Runtime (CPU) computed, each checked against numpy's einsum here. onnxrun
lowers them to MatMul chains (partitioner/einsum_lowering.h). Needs
`python3 -m pip install onnx onnxruntime numpy`. Deterministic."""
import os
import shutil
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from ort_case import write_case  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
RNG = np.random.default_rng(5)


def output_info(rank):
    """y of `rank` symbolic dims."""
    return helper.make_tensor_value_info("y", TensorProto.FLOAT, [f"y{i}" for i in range(rank)])


def einsum_model(equation, inputs, out_rank, weights=()):
    """inputs: (name, declared dims: ints or symbols); weights: (name, array) initializers."""
    names = [n for n, _ in inputs] + [n for n, _ in weights]
    nodes = [helper.make_node("Einsum", names, ["y"], equation=equation)]
    graph = helper.make_graph(nodes, "einsum", [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in inputs],
                              [output_info(out_rank)], [numpy_helper.from_array(w, n) for n, w in weights])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def case(name, equation, shapes, declared=None, weights=()):
    """One case: random feeds of `shapes`; ORT's output checked against numpy's einsum."""
    declared = declared or shapes
    inputs = [(f"x{i}", list(d)) for i, d in enumerate(declared)]
    feeds = {f"x{i}": RNG.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    want = np.einsum(equation, *feeds.values(), *[w for _, w in weights])
    model = einsum_model(equation, inputs, want.ndim, weights)
    got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    write_case(HERE, name, model, feeds)


def attention_case():
    """Scores by einsum, softmax, values by einsum: one attention block."""
    q, k, v = ((n, [2, 3, 5, 8]) for n in ("q", "k", "v"))
    nodes = [helper.make_node("Einsum", ["q", "k"], ["s"], equation="bhqd,bhkd->bhqk"),
             helper.make_node("Softmax", ["s"], ["p"], axis=-1),
             helper.make_node("Einsum", ["p", "v"], ["y"], equation="bhqk,bhkd->bhqd")]
    graph = helper.make_graph(nodes, "attention", [helper.make_tensor_value_info(n, TensorProto.FLOAT, d)
                                                   for n, d in (q, k, v)],
                              [output_info(4)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    feeds = {n: RNG.standard_normal(d).astype(np.float32) for n, d in (q, k, v)}
    write_case(HERE, "attention_block", model, feeds)


def main():
    shutil.rmtree(HERE, ignore_errors=True)
    case("attention_scores", "bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 6, 4)])
    case("heads_in_the_middle", "bqhd,bkhd->bhqk", [(2, 5, 3, 4), (2, 6, 3, 4)],
         [("batch", "q", 3, 4), ("batch", "k", 3, 4)])
    case("projection_to_heads", "bld,dhk->blhk", [(2, 7, 6)], [("batch", "seq", 6)],
         weights=[("w", RNG.standard_normal((6, 2, 3)).astype(np.float32))])
    case("projection_from_heads", "blhk,hkd->bld", [(2, 7, 2, 3)], [("batch", "seq", 2, 3)],
         weights=[("w", RNG.standard_normal((2, 3, 5)).astype(np.float32))])
    case("ellipsis_broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (1, 5, 4, 6)])
    case("inner_product", "i,i->", [(7,), (7,)])
    case("outer_product", "i,j->ij", [(3,), (4,)])
    case("sum_before_contracting", "abc,cd->ad", [(2, 3, 4), (4, 5)])
    case("batch_vector", "bk,bkn->bn", [(3, 4), (3, 4, 5)])
    case("kept_by_both_sides_reordered", "abk,kcd->dacb", [(2, 3, 4), (4, 5, 2)])
    case("transpose", "ij->ji", [(3, 4)])
    case("sum_one_axis", "bij->bj", [(2, 3, 4)])
    case("bilinear_three_inputs", "bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)])
    attention_case()


if __name__ == "__main__":
    main()
