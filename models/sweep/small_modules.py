"""The sweep's hand-written small models, each exercising a family of export patterns (recurrent
layers, attention, resizing, normalisations, indexing, shape manipulation, ...). Their cases, with
inputs and opsets, are in cases_small.py.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Recurrent(nn.Module):
    """A 2-layer LSTM or GRU, uni- or bidirectional; outputs the sequence and the final states."""

    def __init__(self, kind, bidirectional, batch_first):
        super().__init__()
        cls = nn.LSTM if kind == "lstm" else nn.GRU
        self.rnn = cls(16, 24, num_layers=2, batch_first=batch_first, bidirectional=bidirectional)

    def forward(self, x):
        y, state = self.rnn(x)
        if isinstance(state, tuple):
            return (y,) + state
        return y, state


class PaddedTransformerEncoder(nn.Module):
    """A 2-layer transformer encoder with a key-padding mask (True = padding)."""

    def __init__(self, norm_first=False):
        super().__init__()
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True,
                                           norm_first=norm_first)
        # enable_nested_tensor=False: torch 1.13's eval fast path truncates padded outputs, the
        # trace does not.
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, x, pad):
        return self.enc(x, src_key_padding_mask=pad)


class Attention(nn.Module):
    """nn.MultiheadAttention batch-first, and sequence-first with other key and value sizes and
    per-head weights."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(32, 4, batch_first=True)
        self.mha2 = nn.MultiheadAttention(32, 4, kdim=24, vdim=20)

    def forward(self, q, k, v, k2, v2):
        y, weights = self.mha(q, k, v)
        y2, weights2 = self.mha2(q.transpose(0, 1), k2, v2, need_weights=True,
                                 average_attn_weights=False)
        return y, weights, y2, weights2


class Interpolate(nn.Module):
    def __init__(self, **kwargs):
        super().__init__()
        self.kwargs = kwargs

    def forward(self, x):
        return F.interpolate(x, **self.kwargs)


class GridSample(nn.Module):
    def __init__(self, mode, padding_mode, align_corners):
        super().__init__()
        self.mode = mode
        self.padding_mode = padding_mode
        self.align_corners = align_corners

    def forward(self, x, grid):
        return F.grid_sample(x, grid, mode=self.mode, padding_mode=self.padding_mode,
                             align_corners=self.align_corners)


class PixelShuffles(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 32, 3, padding=1)
        self.ps = nn.PixelShuffle(2)
        self.pu = nn.PixelUnshuffle(2)

    def forward(self, x):
        y = self.ps(self.conv(x))
        return y, self.pu(y)


class Upsamples(nn.Module):
    def __init__(self):
        super().__init__()
        self.u1 = nn.Upsample(scale_factor=2, mode="nearest")
        self.u2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.u3 = nn.Upsample(size=(13, 17), mode="bilinear", align_corners=True)
        self.u4 = nn.UpsamplingNearest2d(scale_factor=3)

    def forward(self, x):
        return self.u1(x), self.u2(x), self.u3(x), self.u4(x)


class Einsums(nn.Module):
    def forward(self, a, b, c):
        return (torch.einsum("bij,bjk->bik", a, b), torch.einsum("bhqd,bhkd->bhqk", c, c),
                torch.einsum("bij->bji", a), torch.einsum("bij,bij->b", a, a),
                torch.einsum("...ij,jk->...ik", a, b[0]))


class ChannelLayerNorm(nn.Module):
    """ConvNeXt-style: permute NCHW -> NHWC, LayerNorm(C), permute back; plus a manual LN over dim 1."""

    def __init__(self, channels=16):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.ln = nn.LayerNorm(channels, eps=1e-6)
        self.w = nn.Parameter(torch.randn(channels) * 0.5 + 1)
        self.b = nn.Parameter(torch.randn(channels) * 0.1)

    def forward(self, x):
        y = self.conv(x).permute(0, 2, 3, 1)
        y = self.ln(y).permute(0, 3, 1, 2)
        mean = x.mean(1, keepdim=True)
        var = (x - mean).pow(2).mean(1, keepdim=True)
        z = (x - mean) / torch.sqrt(var + 1e-6)
        return y, self.w[:, None, None] * z + self.b[:, None, None]


class Norms(nn.Module):
    """GroupNorm (4 groups and 1), InstanceNorm2d with and without affine, InstanceNorm1d."""

    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(4, 16)
        self.gn1 = nn.GroupNorm(1, 16)
        self.inorm = nn.InstanceNorm2d(16, affine=True)
        self.inorm_na = nn.InstanceNorm2d(16)
        self.inorm1d = nn.InstanceNorm1d(16, affine=True)
        with torch.no_grad():
            for m in (self.gn, self.gn1, self.inorm, self.inorm1d):
                m.weight.copy_(torch.randn(16) * 0.5 + 1)
                m.bias.copy_(torch.randn(16) * 0.2)

    def forward(self, x):
        return self.gn(x), self.gn1(x), self.inorm(x), self.inorm_na(x), self.inorm1d(x.flatten(2))


