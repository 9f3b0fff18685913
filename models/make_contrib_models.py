#!/usr/bin/env python3
"""Builds the models under models/ that carry ONNX Runtime's contrib ops, with outputs computed by
ONNX Runtime (CPU), in the ONNX test layout (see make_small_models.py):
  ort_contrib_ops: the BERT fusions ORT's transformers optimizer writes (EmbedLayerNormalization,
    Attention with 1-D / 2-D / 3-D masks, unidirectional and attention_bias,
    MultiHeadAttention, SkipLayerNormalization and its simplified
    form, the GELU forms, FusedMatMul, ORT's SimplifiedLayerNormalization), its fused
    CNN ops (FusedConv, FusedGemm) and its dynamic-quantized matmuls (DynamicQuantizeMatMul,
    MatMulIntegerToFloat, QGemm), the channels_last QLinear forms and the rarer ones
    (QLinearWhere, contrib Q/DQ per axis), what quantize_dynamic makes of an optimized BERT
    (QAttention, QEmbedLayerNormalization), MultiHeadAttention over a KV cache and over
    projected cross-attention keys, and Attention with past / present, written node by node;
  ort_quantized_cnn: a small residual CNN with squeeze-excite, concat and pooling, quantized by
    ORT's own quantizer (quantize_static, QOperator format: QLinearConv, QLinearAdd, QLinearMul,
    QLinearSigmoid, QLinearLeakyRelu, QLinearConcat, QLinearAveragePool,
    QLinearGlobalAveragePool, QGemm, QLinearSoftmax), as the ONNX model zoo's int8 models are;
  ort_bert_optimized: a 2-layer BERT (hidden 32) from Hugging Face transformers, exported by
    torch.onnx (opset 13) and fused by ORT's transformers optimizer (EmbedLayerNormalization,
    Attention, SkipLayerNormalization, BiasGelu), as ORT users ship BERT;
  ort_bert_quantized: that BERT quantized by ORT's quantize_dynamic (QAttention,
    QEmbedLayerNormalization, MatMulInteger), as optimum's "optimize, then quantize" writes it;
  ort_matmul_nbits: an MLP quantized by ORT's weight-only quantizer (MatMulNBits, as ORT's and
    onnxruntime-genai's int4 LLMs carry it) and hand-written 8-, 2- and 4-bit MatMulNBits forms.
Needs `python3 -m pip install onnx onnxruntime numpy sympy` and, for ort_bert_optimized, a Python
with torch and transformers (4.30 works with Debian's torch 1.13; EXPORT_PYTHON names it, default
/usr/bin/python3). Deterministic: rerunning gives the same files."""
import os
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from make_small_models import save

MS = "com.microsoft"


def weights(rng, items):
    """items: (name, shape, scale) float32, or (name, array) as is."""
    out = []
    for item in items:
        if len(item) == 2:
            out.append(numpy_helper.from_array(item[1], item[0]))
        else:
            out.append(numpy_helper.from_array((rng.standard_normal(item[1]) * item[2]).astype(np.float32), item[0]))
    return out


