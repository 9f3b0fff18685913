#!/usr/bin/env python3
"""Writes tests/contrib_fusions/cases: the contrib ops ONNX Runtime's transformers optimizer writes
for Stable Diffusion on CUDA (GroupNorm, SkipGroupNorm, BiasSplitGelu, BiasAdd, NhwcConv), its
BiasDropout, and the CPU ones TransposeMatMul, ExpandDims and CDist, each alone and in one UNet-like block.
ORT registers the diffusion ops and BiasDropout on its CUDA provider only, so their reference
outputs are what ORT's CPU provider computes for the same graph written in standard ops (the
formulas of ORT's CUDA kernels), each also checked against numpy here; TransposeMatMul,
ExpandDims and CDist run in ORT itself. Needs `python3 -m pip install onnx onnxruntime numpy`.
Deterministic."""
import math
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from ort_case import write_case  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
RNG = np.random.default_rng(11)
MS = "com.microsoft"
F32, F16 = TensorProto.FLOAT, TensorProto.FLOAT16


def randn(*shape, scale=1.0, dtype=np.float32):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def model(nodes, inputs, outputs, inits=(), contrib=True):
    """inputs / outputs: (name, elem type, dims); inits: (name, array)."""
    graph = helper.make_graph(nodes, "case", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs],
                              [numpy_helper.from_array(a, n) for n, a in inits])
    opsets = [helper.make_opsetid("", 21)] + ([helper.make_opsetid(MS, 1)] if contrib else [])
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = 10
    return m


def nchw(x):
    return np.moveaxis(x, -1, 1)


def nhwc(x):
    return np.moveaxis(x, 1, -1)


def group_norm_ref(x, gamma, beta, groups, eps, silu):
    """x NCHW in float64: per sample and group the population mean and variance."""
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    mean = g.mean(axis=2, keepdims=True)
    var = g.var(axis=2, keepdims=True)
    y = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    y = y * gamma.reshape(shape) + beta.reshape(shape)
    return y / (1 + np.exp(-y)) if silu else y


