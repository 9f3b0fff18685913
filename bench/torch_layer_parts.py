"""Times PyTorch's own kernels on the parts of one BERT-base encoder layer at batch 32, sequence 128
(fp16, on the GPU): each linear layer alone, with bias, with bias + erf-GELU, with cuBLASLt's
GELU epilogue (tanh form, torch._addmm_activation), with a residual; the erf-GELU pass alone; SDPA
with and without an additive mask; LayerNorm; and the FFN-up + GELU split into row chunks. Each is
captured 10 times in a CUDA graph and timed with CUDA events. It bounds what a BERT layer can take
when built from the best existing kernels (README, "Transformers").

  python3 bench/torch_layer_parts.py
"""
import torch
import torch.nn.functional as F


def time_us(fn, replays=50, per_graph=10):
    for _ in range(5):
        fn()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(per_graph):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / replays / per_graph * 1000


def main():
    h, rows = torch.half, 4096
    for k, n in [(768, 2304), (768, 768), (768, 3072), (3072, 768)]:
        x = torch.randn(rows, k, device="cuda", dtype=h)
        w = torch.randn(n, k, device="cuda", dtype=h) * 0.03
        bias = torch.randn(n, device="cuda", dtype=h)
        r = torch.randn(rows, n, device="cuda", dtype=h)
        parts = [
            f"{k}->{n}: linear {time_us(lambda: F.linear(x, w)):.1f} us",
            f"+bias {time_us(lambda: F.linear(x, w, bias)):.1f}",
            f"+bias+GELU(tanh) epilogue {time_us(lambda: torch._addmm_activation(bias, x, w.t(), use_gelu=True)):.1f}",
            f"+bias, erf-GELU pass {time_us(lambda: F.gelu(F.linear(x, w, bias))):.1f}",
            f"erf-GELU pass alone {time_us(lambda: F.gelu(r)):.1f}",
            f"+residual {time_us(lambda: torch.addmm(r, x, w.t())):.1f}",
        ]
        print(" | ".join(parts), flush=True)
    q = torch.randn(32, 12, 128, 64, device="cuda", dtype=h)
    mask = torch.zeros(32, 1, 1, 128, device="cuda", dtype=h)
    masked = time_us(lambda: F.scaled_dot_product_attention(q, q, q, attn_mask=mask))
    print(f"SDPA with mask {masked:.1f} us, without {time_us(lambda: F.scaled_dot_product_attention(q, q, q)):.1f}")
    y = torch.randn(rows, 768, device="cuda", dtype=h)
    g, b = torch.ones(768, device="cuda", dtype=h), torch.zeros(768, device="cuda", dtype=h)
    print(f"LayerNorm 4096x768 {time_us(lambda: F.layer_norm(y, (768,), g, b)):.1f} us")
    x = torch.randn(rows, 768, device="cuda", dtype=h)
    w = torch.randn(3072, 768, device="cuda", dtype=h) * 0.03
    bias = torch.randn(3072, device="cuda", dtype=h)
    for chunks in [1, 2, 4, 8]:
        pieces = x.chunk(chunks)

        def ffn_up():
            for piece in pieces:
                F.gelu(F.linear(piece, w, bias))

        print(f"FFN-up + erf-GELU in {chunks} row chunk(s): {time_us(ffn_up):.1f} us")


if __name__ == "__main__":
    main()