def bert_part(rng, node):
    hidden, heads, ffn = 32, 4, 64
    inits = weights(rng, [
        ("word", (50, hidden), 0.5), ("pos", (16, hidden), 0.5), ("seg", (2, hidden), 0.5),
        ("ln0_g", (hidden,), 1.0), ("ln0_b", (hidden,), 0.1),
        ("qkv_w", (hidden, 3 * hidden), 0.2), ("qkv_b", (3 * hidden,), 0.1),
        ("ln1_g", (hidden,), 1.0), ("ln1_b", (hidden,), 0.1), ("ln1_bias", (hidden,), 0.1),
        ("ffn1_w", (hidden, ffn), 0.2), ("ffn1_b", (ffn,), 0.1),
        ("ffn2_w", (ffn, hidden), 0.1), ("ffn2_b", (hidden,), 0.1),
        ("ln2_g", (hidden,), 1.0), ("rms_g", (hidden,), 1.0),
        ("qkv2_w", (hidden, 3 * hidden), 0.2), ("proj_w", (hidden, 24), 0.2)])
    nodes = [
        node("EmbedLayerNormalization", ["input_ids", "segment_ids", "word", "pos", "seg", "ln0_g", "ln0_b", "mask"],
             ["emb", "mask_index", "emb_sum"], domain=MS, name="embed", epsilon=1e-12),
        node("Attention", ["emb", "qkv_w", "qkv_b", "mask_index"], ["att"], domain=MS, name="attention_1d",
             num_heads=heads),
        node("SkipLayerNormalization", ["att", "emb", "ln1_g", "ln1_b", "ln1_bias"], ["ln1", "", "", "res1"],
             domain=MS, name="skip_ln", epsilon=1e-12),
        node("MatMul", ["ln1", "ffn1_w"], ["h"], name="ffn1"),
        node("FastGelu", ["h", "ffn1_b"], ["g_fast"], domain=MS, name="fast_gelu"),
        node("BiasGelu", ["h", "ffn1_b"], ["g_bias"], domain=MS, name="bias_gelu"),
        node("Gelu", ["h"], ["g_plain"], domain=MS, name="gelu"),
        node("QuickGelu", ["h"], ["g_quick"], domain=MS, name="quick_gelu", alpha=1.5),
        node("Sum", ["g_fast", "g_bias", "g_plain", "g_quick"], ["g"], name="sum_gelus"),
        node("MatMul", ["g", "ffn2_w"], ["f"], name="ffn2"),
        node("Add", ["f", "ffn2_b"], ["f_b"], name="ffn2_bias"),
        node("Add", ["f_b", "res1"], ["f_res"], name="residual"),
        node("SkipSimplifiedLayerNormalization", ["f_res", "ln1", "ln2_g"], ["ln2"], domain=MS, name="skip_rms",
             epsilon=1e-6),
        node("SimplifiedLayerNormalization", ["ln2", "rms_g"], ["rms"], name="rms", epsilon=1e-5),
        node("Attention", ["rms", "qkv2_w", "", "mask"], ["causal"], domain=MS, name="attention_2d_causal",
             num_heads=2, unidirectional=1, scale=0.3),
        node("FusedMatMul", ["causal", "proj_w"], ["bert_out"], domain=MS, name="fused_matmul", alpha=0.5),
        node("FusedMatMul", ["causal", "emb_sum"], ["scores"], domain=MS, name="fused_matmul_t", transB=1),
    ]
    batch, seq = 2, 7
    ids = rng.integers(0, 50, (batch, seq)).astype(np.int32)
    segments = (np.arange(seq)[None, :] >= 4).astype(np.int32).repeat(batch, 0)
    mask = np.ones((batch, seq), np.int32)
    mask[1, 5:] = 0
    inputs = [("input_ids", ids, ["N", "S"]), ("segment_ids", segments, ["N", "S"]), ("mask", mask, ["N", "S"])]
    outputs = [("bert_out", TensorProto.FLOAT), ("scores", TensorProto.FLOAT), ("mask_index", TensorProto.INT32)]
    return nodes, inits, inputs, outputs


def cnn_part(rng, node):
    inits = weights(rng, [("c1_w", (8, 3, 3, 3), 0.3), ("c1_b", (8,), 0.1), ("c2_w", (8, 8, 3, 3), 0.2),
                          ("c3_w", (8, 8, 1, 1), 0.3), ("c4_w", (8, 8, 1, 1), 0.3),
                          ("fc_w", (5, 8), 0.3), ("fc_b", (5,), 0.1)])
    nodes = [
        node("FusedConv", ["image", "c1_w", "c1_b"], ["a1"], domain=MS, name="conv_relu", activation="Relu",
             pads=[1, 1, 1, 1]),
        node("FusedConv", ["a1", "c2_w", "", "a1"], ["a2"], domain=MS, name="conv_add_leaky", activation="LeakyRelu",
             activation_params=[0.2], pads=[1, 1, 1, 1]),
        node("FusedConv", ["a2", "c3_w"], ["a3"], domain=MS, name="conv_clip", activation="Clip",
             activation_params=[-0.5, 1.0]),
        node("FusedConv", ["a3", "c4_w"], ["a4"], domain=MS, name="conv_hardsigmoid", activation="HardSigmoid",
             activation_params=[0.3, 0.4], strides=[2, 2]),
        node("GlobalAveragePool", ["a4"], ["pooled"], name="gap"),
        node("Flatten", ["pooled"], ["flat"], name="flatten"),
        node("FusedGemm", ["flat", "fc_w", "fc_b"], ["cnn_out"], domain=MS, name="gemm_leaky", transB=1,
             activation="LeakyRelu", activation_alpha=0.1),
    ]
    image = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    return nodes, inits, [("image", image, ["N", 3, 8, 8])], [("cnn_out", TensorProto.FLOAT)]


