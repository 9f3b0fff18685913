"""The sweep's small-model cases: the models of small_modules.py with their seeded inputs, opsets
and dynamic axes. Names are <pattern>_op<opset>; _dyn cases are tested with inputs of other sizes
than they were exported with.
"""

import torch

from cases_common import Case, add_case, generator, randn
from small_modules import (
    Activations, AdaptivePools, Attention, ChannelLayerNorm, Conv1d3d, ConvTransposes, Einsums, Embed,
    GPT2Block, GridSample, IndexOps, IntOps, Interpolate, MaskWhere, MiscLinalg, Norms, PadModes,
    PaddedTransformerEncoder, PixelShuffles, Pools, Recurrent, Reductions, ShapeOps, Upsamples)

CASES = {}

INTERPOLATIONS = {
    "nearest_sf2": dict(scale_factor=2, mode="nearest"),
    "nearest_sf1.5": dict(scale_factor=1.5, mode="nearest"),
    "nearest_size": dict(size=(11, 23), mode="nearest"),
    "bilinear_sf2_ac0": dict(scale_factor=2, mode="bilinear", align_corners=False),
    "bilinear_sf2_ac1": dict(scale_factor=2, mode="bilinear", align_corners=True),
    "bilinear_size_ac0": dict(size=(11, 23), mode="bilinear", align_corners=False),
    "bilinear_size_ac1": dict(size=(11, 23), mode="bilinear", align_corners=True),
    "bilinear_down_ac0": dict(size=(5, 3), mode="bilinear", align_corners=False),
    "bilinear_sf0.5_ac0": dict(scale_factor=0.5, mode="bilinear", align_corners=False),
    "bicubic_sf2_ac0": dict(scale_factor=2, mode="bicubic", align_corners=False),
    "bicubic_sf2_ac1": dict(scale_factor=2, mode="bicubic", align_corners=True),
    "bicubic_size_ac0": dict(size=(11, 23), mode="bicubic", align_corners=False),
    "bicubic_size_ac1": dict(size=(11, 23), mode="bicubic", align_corners=True),
    "area_size": dict(size=(4, 6), mode="area"),
    "nearest_exact_sf1.7": dict(scale_factor=1.7, mode="nearest-exact"),
    "bilinear_sf2_rcsf": dict(scale_factor=1.7, mode="bilinear", align_corners=False,
                              recompute_scale_factor=True),
}
GPT2_INPUTS = ["x", "past_k", "past_v", "attn_mask"]
GPT2_DYNAMIC_AXES = {"x": {0: "B", 1: "T"}, "past_k": {0: "B", 2: "P"}, "past_v": {0: "B", 2: "P"},
                     "attn_mask": {0: "B", 1: "S"}}


def add_small(name, opset, make, input_names, dynamic_axes=None, make_test_inputs=None):
    add_case(CASES, f"{name}_op{opset}", Case(make, opset, input_names, dynamic_axes=dynamic_axes,
                                              make_test_inputs=make_test_inputs))


def recurrent_make(kind, bidirectional, batch_first):
    def make():
        model = Recurrent(kind, bidirectional, batch_first)
        shape = (2, 7, 16) if batch_first else (7, 2, 16)
        return model, (randn(*shape, seed=3),)
    return make


def encoder_make(norm_first):
    def make():
        model = PaddedTransformerEncoder(norm_first)
        pad = torch.zeros((2, 10), dtype=torch.bool)
        pad[0, 7:] = True
        pad[1, 4:] = True
        return model, (randn(2, 10, 32, seed=3), pad)
    return make


def attention_make():
    model = Attention()
    return model, (randn(2, 5, 32, seed=1), randn(2, 9, 32, seed=2), randn(2, 9, 32, seed=3),
                   randn(9, 2, 24, seed=4), randn(9, 2, 20, seed=5))


def interpolate_make(kwargs):
    def make():
        return Interpolate(**kwargs), (randn(1, 3, 8, 12, seed=6),)
    return make