def gelu_ref(x):
    return x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def conv_ref(x, w, b, stride, pad, group):
    """x NCHW, w [M, C/group, k, k], symmetric pad, float64."""
    n, c, h, wd = x.shape
    m, cg, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for o in range(m):
        gi = o // mg
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, gi * cg:(gi + 1) * cg, i * stride:i * stride + k, j * stride:j * stride + k]
                y[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    return y + (0 if b is None else b.reshape(1, m, 1, 1))


def check(got, want, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol)


def to_first(rank):
    return [0, rank - 1] + list(range(1, rank - 1))


def to_last(rank):
    return [0] + list(range(2, rank)) + [1]


def std_group_norm(x, gamma, beta, y, groups, eps, silu, channels_last, tag):
    """Standard ops for GroupNorm: [Transpose,] GroupNormalization, [Sigmoid, Mul,] [Transpose]."""
    nodes, cur = [], x
    if channels_last:
        nodes.append(helper.make_node("Transpose", [cur], [f"{tag}_t"], perm=to_first(4)))
        cur = f"{tag}_t"
    nodes.append(helper.make_node("GroupNormalization", [cur, gamma, beta], [f"{tag}_n"], num_groups=groups,
                                  epsilon=eps))
    cur = f"{tag}_n"
    if silu:
        nodes += [helper.make_node("Sigmoid", [cur], [f"{tag}_s"]),
                  helper.make_node("Mul", [cur, f"{tag}_s"], [f"{tag}_m"])]
        cur = f"{tag}_m"
    nodes.append(helper.make_node("Transpose" if channels_last else "Identity", [cur], [y],
                                  **({"perm": to_last(4)} if channels_last else {})))
    return nodes


def group_norm_case(name, dims, groups, silu, channels_last=1, eps=1e-5):
    c = dims[-1] if channels_last else dims[1]
    gamma, beta = randn(c, scale=0.5) + 1, randn(c, scale=0.3)
    x = randn(*dims, scale=2.0) + 0.5
    attrs = {"groups": groups, "activation": int(silu), "channels_last": channels_last}
    if eps != 1e-5:
        attrs["epsilon"] = eps
    inits = [("gamma", gamma), ("beta", beta)]
    io = ([("x", F32, dims)], [("y", F32, dims)])
    m = model([helper.make_node("GroupNorm", ["x", "gamma", "beta"], ["y"], domain=MS, **attrs)], *io, inits)
    ref = model(std_group_norm("x", "gamma", "beta", "y", groups, eps, silu, channels_last, "g"), *io, inits, False)
    y = write_case(HERE, name, m, {"x": x}, reference=ref)[0]
    want = group_norm_ref(nchw(x) if channels_last else x, gamma, beta, groups, eps, silu)
    check(y, nhwc(want) if channels_last else want)


def group_norm_fp16_case():
    """Stable Diffusion's fp16 form: X and Y float16, gamma and beta float32 (ORT's CUDA kernel
    takes only float32 ones). Reference: the float32 graph on X widened, rounded to float16."""
    dims, groups = [1, 6, 5, 32], 8
    gamma, beta = randn(32, scale=0.5) + 1, randn(32, scale=0.3)
    x = (randn(*dims, scale=2.0) + 0.5).astype(np.float16)
    inits = [("gamma", gamma), ("beta", beta)]
    m = model([helper.make_node("GroupNorm", ["x", "gamma", "beta"], ["y"], domain=MS, groups=groups, activation=1)],
              [("x", F16, dims)], [("y", F16, dims)], inits)
    ref_nodes = [helper.make_node("Cast", ["x"], ["x32"], to=F32)]
    ref_nodes += std_group_norm("x32", "gamma", "beta", "y32", groups, 1e-5, True, True, "g")
    ref_nodes.append(helper.make_node("Cast", ["y32"], ["y"], to=F16))
    ref = model(ref_nodes, [("x", F16, dims)], [("y", F16, dims)], inits, False)
    y = write_case(HERE, "group_norm_fp16_float_params", m, {"x": x}, reference=ref)[0]
    check(y, nhwc(group_norm_ref(nchw(x.astype(np.float64)), gamma, beta, groups, 1e-5, True)), 2e-2, 2e-2)
    with open(os.path.join(HERE, "group_norm_fp16_float_params", "tolerance.json"), "w") as f:
        f.write('{"rtol": 0.01, "atol": 0.01}\n')  # float16 output: its rounding, 2^-11 relative


def skip_group_norm_case(name, skip_dims, with_bias, with_sum, silu):
    dims, groups = [2, 4, 5, 16], 4
    gamma, beta = randn(16, scale=0.5) + 1, randn(16, scale=0.3)
    x, skip = randn(*dims), randn(*skip_dims)
    inits = [("gamma", gamma), ("beta", beta)] + ([("bias", randn(16, scale=0.5))] if with_bias else [])
    inputs = ["x", "gamma", "beta", "skip"] + (["bias"] if with_bias else [])
    outs = ["y"] + (["s"] if with_sum else [])
    io = ([("x", F32, dims), ("skip", F32, skip_dims)], [(o, F32, dims) for o in outs])
    node = helper.make_node("SkipGroupNorm", inputs, outs, domain=MS, groups=groups, activation=int(silu))
    skip_b, sum_name, ref_inits, ref_nodes = "skip", "s" if with_sum else "sum", list(inits), []
    if len(skip_dims) == 2:
        ref_nodes.append(helper.make_node("Unsqueeze", ["skip", "axes"], ["skip4"]))
        ref_inits.append(("axes", np.array([1, 2], np.int64)))
        skip_b = "skip4"
    if with_bias:
        ref_nodes += [helper.make_node("Add", ["x", "bias"], ["xb"]), helper.make_node("Add", ["xb", skip_b], [sum_name])]
    else:
        ref_nodes.append(helper.make_node("Add", ["x", skip_b], [sum_name]))
    ref_nodes += std_group_norm(sum_name, "gamma", "beta", "y", groups, 1e-5, silu, True, "g")
    got = write_case(HERE, name, model([node], *io, inits), {"x": x, "skip": skip},
                     reference=model(ref_nodes, *io, ref_inits, False))
    bias = dict(inits).get("bias", np.zeros(16, np.float32))
    s = x.astype(np.float64) + bias + (skip.reshape(2, 1, 1, 16) if len(skip_dims) == 2 else skip)
    check(got[0], nhwc(group_norm_ref(nchw(s), gamma, beta, groups, 1e-5, silu)))
    if with_sum:
        check(got[1], s)


def bias_split_gelu_case():
    dims = [2, "S", 40]
    x, bias = randn(2, 6, 40), randn(40, scale=0.5)
    io = ([("x", F32, dims)], [("y", F32, [2, "S", 20])])
    m = model([helper.make_node("BiasSplitGelu", ["x", "bias"], ["y"], domain=MS)], *io, [("bias", bias)])
    ref = model([helper.make_node("Add", ["x", "bias"], ["xb"]),
                 helper.make_node("Split", ["xb"], ["l", "r"], axis=-1, num_outputs=2),
                 helper.make_node("Gelu", ["r"], ["gr"]),
                 helper.make_node("Mul", ["l", "gr"], ["y"])], *io, [("bias", bias)], False)
    y = write_case(HERE, "bias_split_gelu", m, {"x": x}, reference=ref)[0]
    xb = x.astype(np.float64) + bias
    check(y, xb[..., :20] * gelu_ref(xb[..., 20:]))


def bias_add_case():
    dims = [2, 12, 16]
    x, skip, bias = randn(*dims), randn(*dims), randn(16)
    io = ([("x", F32, dims), ("skip", F32, dims)], [("y", F32, dims)])
    m = model([helper.make_node("BiasAdd", ["x", "bias", "skip"], ["y"], domain=MS)], *io, [("bias", bias)])
    ref = model([helper.make_node("Add", ["x", "bias"], ["xb"]), helper.make_node("Add", ["xb", "skip"], ["y"])], *io,
                [("bias", bias)], False)
    y = write_case(HERE, "bias_add", m, {"x": x, "skip": skip}, reference=ref)[0]
    check(y, x.astype(np.float64) + bias + skip)


def nhwc_conv_case(name, dims, m_out, k, stride, pad, group, with_bias):
    """W given channels-last [M, k, k, C / group], as ORT's NhwcConv fusion writes it."""
    c = dims[-1]
    w_onnx = randn(m_out, c // group, k, k, scale=1.0 / math.sqrt(c * k * k / group))
    w_nhwc = np.ascontiguousarray(np.transpose(w_onnx, (0, 2, 3, 1)))
    b = randn(m_out, scale=0.5) if with_bias else None
    x = randn(*dims)
    attrs = {"strides": [stride] * 2, "pads": [pad] * 4, "group": group, "kernel_shape": [k, k]}
    oh = (dims[1] + 2 * pad - k) // stride + 1
    ow = (dims[2] + 2 * pad - k) // stride + 1
    io = ([("x", F32, dims)], [("y", F32, [dims[0], oh, ow, m_out])])
    inputs = ["x", "w"] + (["b"] if with_bias else [])
    inits = [("b", b)] if with_bias else []
    m = model([helper.make_node("NhwcConv", inputs, ["y"], domain=MS, **attrs)], *io, [("w", w_nhwc)] + inits)
    ref = model([helper.make_node("Transpose", ["x"], ["xt"], perm=to_first(4)),
                 helper.make_node("Conv", ["xt", "w"] + inputs[2:], ["yt"], **attrs),
                 helper.make_node("Transpose", ["yt"], ["y"], perm=to_last(4))], *io, [("w", w_onnx)] + inits, False)
    y = write_case(HERE, name, m, {"x": x}, reference=ref)[0]
    check(y, nhwc(conv_ref(nchw(x.astype(np.float64)), w_onnx, b, stride, pad, group)))


def bias_dropout_case(name, with_residual, with_mask):
    dims = [3, 5, 8]
    data, bias, residual = randn(*dims), randn(8), randn(*dims)
    inputs = ["data", "bias"] + (["residual"] if with_residual else [])
    outs = ["out"] + (["mask"] if with_mask else [])
    io = ([("data", F32, dims)] + ([("residual", F32, dims)] if with_residual else []),
          [("out", F32, dims)] + ([("mask", TensorProto.BOOL, dims)] if with_mask else []))
    m = model([helper.make_node("BiasDropout", inputs, outs, domain=MS)], *io, [("bias", bias)])
    drop_out = "d" if with_residual else "out"
    ref_nodes = [helper.make_node("Add", ["data", "bias"], ["db"]),
                 helper.make_node("Dropout", ["db"], [drop_out] + outs[1:])]
    if with_residual:
        ref_nodes.append(helper.make_node("Add", ["d", "residual"], ["out"]))
    feeds = {"data": data, **({"residual": residual} if with_residual else {})}
    got = write_case(HERE, name, m, feeds, reference=model(ref_nodes, *io, [("bias", bias)], False))
    check(got[0], data.astype(np.float64) + bias + (residual if with_residual else 0))
    if with_mask:
        assert got[1].dtype == np.bool_ and got[1].all()


def transpose_matmul_case():
    a, b = randn(2, 7, 5), randn(2, 4, 7)
    m = model([helper.make_node("TransposeMatMul", ["a", "b"], ["y"], domain=MS, transA=1, transB=1, alpha=0.5)],
              [("a", F32, [2, 7, 5]), ("b", F32, [2, 4, 7])], [("y", F32, [2, 5, 4])])
    y = write_case(HERE, "transpose_matmul", m, {"a": a, "b": b})[0]
    check(y, 0.5 * np.swapaxes(a, 1, 2).astype(np.float64) @ np.swapaxes(b, 1, 2))


def expand_dims_case(name, axis):
    x = randn(3, 4)
    out_dims = list(np.expand_dims(x, axis).shape)
    m = model([helper.make_node("ExpandDims", ["x", "axis"], ["y"], domain=MS)], [("x", F32, [3, 4])],
              [("y", F32, out_dims)], [("axis", np.array(axis, np.int32))])
    y = write_case(HERE, name, m, {"x": x})[0]
    check(y, np.expand_dims(x, axis))


def cdist_case(name, metric):
    """ORT's CPU kernel runs it: -2 A B^T + |a|^2 + |b|^2, its absolute value (square root)."""
    a, b = randn(5, 7), randn(4, 7)
    if metric != "euclidean":  # a square root would blow the formula's cancellation up to ~1e-3
        b[1] = a[2]  # one pair of equal rows: a distance of (about) zero
    attrs = {} if metric is None else {"metric": metric}
    m = model([helper.make_node("CDist", ["a", "b"], ["c"], domain=MS, **attrs)], [("a", F32, [5, 7]), ("b", F32, [4, 7])],
              [("c", F32, [5, 4])])
    c = write_case(HERE, name, m, {"a": a, "b": b})[0]
    sq = ((a[:, None, :].astype(np.float64) - b[None, :, :]) ** 2).sum(axis=2)
    check(c, np.sqrt(sq) if metric == "euclidean" else sq, 1e-4, 1e-3 if metric == "euclidean" else 1e-4)


def unet_block_case():
    """GroupNorm + SiLU -> NhwcConv 3x3 -> SkipGroupNorm (skip = the block input, sum out) ->
    a projection MatMul -> BiasSplitGelu -> BiasAdd onto the sum, as a diffusion UNet's resnet and
    feed-forward blocks chain them after ORT's optimizer."""
    c = 32
    g1, b1, g2, b2 = randn(c, scale=0.3) + 1, randn(c, scale=0.2), randn(c, scale=0.3) + 1, randn(c, scale=0.2)
    w_onnx = randn(c, c, 3, 3, scale=1.0 / math.sqrt(9 * c))
    conv_b, proj, split_b, add_b = randn(c, scale=0.2), randn(c, 2 * c, scale=1.0 / math.sqrt(c)), randn(2 * c), randn(c)
    shape_nsc = np.array([1, 64, c], np.int64)
    x = randn(1, 8, 8, c)
    common = [("g1", g1), ("b1", b1), ("g2", g2), ("b2", b2), ("conv_b", conv_b), ("proj", proj),
              ("split_b", split_b), ("add_b", add_b), ("nsc", shape_nsc)]
    io = ([("x", F32, [1, 8, 8, c])], [("y", F32, [1, 64, c])])
    contrib = [helper.make_node("GroupNorm", ["x", "g1", "b1"], ["h1"], domain=MS, groups=8, activation=1),
               helper.make_node("NhwcConv", ["h1", "w", "conv_b"], ["h2"], domain=MS, pads=[1] * 4, kernel_shape=[3, 3]),
               helper.make_node("SkipGroupNorm", ["h2", "g2", "b2", "x"], ["h3", "s"], domain=MS, groups=8,
                                activation=0),
               helper.make_node("Reshape", ["h3", "nsc"], ["h3r"]),
               helper.make_node("Reshape", ["s", "nsc"], ["sr"]),
               helper.make_node("MatMul", ["h3r", "proj"], ["p"]),
               helper.make_node("BiasSplitGelu", ["p", "split_b"], ["ff"], domain=MS),
               helper.make_node("BiasAdd", ["ff", "add_b", "sr"], ["y"], domain=MS)]
    w_nhwc = np.ascontiguousarray(np.transpose(w_onnx, (0, 2, 3, 1)))
    std = std_group_norm("x", "g1", "b1", "h1", 8, 1e-5, True, True, "a")
    std += [helper.make_node("Transpose", ["h1"], ["h1t"], perm=to_first(4)),
            helper.make_node("Conv", ["h1t", "w", "conv_b"], ["h2t"], pads=[1] * 4, kernel_shape=[3, 3]),
            helper.make_node("Transpose", ["h2t"], ["h2"], perm=to_last(4)),
            helper.make_node("Add", ["h2", "x"], ["s"])]
    std += std_group_norm("s", "g2", "b2", "h3", 8, 1e-5, False, True, "b")
    std += [helper.make_node("Reshape", ["h3", "nsc"], ["h3r"]), helper.make_node("Reshape", ["s", "nsc"], ["sr"]),
            helper.make_node("MatMul", ["h3r", "proj"], ["p"]), helper.make_node("Add", ["p", "split_b"], ["pb"]),
            helper.make_node("Split", ["pb"], ["l", "r"], axis=-1, num_outputs=2),
            helper.make_node("Gelu", ["r"], ["gr"]), helper.make_node("Mul", ["l", "gr"], ["ff"]),
            helper.make_node("Add", ["ff", "add_b"], ["ffb"]), helper.make_node("Add", ["ffb", "sr"], ["y"])]
    y = write_case(HERE, "unet_block", model(contrib, *io, [("w", w_nhwc)] + common), {"x": x},
                   reference=model(std, *io, [("w", w_onnx)] + common, False))[0]
    x64 = x.astype(np.float64)
    h1 = group_norm_ref(nchw(x64), g1, b1, 8, 1e-5, True)
    s = nhwc(conv_ref(h1, w_onnx, conv_b, 1, 1, 1)) + x64
    h3 = nhwc(group_norm_ref(nchw(s), g2, b2, 8, 1e-5, False)).reshape(1, 64, c)
    pb = h3 @ proj + split_b
    check(y, pb[..., :c] * gelu_ref(pb[..., c:]) + add_b + s.reshape(1, 64, c), 1e-4, 1e-4)


def main():
    shutil.rmtree(HERE, ignore_errors=True)
    group_norm_case("group_norm_nhwc_silu", [2, 5, 6, 32], 8, True)
    group_norm_case("group_norm_nhwc_one_group", [1, 3, 4, 12], 1, False)
    group_norm_case("group_norm_nchw_epsilon", [1, 16, 7, 5], 4, False, channels_last=0, eps=1e-3)
    group_norm_case("group_norm_nchw_silu", [2, 8, 3, 3], 2, True, channels_last=0)
    group_norm_fp16_case()
    skip_group_norm_case("skip_group_norm_bias_sum_silu", [2, 4, 5, 16], True, True, True)
    skip_group_norm_case("skip_group_norm_skip_nc", [2, 16], False, False, False)
    skip_group_norm_case("skip_group_norm_skip_n11c_bias", [2, 1, 1, 16], True, True, False)
    bias_split_gelu_case()
    bias_add_case()
    nhwc_conv_case("nhwc_conv_3x3_stride2_bias", [2, 9, 8, 6], 8, 3, 2, 1, 1, True)
    nhwc_conv_case("nhwc_conv_grouped", [1, 6, 6, 8], 8, 3, 1, 1, 2, True)
    nhwc_conv_case("nhwc_conv_1x1", [1, 5, 4, 16], 12, 1, 1, 0, 1, False)
    bias_dropout_case("bias_dropout_residual_mask", True, True)
    bias_dropout_case("bias_dropout_plain", False, False)
    transpose_matmul_case()
    expand_dims_case("expand_dims_negative_axis", -1)
    expand_dims_case("expand_dims_axis1", 1)
    cdist_case("cdist_sqeuclidean_default", None)
    cdist_case("cdist_euclidean", "euclidean")
    unet_block_case()


if __name__ == "__main__":
    main()