def quantized_matmul_part(rng, node):
    b = rng.integers(-100, 100, (16, 8)).astype(np.int8)
    inits = weights(rng, [
        ("qb", b), ("qb_t", np.ascontiguousarray(b.T)),
        ("qb_scale", (rng.uniform(0.01, 0.02, 8)).astype(np.float32)),
        ("qb_zero", rng.integers(-3, 3, 8).astype(np.int8)),
        ("q_bias", (8,), 0.5), ("q_c", rng.integers(-500, 500, 8).astype(np.int32)),
        ("q_y_scale", np.array(0.05, np.float32)), ("q_y_zero", np.array(120, np.uint8)),
        ("qb_scale1", np.array(0.015, np.float32)), ("qb_zero1", np.array(2, np.int8))])
    nodes = [
        node("DynamicQuantizeMatMul", ["features", "qb", "qb_scale", "qb_zero", "q_bias"], ["dqmm"], domain=MS,
             name="dynamic_quantize_matmul"),
        node("DynamicQuantizeLinear", ["features"], ["qa", "qa_scale", "qa_zero"], name="quantize_features"),
        node("MatMulIntegerToFloat", ["qa", "qb", "qa_scale", "qb_scale", "qa_zero", "qb_zero", "q_bias"], ["mmitf"],
             domain=MS, name="matmul_integer_to_float"),
        node("QGemm", ["qa", "qa_scale", "qa_zero", "qb_t", "qb_scale1", "qb_zero1", "q_c", "q_y_scale", "q_y_zero"],
             ["qgemm_q"], domain=MS, name="qgemm_requantized", transB=1, alpha=0.75),
        node("QGemm", ["qa", "qa_scale", "qa_zero", "qb", "qb_scale", "qb_zero"], ["qgemm_f"], domain=MS,
             name="qgemm_float"),
    ]
    features = rng.standard_normal((3, 16)).astype(np.float32)
    outputs = [("dqmm", TensorProto.FLOAT), ("mmitf", TensorProto.FLOAT), ("qgemm_q", TensorProto.UINT8),
               ("qgemm_f", TensorProto.FLOAT)]
    return nodes, inits, [("features", features, ["M", 16])], outputs


def quantized_nhwc_part(rng, node):
    """The channels_last forms and the rarer QLinear ops on an NHWC uint8 image."""
    u8 = lambda v: np.array(v, np.uint8)
    f32 = lambda v: np.array(v, np.float32)
    inits = weights(rng, [
        ("nhwc_w", rng.integers(-60, 60, (6, 3, 3, 3)).astype(np.int8)), ("nhwc_w_scale", f32(0.02)),
        ("nhwc_w_zero", np.array(0, np.int8)), ("x_scale", f32(0.03)), ("x_zero", u8(128)),
        ("y_scale", f32(0.05)), ("y_zero", u8(100)), ("pool_scale", f32(0.04)), ("pool_zero", u8(90)),
        ("mean_scale", f32(0.02)), ("mean_zero", u8(130)), ("where_scale", f32(0.06)), ("where_zero", u8(110)),
        ("qdq_scale", f32([0.1, 0.2, 0.05])), ("qdq_zero", u8([120, 128, 136]))])
    nodes = [
        node("QuantizeLinear", ["nhwc", "x_scale", "x_zero"], ["q_nhwc"], domain=MS, name="quantize_ms"),
        node("QLinearConv", ["q_nhwc", "x_scale", "x_zero", "nhwc_w", "nhwc_w_scale", "nhwc_w_zero", "y_scale",
                             "y_zero"], ["q_conv"], domain=MS, name="qconv_nhwc", channels_last=1, pads=[1, 1, 1, 1]),
        node("QLinearAveragePool", ["q_conv", "y_scale", "y_zero", "pool_scale", "pool_zero"], ["q_pool"], domain=MS,
             name="qavgpool_nhwc", channels_last=1, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
             count_include_pad=0),
        node("QLinearGlobalAveragePool", ["q_pool", "pool_scale", "pool_zero", "mean_scale", "mean_zero"], ["q_gap"],
             domain=MS, name="qgap_nhwc", channels_last=1),
        node("QLinearGlobalAveragePool", ["q_conv", "y_scale", "y_zero", "mean_scale", "mean_zero"], ["q_mean"],
             domain=MS, name="qgap_nhwc_2", channels_last=1),
        node("Greater", ["q_mean", "q_gap"], ["bigger"], name="greater"),
        node("QLinearWhere", ["bigger", "q_mean", "mean_scale", "mean_zero", "q_gap", "mean_scale", "mean_zero",
                              "where_scale", "where_zero"], ["q_where"], domain=MS, name="qwhere"),
        node("DequantizeLinear", ["q_where", "where_scale", "where_zero"], ["nhwc_out"], domain=MS, name="dq_ms"),
        node("QuantizeLinear", ["nhwc", "qdq_scale", "qdq_zero"], ["q_axis"], domain=MS, name="quantize_axis", axis=3),
        node("DequantizeLinear", ["q_axis", "qdq_scale", "qdq_zero"], ["axis_out"], domain=MS, name="dq_axis",
             axis=3),
    ]
    image = rng.standard_normal((2, 9, 9, 3)).astype(np.float32) * 2
    return nodes, inits, [("nhwc", image, ["N", 9, 9, 3])], [("nhwc_out", TensorProto.FLOAT),
                                                              ("axis_out", TensorProto.FLOAT)]