class ConvTransposes(nn.Module):
    """ConvTranspose with output padding, groups, dilation, asymmetric kernels, and 1-D."""

    def __init__(self):
        super().__init__()
        self.t1 = nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1)
        self.t2 = nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1)
        self.t3 = nn.ConvTranspose2d(8, 8, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.t4 = nn.ConvTranspose2d(8, 5, (3, 5), stride=(2, 3), padding=(0, 2),
                                     output_padding=(1, 2), bias=False)
        self.t5 = nn.ConvTranspose2d(8, 3, 3, stride=1, padding=2, dilation=2)
        self.t1d = nn.ConvTranspose1d(8, 4, 5, stride=3, padding=1, output_padding=2)

    def forward(self, x):
        return self.t1(x), self.t2(x), self.t3(x), self.t4(x), self.t5(x), self.t1d(x.flatten(2))


class Conv1d3d(nn.Module):
    """1-D and 3-D convolutions (strided, dilated, grouped, depthwise) and pools."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(8, 16, 5, stride=2, padding=2)
        self.c1d = nn.Conv1d(16, 16, 3, padding=2, dilation=2, groups=4)
        self.c3 = nn.Conv3d(4, 8, 3, stride=(1, 2, 2), padding=1)
        self.c3d = nn.Conv3d(8, 8, (3, 1, 1), padding=(1, 0, 0), groups=8)
        self.p3 = nn.MaxPool3d(2)
        self.a3 = nn.AvgPool3d((1, 2, 2))
        self.p1 = nn.MaxPool1d(3, stride=2, padding=1)

    def forward(self, x1, x3):
        y1 = self.p1(self.c1d(F.relu(self.c1(x1))))
        y3 = self.c3d(F.relu(self.c3(x3)))
        return y1, self.p3(y3), self.a3(y3)


class AdaptivePools(nn.Module):
    def forward(self, x):
        return (F.adaptive_avg_pool2d(x, (7, 7)), F.adaptive_avg_pool2d(x, (2, 3)),
                F.adaptive_max_pool2d(x, (7, 3)), F.adaptive_avg_pool1d(x.flatten(2), 7))


class IndexOps(nn.Module):
    """topk, argmax/argmin, cumsum, gather, scatter and scatter_add."""

    def forward(self, x, idx, src):
        top, top_idx = torch.topk(x, 5, dim=-1)
        bottom, bottom_idx = torch.topk(x, 3, dim=1, largest=False, sorted=True)
        arg_max = torch.argmax(x, dim=-1)
        arg_min = torch.argmin(x, dim=1, keepdim=True)
        cumsum_last = torch.cumsum(x, dim=-1)
        cumsum_1 = torch.cumsum(x, dim=1)
        gathered = torch.gather(x, -1, idx)
        scattered = torch.zeros_like(x).scatter(-1, idx, src)
        scatter_added = torch.zeros_like(x).scatter_add(-1, idx, src)
        return (top, top_idx, bottom, bottom_idx, arg_max, arg_min, cumsum_last, cumsum_1, gathered,
                scattered, scatter_added)


class MaskWhere(nn.Module):
    def forward(self, x, mask):
        masked_softmax = x.masked_fill(mask, float("-inf")).softmax(-1)
        zeroed = x.masked_fill(~mask, 0.0)
        leaky = torch.where(x > 0, x, x * 0.1)
        selected = torch.where(mask, x, torch.zeros_like(x))
        summed = torch.where(x > 0.5, torch.ones_like(x), -x).sum(-1)
        return masked_softmax, zeroed, leaky, selected, summed


class GPT2Block(nn.Module):
    """A GPT-2 block as HuggingFace writes it: past keys and values, a causal mask sliced from a
    buffer, an attention mask turned into finfo.min biases, tanh GELU."""

    def __init__(self, d_model=64, n_heads=4, max_pos=64):
        super().__init__()
        self.n_heads = n_heads
        self.d_model = d_model
        self.ln_1 = nn.LayerNorm(d_model)
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.ln_2 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.proj = nn.Linear(4 * d_model, d_model)
        causal = torch.tril(torch.ones(max_pos, max_pos, dtype=torch.bool))
        self.register_buffer("bias", causal.view(1, 1, max_pos, max_pos))

    def split_heads(self, x):
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.d_model // self.n_heads).permute(0, 2, 1, 3)

    def forward(self, x, past_k, past_v, attn_mask):
        q, k, v = self.c_attn(self.ln_1(x)).split(self.d_model, dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        k = torch.cat([past_k, k], dim=-2)
        v = torch.cat([past_v, v], dim=-2)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(v.size(-1))
        q_len, k_len = q.size(-2), k.size(-2)
        causal = self.bias[:, :, k_len - q_len:k_len, :k_len]
        w = torch.where(causal, w, torch.finfo(w.dtype).min * torch.ones_like(w))
        w = w + (1.0 - attn_mask[:, None, None, :].to(w.dtype)) * torch.finfo(w.dtype).min
        w = F.softmax(w, dim=-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size(0), a.size(1), self.d_model)
        x = x + self.c_proj(a)
        mlp = self.proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))
        return x + mlp, k, v


class PadModes(nn.Module):
    def forward(self, x):
        return (F.pad(x, (1, 2, 3, 0), mode="reflect"), F.pad(x, (2, 1, 0, 3), mode="replicate"),
                F.pad(x, (1, 1, 2, 2), mode="constant", value=-1.5), F.pad(x, (0, 0, 0, 0, 1, 2)),
                F.pad(x.flatten(2), (3, 2), mode="reflect"))


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.prelu = nn.PReLU(4)
        with torch.no_grad():
            self.prelu.weight.copy_(torch.tensor([0.1, -0.2, 0.5, 2.0]))

    def forward(self, x):
        return (F.gelu(x), F.gelu(x, approximate="tanh"), F.silu(x), F.mish(x), F.hardswish(x),
                F.hardsigmoid(x), F.elu(x, 0.7), F.selu(x), F.celu(x, 1.3), F.leaky_relu(x, 0.02),
                F.softplus(x, beta=2.0, threshold=5.0), F.softsign(x), self.prelu(x),
                torch.clamp(x, -0.5, 0.75), F.relu6(x * 4), F.logsigmoid(x), F.tanhshrink(x),
                F.hardtanh(x, -0.3, 0.4), F.log_softmax(x, dim=1), F.softmax(x, dim=-1),
                F.softmin(x, dim=2), F.glu(x, dim=1))


class Reductions(nn.Module):
    def forward(self, x):
        return (x.sum((1, 3)), x.mean(-1, keepdim=True), x.amax(2), x.amin((1, 2)), x.prod(1),
                x.std(1), x.var(-1, unbiased=False), x.norm(dim=1), x.norm(p=1, dim=-1),
                torch.logsumexp(x, 2), F.normalize(x, dim=1),
                F.cosine_similarity(x, x.flip(1), dim=1), x.max(1)[0], x.max(1)[1], x.min(-1)[1],
                x.abs().sqrt().mean(), torch.linalg.vector_norm(x, ord=2, dim=(2, 3)))


class ShapeOps(nn.Module):
    def forward(self, x):
        first, second = x.chunk(2, dim=1)
        rolled = torch.roll(x, shifts=(1, -2), dims=(2, 3))
        flipped = x.flip(-1)
        repeated = x.repeat(1, 2, 1, 1)
        strided = x[:, :, ::2, 1::3]
        expanded = x.unsqueeze(2).expand(-1, -1, 3, -1, -1).reshape(x.shape[0], -1, x.shape[3])
        upper, lower = torch.triu(x[0, 0]), torch.tril(x[0, 0], -1)
        flat = x.transpose(1, 3).contiguous().view(x.shape[0], -1)
        stacked = torch.stack([first, second], 0).sum(0)
        joined = torch.cat([x, -x], 2)
        split = x.split([1, 3], dim=1)[1]
        patches = F.unfold(x, kernel_size=3, padding=1, stride=2)
        return (first, second, rolled, flipped, repeated, strided, expanded, upper, lower, flat,
                stacked, joined, split, patches)


class IntOps(nn.Module):
    """Integer arithmetic, nonzero, sort, counts, float -> int casts, one_hot."""

    def forward(self, x, ids):
        pos = torch.arange(ids.shape[1]).unsqueeze(0).expand_as(ids)
        floor_div = torch.div(ids, 3, rounding_mode="floor")
        rem = torch.remainder(ids - 5, 3)
        nonzero = torch.nonzero(ids > 4)
        values, order = torch.sort(x, dim=-1, descending=True)
        arg_sorted = torch.argsort(x, dim=1)
        count = (ids > 2).sum(-1)
        truncated = (x * 10).long()
        onehot = F.one_hot(ids % 5, 5)
        return pos + floor_div, rem, nonzero, values, order, arg_sorted, count, truncated, onehot


class Embed(nn.Module):
    """Token and position embeddings, LayerNorm and a vocabulary head."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(50, 32, padding_idx=0)
        self.pos = nn.Embedding(64, 32)
        self.ln = nn.LayerNorm(32)
        self.head = nn.Linear(32, 50)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        h = self.ln(self.tok(ids) + self.pos(pos))
        return self.head(h), h


class MiscLinalg(nn.Module):
    def __init__(self):
        super().__init__()
        self.bil = nn.Linear(12, 7, bias=False)

    def forward(self, a, b, c):
        return (torch.bmm(a, b), torch.baddbmm(c, a, b, beta=0.5, alpha=2.0),
                torch.addmm(c[0], a[0], b[0]), a @ b[0], self.bil(a.transpose(1, 2) @ a),
                torch.matmul(a[0, 0], b[0]), torch.outer(a[0, 0], a[0, 1]))


class Pools(nn.Module):
    def forward(self, x):
        return (F.max_pool2d(x, 3, 2, 1), F.max_pool2d(x, 3, 2, ceil_mode=True),
                F.avg_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
                F.avg_pool2d(x, 2, ceil_mode=True), F.max_pool2d(x, (2, 3), (1, 2), dilation=(2, 1)),
                F.lp_pool2d(x, 2, 2), F.local_response_norm(x, 3))