def grid_sample_make(mode, padding_mode, align_corners):
    def make():
        grid = torch.rand((2, 7, 9, 2), generator=generator(2)) * 2.4 - 1.2  # partly outside [-1, 1]
        return GridSample(mode, padding_mode, align_corners), (randn(2, 3, 10, 12, seed=1), grid)
    return make


def einsum_make():
    return Einsums(), (randn(2, 4, 5, seed=1), randn(2, 5, 3, seed=2), randn(2, 3, 6, 8, seed=3))


def index_make():
    idx = torch.randint(0, 10, (3, 6, 4), generator=generator(2))
    return IndexOps(), (randn(3, 6, 10, seed=1), idx, randn(3, 6, 4, seed=3))


def mask_make():
    mask = torch.rand((2, 5, 8), generator=generator(2)) > 0.4
    mask[..., 0] = False  # at least one unmasked element per row
    return MaskWhere(), (randn(2, 5, 8, seed=1), mask)


def gpt2_make():
    """Batch 2, 3 new tokens after 6 past ones; the second sequence's first 2 tokens are masked."""
    model = GPT2Block()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 1:
                p.add_(torch.randn(p.shape) * 0.1)  # nonzero biases, LayerNorm away from identity
    attn_mask = torch.ones((2, 9), dtype=torch.int64)
    attn_mask[1, :2] = 0
    return model, (randn(2, 3, 64, seed=1), randn(2, 4, 6, 16, seed=2), randn(2, 4, 6, 16, seed=3),
                   attn_mask)


def gpt2_test_inputs():
    """Batch 1, one new token after 9 past ones, the first 3 masked."""
    attn_mask = torch.ones((1, 10), dtype=torch.int64)
    attn_mask[0, :3] = 0
    return (randn(1, 1, 64, seed=11), randn(1, 4, 9, 16, seed=12), randn(1, 4, 9, 16, seed=13),
            attn_mask)


def one_input(module_cls, *shape, scale=1, shift=0):
    """A make() for module_cls() on one seeded standard-normal input, times scale plus shift."""
    return lambda: (module_cls(), (randn(*shape, seed=1) * scale + shift,))


def int_ops_make():
    return IntOps(), (randn(3, 7, seed=1), torch.randint(0, 9, (3, 7), generator=generator(2)))


def embed_make():
    return Embed(), (torch.randint(0, 50, (2, 9), generator=generator(2)),)


def linalg_make():
    return MiscLinalg(), (randn(2, 5, 12, seed=1), randn(2, 12, 5, seed=2), randn(2, 5, 5, seed=3))


def add_recurrent_cases():
    for kind in ("lstm", "gru"):
        for bidirectional in (False, True):
            for batch_first in (True, False):
                name = f"{kind}_{'bi' if bidirectional else 'uni'}_{'bf' if batch_first else 'tf'}"
                add_small(name, 13, recurrent_make(kind, bidirectional, batch_first), ["x"])
    add_small("lstm_bi_bf_dyn", 13, recurrent_make("lstm", True, True), ["x"],
              dynamic_axes={"x": {0: "N", 1: "T"}},
              make_test_inputs=lambda: (randn(3, 11, 16, seed=4),))


def add_attention_cases():
    for opset in (13, 17):
        add_small("transformer_encoder", opset, encoder_make(False), ["x", "pad"])
    add_small("transformer_encoder_normfirst", 17, encoder_make(True), ["x", "pad"])
    for opset in (13, 17):
        add_small("multihead_attention", opset, attention_make, ["q", "k", "v", "k2", "v2"])