def attention_masks_part(rng, node):
    """Attention with a 3-D mask and attention_bias, qkv_hidden_sizes with a wider V; MultiHeadAttention
    across to a longer memory with bias and a 2-D or 1-D key padding mask, and causal on itself."""
    inits = weights(rng, [("att3_w", (16, 40), 0.3), ("att3_b", (40,), 0.1), ("att_bias", (1, 2, 5, 5), 1.0),
                          ("mask3", (rng.uniform(size=(2, 5, 5)) > 0.3).astype(np.int32))])
    inits += weights(rng, [("mha_bias", (48,), 0.2), ("kv_w", (16, 16), 0.3),
                           ("key_mask", np.array([[1, 1, 1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1]], np.int32)),
                           ("key_lengths", np.array([3, 8], np.int32))])
    nodes = [node("Attention", ["tokens", "att3_w", "att3_b", "mask3", "", "att_bias"], ["att3_out"], domain=MS,
                  name="attention_3d_bias", num_heads=2, qkv_hidden_sizes=[12, 12, 16]),
             node("MatMul", ["memory", "kv_w"], ["memory_v"], name="value_projection"),
             node("MultiHeadAttention", ["tokens", "memory", "memory_v", "mha_bias", "key_mask"], ["mha_out"],
                  domain=MS, name="mha_cross_masked", num_heads=4),
             node("MultiHeadAttention", ["tokens", "memory", "memory_v", "", "key_lengths"], ["mha_lengths_out"],
                  domain=MS, name="mha_key_lengths", num_heads=2, scale=0.2),
             node("MultiHeadAttention", ["tokens", "tokens", "tokens"], ["mha_self_out"], domain=MS,
                  name="mha_self_causal", num_heads=4, unidirectional=1)]
    tokens = rng.standard_normal((2, 5, 16)).astype(np.float32)
    memory = rng.standard_normal((2, 8, 16)).astype(np.float32)
    return nodes, inits, [("tokens", tokens, [2, 5, 16]), ("memory", memory, [2, 8, 16])], [
        ("att3_out", TensorProto.FLOAT), ("mha_out", TensorProto.FLOAT), ("mha_lengths_out", TensorProto.FLOAT),
        ("mha_self_out", TensorProto.FLOAT)]


def quantized_attention_part(rng, node):
    """What ORT's quantize_dynamic makes of an optimized BERT: QAttention (per-column weight scale and
    zero point with a 2-D mask; per-tensor, unidirectional, with a 1-D mask) on an input from
    DynamicQuantizeLinear, and QEmbedLayerNormalization (uint8 tables, gamma and beta)."""
    u8 = lambda shape: rng.integers(0, 256, shape).astype(np.uint8)
    f32 = lambda v: np.array(v, np.float32)
    inits = weights(rng, [
        # 7-bit weights: ORT's u8 x s8 kernels without VNNI saturate int16 pair sums of full-range ones
        ("qatt_w", rng.integers(-63, 64, (16, 48)).astype(np.int8)), ("qatt_b", (48,), 0.1),
        ("qatt_w_scale", rng.uniform(0.005, 0.02, 48).astype(np.float32)),
        ("qatt_w_zero", rng.integers(-4, 4, 48).astype(np.int8)), ("qatt_w_scale1", f32(0.01)),
        ("qatt_mask2", np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)),
        ("qatt_lengths", np.array([4, 2], np.int32)),
        ("qe_word", u8((20, 16))), ("qe_pos", u8((8, 16))), ("qe_seg", u8((2, 16))), ("qe_gamma", u8(16)),
        ("qe_beta", u8(16)), ("qe_word_s", f32(0.01)), ("qe_pos_s", f32(0.02)), ("qe_seg_s", f32(0.015)),
        ("qe_gamma_s", f32(0.008)), ("qe_beta_s", f32(0.002)), ("qe_word_z", np.array(128, np.uint8)),
        ("qe_pos_z", np.array(120, np.uint8)), ("qe_seg_z", np.array(130, np.uint8)),
        ("qe_gamma_z", np.array(0, np.uint8)), ("qe_beta_z", np.array(128, np.uint8))])
    nodes = [
        node("DynamicQuantizeLinear", ["q_tokens"], ["q_tokens_u8", "q_tokens_scale", "q_tokens_zero"],
             name="quantize_tokens"),
        node("QAttention", ["q_tokens_u8", "qatt_w", "qatt_b", "q_tokens_scale", "qatt_w_scale", "qatt_mask2",
                            "q_tokens_zero", "qatt_w_zero"], ["qatt_out"], domain=MS, name="qattention_per_column",
             num_heads=4),
        node("QAttention", ["q_tokens_u8", "qatt_w", "qatt_b", "q_tokens_scale", "qatt_w_scale1", "qatt_lengths",
                            "q_tokens_zero"], ["qatt_causal_out"], domain=MS, name="qattention_causal",
             num_heads=2, unidirectional=1),
        node("QEmbedLayerNormalization", ["q_ids", "q_segments", "qe_word", "qe_pos", "qe_seg", "qe_gamma", "qe_beta",
                                          "q_ids_mask", "qe_word_s", "qe_pos_s", "qe_seg_s", "qe_gamma_s", "qe_beta_s",
                                          "qe_word_z", "qe_pos_z", "qe_seg_z", "qe_gamma_z", "qe_beta_z"],
             ["qembed_out", "qembed_mask_index"], domain=MS, name="qembed_layernorm", epsilon=1e-5),
    ]
    tokens = rng.standard_normal((2, 5, 16)).astype(np.float32)
    ids = rng.integers(0, 20, (2, 5)).astype(np.int32)
    segments = (np.arange(5)[None, :] >= 3).astype(np.int32).repeat(2, 0)
    mask = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], np.int32)
    return nodes, inits, [("q_tokens", tokens, [2, 5, 16]), ("q_ids", ids, [2, 5]), ("q_segments", segments, [2, 5]),
                          ("q_ids_mask", mask, [2, 5])], [
        ("qatt_out", TensorProto.FLOAT), ("qatt_causal_out", TensorProto.FLOAT), ("qembed_out", TensorProto.FLOAT),
        ("qembed_mask_index", TensorProto.INT32)]


def mha_cache_part(rng, node):
    """MultiHeadAttention as ORT's optimizer writes seq2seq decoders: self-attention over a KV cache
    (past_key / past_value in, present_key / present_value out, bias, a 2-D padding mask over past
    and new keys, unidirectional), and cross attention over projected [B, heads, L, H] keys and
    values (bias on the query only)."""
    inits = weights(rng, [("mha_cache_bias", (48,), 0.2),
                          ("cache_mask", np.array([[0, 0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]], np.int32))])
    nodes = [node("MultiHeadAttention", ["dec_q", "dec_k", "dec_v", "mha_cache_bias", "cache_mask", "", "dec_past_k",
                                         "dec_past_v"], ["dec_self_out", "dec_present_k", "dec_present_v"], domain=MS,
                  name="mha_self_with_past", num_heads=2, unidirectional=1),
             node("MultiHeadAttention", ["dec_q", "enc_k", "enc_v", "mha_cache_bias"], ["dec_cross_out"], domain=MS,
                  name="mha_cross_projected", num_heads=2)]
    f32 = lambda shape: rng.standard_normal(shape).astype(np.float32)
    inputs = [("dec_q", f32((2, 3, 16)), [2, 3, 16]), ("dec_k", f32((2, 3, 16)), [2, 3, 16]),
              ("dec_v", f32((2, 3, 16)), [2, 3, 16]), ("dec_past_k", f32((2, 2, 4, 8)), [2, 2, "past", 8]),
              ("dec_past_v", f32((2, 2, 4, 8)), [2, 2, "past", 8]), ("enc_k", f32((2, 2, 6, 8)), [2, 2, 6, 8]),
              ("enc_v", f32((2, 2, 6, 8)), [2, 2, 6, 8])]
    return nodes, inits, inputs, [("dec_self_out", TensorProto.FLOAT), ("dec_present_k", TensorProto.FLOAT),
                                  ("dec_present_v", TensorProto.FLOAT), ("dec_cross_out", TensorProto.FLOAT)]