def add_resize_cases():
    for key, kwargs in INTERPOLATIONS.items():
        add_small(f"interp_{key}", 13, interpolate_make(kwargs), ["x"])
    for key in ("bilinear_sf2_ac0", "bicubic_size_ac1", "nearest_size", "nearest_exact_sf1.7"):
        add_small(f"interp_{key}", 17, interpolate_make(INTERPOLATIONS[key]), ["x"])
    add_small("interp_bilinear_sf2_ac0_dyn", 13, interpolate_make(INTERPOLATIONS["bilinear_sf2_ac0"]),
              ["x"], dynamic_axes={"x": {0: "N", 2: "H", 3: "W"}},
              make_test_inputs=lambda: (randn(2, 3, 10, 6, seed=7),))
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding_mode in ("zeros", "border", "reflection"):
            for align_corners in (False, True):
                add_small(f"grid_sample_{mode}_{padding_mode}_ac{int(align_corners)}", 16,
                          grid_sample_make(mode, padding_mode, align_corners), ["x", "grid"])
    for opset in (13, 17):
        add_small("upsample", opset, one_input(Upsamples, 1, 3, 6, 7), ["x"])
    add_small("pixel_shuffle", 13, one_input(PixelShuffles, 1, 8, 6, 10), ["x"])


def add_layer_cases():
    add_small("einsum", 13, einsum_make, ["a", "b", "c"])
    for opset in (13, 17):
        add_small("channel_layernorm", opset, one_input(ChannelLayerNorm, 2, 16, 9, 11), ["x"])
        add_small("norms", opset, one_input(Norms, 2, 16, 9, 11, scale=3, shift=1), ["x"])
    add_small("conv_transpose", 13, one_input(ConvTransposes, 1, 8, 7, 9), ["x"])
    add_small("conv1d_conv3d", 13,
              lambda: (Conv1d3d(), (randn(2, 8, 33, seed=1), randn(1, 4, 6, 16, 16, seed=2))),
              ["x1", "x3"])
    add_small("adaptive_pool", 13, one_input(AdaptivePools, 2, 4, 14, 21), ["x"])
    add_small("adaptive_pool_nondiv", 13, one_input(AdaptivePools, 2, 4, 15, 22), ["x"])
    for opset in (13, 17):
        add_small("index_ops", opset, index_make, ["x", "idx", "src"])
    add_small("masked_fill_where", 13, mask_make, ["x", "m"])
    add_small("gpt2_block", 13, gpt2_make, GPT2_INPUTS)
    for opset in (13, 17):
        add_small("gpt2_block_dyn", opset, gpt2_make, GPT2_INPUTS, dynamic_axes=GPT2_DYNAMIC_AXES,
                  make_test_inputs=gpt2_test_inputs)


def add_op_family_cases():
    for opset in (13, 17):
        add_small("pad_modes", opset, one_input(PadModes, 2, 3, 6, 7), ["x"])
        add_small("activations", opset, one_input(Activations, 2, 4, 6, 8, scale=3), ["x"])
        add_small("reductions", opset, one_input(Reductions, 2, 4, 6, 8), ["x"])
        add_small("shape_ops", opset, one_input(ShapeOps, 2, 4, 6, 8), ["x"])
        add_small("int_ops", opset, int_ops_make, ["x", "ids"])
        add_small("embedding", opset, embed_make, ["ids"])
        add_small("linalg", opset, linalg_make, ["a", "b", "c"])
        add_small("pools", opset, one_input(Pools, 2, 4, 11, 13), ["x"])
    add_small("embedding_dyn", 13, embed_make, ["ids"], dynamic_axes={"ids": {0: "B", 1: "T"}},
              make_test_inputs=lambda: (torch.randint(0, 50, (3, 17), generator=generator(3)),))
    add_small("shape_ops_dyn", 17, one_input(ShapeOps, 2, 4, 6, 8), ["x"],
              dynamic_axes={"x": {0: "N", 2: "H", 3: "W"}},
              make_test_inputs=lambda: (randn(3, 4, 10, 12, seed=5),))


add_recurrent_cases()
add_attention_cases()
add_resize_cases()
add_layer_cases()
add_op_family_cases()