def attention_cache_part(rng, node):
    """Attention over a KV cache as ORT's GPT-2 tools write it: past [2, B, heads, P, H] in, present
    [2, B, heads, P + S, H] out, unidirectional, a 2-D mask over cached and new positions; and
    present alone (no past: the first step)."""
    inits = weights(rng, [("gpt_w", (16, 48), 0.3), ("gpt_b", (48,), 0.1),
                          ("gpt_mask", np.array([[0, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]], np.int32))])
    nodes = [node("Attention", ["gpt_x", "gpt_w", "gpt_b", "gpt_mask", "gpt_past"], ["gpt_out", "gpt_present"],
                  domain=MS, name="attention_with_past", num_heads=2, unidirectional=1),
             node("Attention", ["gpt_x", "gpt_w", "gpt_b"], ["gpt_first_out", "gpt_first_present"], domain=MS,
                  name="attention_first_step", num_heads=2, unidirectional=1)]
    x = rng.standard_normal((2, 3, 16)).astype(np.float32)
    past = rng.standard_normal((2, 2, 2, 4, 8)).astype(np.float32)
    return nodes, inits, [("gpt_x", x, [2, "seq", 16]), ("gpt_past", past, [2, 2, 2, "past", 8])], [
        ("gpt_out", TensorProto.FLOAT), ("gpt_present", TensorProto.FLOAT), ("gpt_first_out", TensorProto.FLOAT),
        ("gpt_first_present", TensorProto.FLOAT)]


def ort_contrib_ops(rng):
    node = helper.make_node
    nodes, inits, inputs, outputs = [], [], [], []
    for part in (bert_part, cnn_part, quantized_matmul_part, quantized_nhwc_part, attention_masks_part,
                 quantized_attention_part, mha_cache_part, attention_cache_part):
        n, i, ins, outs = part(rng, node)
        nodes += n
        inits += i
        inputs += ins
        outputs += outs
    dtype = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}
    graph = helper.make_graph(
        nodes, "ort_contrib_ops",
        [helper.make_tensor_value_info(name, dtype[x.dtype], shape) for name, x, shape in inputs],
        [helper.make_tensor_value_info(name, t, None) for name, t in outputs], inits)
    model = helper.make_model(graph, producer_name="onnxrun",
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8  # not checked: onnx's checker knows no com.microsoft schemas
    return model, [x for _, x, _ in inputs]


def float_cnn(rng):
    """Conv-Relu, a residual Add, squeeze-excite (GlobalAveragePool, Conv, Sigmoid, Mul), LeakyRelu,
    Concat, AveragePool, GlobalAveragePool, Gemm, Softmax; input [N,3,16,16]."""
    node = helper.make_node
    inits = weights(rng, [("c1_w", (8, 3, 3, 3), 0.3), ("c1_b", (8,), 0.1), ("c2_w", (8, 8, 3, 3), 0.15),
                          ("c2_b", (8,), 0.1), ("se_w", (8, 8, 1, 1), 0.3), ("se_b", (8,), 0.1),
                          ("c3_w", (8, 16, 1, 1), 0.2), ("c3_b", (8,), 0.1), ("fc_w", (10, 8), 0.3),
                          ("fc_b", (10,), 0.1)])
    nodes = [
        node("Conv", ["image", "c1_w", "c1_b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        node("Relu", ["c1"], ["r1"], name="relu1"),
        node("Conv", ["r1", "c2_w", "c2_b"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        node("Add", ["c2", "r1"], ["res"], name="residual"),
        node("GlobalAveragePool", ["res"], ["squeeze"], name="se_pool"),
        node("Conv", ["squeeze", "se_w", "se_b"], ["excite"], name="se_conv"),
        node("Sigmoid", ["excite"], ["gate"], name="se_gate"),
        node("Mul", ["res", "gate"], ["scaled"], name="se_scale"),
        node("LeakyRelu", ["scaled"], ["leaky"], name="leaky", alpha=0.1),
        node("Concat", ["leaky", "r1"], ["joined"], name="concat", axis=1),
        node("AveragePool", ["joined"], ["pooled"], name="avg_pool", kernel_shape=[2, 2], strides=[2, 2]),
        node("Conv", ["pooled", "c3_w", "c3_b"], ["c3"], name="conv3"),
        node("GlobalAveragePool", ["c3"], ["gap"], name="gap"),
        node("Flatten", ["gap"], ["flat"], name="flatten"),
        node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(nodes, "float_cnn",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 16, 16])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="onnxrun")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def ort_quantized_cnn(rng):
    """float_cnn quantized by ORT's quantize_static (QOperator format, uint8 activations, int8
    weights, 16 calibration images)."""
    from onnxruntime import quantization as q

    class Calibration(q.CalibrationDataReader):
        def __init__(self):
            self.images = iter([{"image": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)}
                                for _ in range(16)])

        def get_next(self):
            return next(self.images, None)

    with tempfile.TemporaryDirectory() as tmp:
        float_path, int8_path = os.path.join(tmp, "float.onnx"), os.path.join(tmp, "int8.onnx")
        onnx.save(float_cnn(rng), float_path)
        q.quantize_static(float_path, int8_path, Calibration(), quant_format=q.QuantFormat.QOperator,
                          activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8,
                          extra_options={"QuantizeSoftmax": True})
        model = onnx.load(int8_path)
    ops = sorted({(n.domain or "ai.onnx") + "." + n.op_type for n in model.graph.node})
    print("ort_quantized_cnn ops:", ", ".join(ops))
    return model, [rng.standard_normal((2, 3, 16, 16)).astype(np.float32)]


def pack_codes(codes, bits):
    """Rows of `bits`-bit codes packed low bits first, as ORT's quantizer packs them."""
    per_byte = 8 // bits
    codes = np.pad(codes, [(0, 0), (0, -codes.shape[1] % per_byte)])
    packed = np.zeros((codes.shape[0], codes.shape[1] // per_byte), np.uint8)
    for i in range(per_byte):
        packed |= (codes[:, i::per_byte] << (i * bits)).astype(np.uint8)
    return packed


def nbits_node(rng, name, k, n, bits, block, zero_points):
    """A MatMulNBits node of `features` [.., k] -> [.., n] written by hand, with a bias; zero_points
    "float" (of the scales' dtype), "packed" (uint8 codes) or None (the midpoint), and its initializers."""
    blocks, levels = -(-k // block), 1 << bits
    codes = rng.integers(0, levels, (n, blocks * block))
    inits = [numpy_helper.from_array(pack_codes(codes, bits).reshape(n, blocks, block * bits // 8), f"{name}_b"),
             # scales that keep the weights within about +-0.5, as a trained layer's are
             numpy_helper.from_array((rng.random((n, blocks)) + 0.5).astype(np.float32) / levels, f"{name}_scales")]
    inputs = ["features", f"{name}_b", f"{name}_scales"]
    if zero_points == "float":
        inits.append(numpy_helper.from_array((rng.random((n, blocks)) * levels).astype(np.float32), f"{name}_zp"))
    elif zero_points == "packed":
        inits.append(numpy_helper.from_array(pack_codes(rng.integers(0, levels, (n, blocks)), bits).ravel(), f"{name}_zp"))
    inputs += [f"{name}_zp" if zero_points else "", "", f"{name}_bias"]
    inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), f"{name}_bias"))
    node = helper.make_node("MatMulNBits", inputs, [name], domain=MS, name=name, K=k, N=n, bits=bits,
                            block_size=block)
    return node, inits


def ort_matmul_nbits(rng):
    """An MLP whose MatMuls ORT's weight-only quantizer made MatMulNBits (4-bit, asymmetric, blocks
    of 32 over a K of 80, so the last block is padded), plus hand-written MatMulNBits nodes on the
    same features: 8-bit with zero points over blocks of 16, 2-bit without zero points, 4-bit with
    float zero points over blocks of 16, each with a bias."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    k, hidden, n = 80, 48, 40
    w1 = (rng.standard_normal((k, hidden)) / np.sqrt(k)).astype(np.float32)
    w2 = (rng.standard_normal((hidden, n)) / np.sqrt(hidden)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["features", "w1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w2"], ["mlp"], name="fc2")]
    graph = helper.make_graph(nodes, "ort_matmul_nbits",
                              [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", 3, k])],
                              [helper.make_tensor_value_info("mlp", TensorProto.FLOAT, ["batch", 3, n])],
                              [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    quantizer = MatMulNBitsQuantizer(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                                     block_size=32, is_symmetric=False)
    quantizer.process()
    model = quantizer.model.model
    for name, bits, block, zero_points, width in [("nbits8_zp", 8, 16, "packed", 24),
                                                   ("nbits2", 2, 32, None, 16),
                                                   ("nbits4_float_zp", 4, 16, "float", 20)]:
        node, inits = nbits_node(rng, name, k, width, bits, block, zero_points)
        model.graph.node.append(node)
        model.graph.initializer.extend(inits)
        model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", 3, width]))
    if not any(o.domain == MS for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS, 1))
    ops = sorted({(n.domain or "ai.onnx") + "." + n.op_type for n in model.graph.node})
    print("ort_matmul_nbits ops:", ", ".join(ops))
    return model, [rng.standard_normal((2, 3, k)).astype(np.float32)]


BERT_EXPORT = """
import sys, torch
from transformers import BertConfig, BertModel
torch.manual_seed(0)
config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=64, max_position_embeddings=32)
model = BertModel(config).eval()
names = ["input_ids", "attention_mask", "token_type_ids"]
example = (torch.randint(0, 100, (2, 7)), torch.ones(2, 7, dtype=torch.int64), torch.zeros(2, 7, dtype=torch.int64))
torch.onnx.export(model, example, sys.argv[1], input_names=names, opset_version=13,
                  output_names=["last_hidden_state", "pooler_output"],
                  dynamic_axes={n: {0: "batch", 1: "sequence"} for n in names})
"""


def ort_bert_optimized(rng):
    from onnxruntime.transformers import optimizer
    with tempfile.TemporaryDirectory() as tmp:
        exported = os.path.join(tmp, "bert.onnx")
        subprocess.run([os.environ.get("EXPORT_PYTHON", "/usr/bin/python3"), "-c", BERT_EXPORT, exported], check=True)
        optimized = os.path.join(tmp, "bert_optimized.onnx")
        optimizer.optimize_model(exported, model_type="bert", num_heads=4, hidden_size=32,
                                 opt_level=0).save_model_to_file(optimized)
        model = onnx.load(optimized)
    ops = sorted({(n.domain or "ai.onnx") + "." + n.op_type for n in model.graph.node})
    print("ort_bert_optimized ops:", ", ".join(ops))
    mask = np.ones((2, 7), np.int64)
    mask[1, 5:] = 0
    segments = (np.arange(7)[None, :] >= 4).astype(np.int64).repeat(2, 0)
    return model, [rng.integers(0, 100, (2, 7)).astype(np.int64), mask, segments]


def ort_bert_quantized(rng):
    """ort_bert_optimized quantized by ORT's quantize_dynamic (int8 weights, reduce_range: 7-bit,
    which ORT's u8 x s8 kernels compute without saturating on CPUs without VNNI): QAttention,
    QEmbedLayerNormalization, DynamicQuantizeLinear + MatMulInteger, as optimum's "optimize, then
    quantize" writes BERT. Its inputs are ort_bert_optimized's."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_bert_optimized")
    with tempfile.TemporaryDirectory() as tmp:
        quantized = os.path.join(tmp, "bert_quantized.onnx")
        quantize_dynamic(os.path.join(source, "model.onnx"), quantized, weight_type=QuantType.QInt8, reduce_range=True,
                         extra_options={"DefaultTensorType": TensorProto.FLOAT})
        model = onnx.load(quantized)
    ops = sorted({(n.domain or "ai.onnx") + "." + n.op_type for n in model.graph.node})
    print("ort_bert_quantized ops:", ", ".join(ops))
    inputs = []
    for i in range(len(model.graph.input)):
        inputs.append(numpy_helper.to_array(onnx.load_tensor(os.path.join(source, "test_data_set_0", f"input_{i}.pb"))))
    return model, inputs


if __name__ == "__main__":
    save("ort_contrib_ops", *ort_contrib_ops(np.random.default_rng(11)))
    save("ort_quantized_cnn", *ort_quantized_cnn(np.random.default_rng(12)))
    save("ort_bert_optimized", *ort_bert_optimized(np.random.default_rng(13)))
    save("ort_matmul_nbits", *ort_matmul_nbits(np.random.default_rng(14)))
    save("ort_bert_quantized", *ort_bert_quantized(np.random.default_rng(15)))
