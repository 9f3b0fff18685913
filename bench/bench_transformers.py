#!/usr/bin/env python3
"""Transformers on the GPU machine, in one call: ViT-B/16 (torchvision) and a BERT-base-shaped encoder
(12 layers, hidden 768, 12 heads, FFN 3072, GELU, LayerNorm, an additive attention mask from a
[batch, seq] 0/1 mask, sequence 128; dynamic batch and sequence), random seeded weights.

For each model it
  1. exports ONNX (opset 17, torch.onnx.export with dynamo=False: the attention is written out as
     MatMul / Mul / Softmax / MatMul, the pattern the partitioner fuses);
  2. checks outputs: onnxrun fp16 (or bf16: --precision) on the GPU against torch fp32 (relative to max|torch|), and counts
     the attention steps that run as one cuDNN SDPA graph (`onnxrun --explain` notes);
  3. times, per batch: torch + CUDA graph, torch.compile(mode="reduce-overhead") (fp16, CUDA-event
     medians, inputs on the device; torch in the same 16-bit dtype; torch's model uses scaled_dot_product_attention, its fastest
     path) and `onnxrun --benchmark N` (GPU compute p50), with peak device memory.
Run from the repo root with a bundle in .gpu/:  python3 bench/bench_transformers.py [--models vit_b_16,bert]
[--batches 1,32] [--runs 50] [--no-compile] [--precision fp16|bf16]"""
import argparse
import inspect
import os
import re
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_vs_torch import time_compiled, time_cuda_graph, time_onnxrun  # noqa: E402

SEQ = 128
DIMS = {"bert": ["--dim", f"S={SEQ}"], "vit_b_16": []}  # onnxrun's generated inputs: BERT's sequence length


class EncoderLayer(torch.nn.Module):
    def __init__(self, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.ln1 = torch.nn.LayerNorm(hidden, eps=1e-12)
        self.ff1 = torch.nn.Linear(hidden, ffn)
        self.ff2 = torch.nn.Linear(ffn, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, bias):
        b, s, h = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        x = self.ln1(x + self.out(a.transpose(1, 2).reshape(b, s, h)))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class Bert(torch.nn.Module):
    """BERT-base's encoder: inputs are the embeddings [B, S, 768] and the 0/1 mask [B, S]."""

    def __init__(self, layers=12):
        super().__init__()
        self.layers = torch.nn.ModuleList(EncoderLayer() for _ in range(layers))

    def forward(self, hidden, mask):
        bias = ((1.0 - mask[:, None, None, :]) * -10000.0).to(hidden.dtype)
        for layer in self.layers:
            hidden = layer(hidden, bias)
        return hidden


def make(name):
    torch.manual_seed(0)
    if name == "bert":
        model = Bert().eval()
        inputs = lambda b, dev="cpu", dt=torch.float32: (torch.randn(b, SEQ, 768, device=dev, dtype=dt),
                                                         (torch.arange(SEQ, device=dev) < SEQ - 16).to(dt)
                                                         .expand(b, SEQ).contiguous())
        names, axes = ["hidden", "mask"], {"hidden": {0: "N", 1: "S"}, "mask": {0: "N", 1: "S"}, "y": {0: "N", 1: "S"}}
    else:
        model = getattr(torchvision.models, name)(weights=None).eval()
        if name.startswith("vit"):  # torchvision zero-initialises the classifier: outputs would all be 0
            torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        inputs = lambda b, dev="cpu", dt=torch.float32: (torch.randn(b, 3, 224, 224, device=dev, dtype=dt),)
        names, axes = ["input"], {"input": {0: "N"}, "y": {0: "N"}}
    return model, inputs, names, axes


def export(name, model, inputs, names, axes, path):
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(model, inputs(1), path, opset_version=17, input_names=names, output_names=["y"],
                      dynamic_axes=axes, **kwargs)


def check(name, model, inputs, names, path, out_dir, precision):
    """onnxrun fp16/bf16 on the GPU vs torch fp32; the number of attention steps on cuDNN SDPA."""
    torch.manual_seed(1)
    x = inputs(2)
    torch.backends.cuda.matmul.allow_tf32 = False
    with torch.inference_mode():
        want = model.to("cuda", torch.float32)(*[t.cuda() for t in x]).float().cpu().numpy()
    args = []
    for n, t in zip(names, x):
        np.save(f"{out_dir}/{name}_{n}.npy", t.numpy())
        args += ["--input", f"{n}={out_dir}/{name}_{n}.npy"]
    res = subprocess.run([".gpu/run", "bin/onnxrun", "--device", "cuda", "--precision", precision, "--quiet", *args,
                          "--output-dir", f"{out_dir}/{name}_out", path], capture_output=True, text=True)
    if res.returncode != 0:
        return f"run failed: {(res.stdout + res.stderr).strip().splitlines()[-1:]}", "-"
    import onnx
    from onnx import numpy_helper
    got = numpy_helper.to_array(onnx.load_tensor(f"{out_dir}/{name}_out/output_0.pb"))
    err = float(np.abs(got - want).max() / np.abs(want).max())
    explain = subprocess.run([".gpu/run", "bin/onnxrun", "--device", "cuda", "--precision", precision, "--quiet",
                              *DIMS[name], "--explain", path], capture_output=True, text=True).stdout
    fused = re.search(r"attention patterns fused: (\d+)", explain)
    sdpa = explain.count("cuDNN fused attention (one SDPA graph)")
    with open(f"{out_dir}/{name}_explain.txt", "w") as f:
        f.write(explain)
    return f"{err:.2e}", f"{sdpa} of {fused.group(1) if fused else '?'}"


def time_torch(model, inputs, batch, runs, compile_too, dtype):
    torch.backends.cuda.matmul.allow_tf32 = False
    m = model.to("cuda", dtype)
    x = inputs(batch, "cuda", dtype)
    torch.cuda.reset_peak_memory_stats()
    with torch.inference_mode():
        graphed = time_cuda_graph(lambda: m(*x), runs)
    peak = torch.cuda.max_memory_allocated() / 2**20
    compiled, compiled_peak = time_compiled(m, x, runs) if compile_too else (None, None)
    return graphed, peak, compiled, compiled_peak


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="vit_b_16,bert")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--precision", default="fp16", choices=["fp16", "bf16"], help="torch's dtype and onnxrun's precision")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in args.models.split(","):
        model, inputs, names, axes = make(name)
        path = f"/tmp/bench_{name}.onnx"
        export(name, model, inputs, names, axes, path)
        err, sdpa = check(name, model, inputs, names, path, args.out, args.precision)
        print(f"{name}: {args.precision} GPU vs torch fp32 max err {err} of max|torch|; attention on cuDNN SDPA: {sdpa}",
              flush=True)
        for batch in [int(b) for b in args.batches.split(",")]:
            dtype = torch.bfloat16 if args.precision == "bf16" else torch.float16
            graphed, tpeak, compiled, cpeak = time_torch(model, inputs, batch, args.runs, not args.no_compile, dtype)
            ours, host, opeak, wall, e = time_onnxrun(path, batch, args.precision, args.runs, DIMS[name])
            model.to("cpu", torch.float32)
            rows.append((name, batch, graphed, compiled, ours, tpeak, cpeak, opeak, err, sdpa))
            print(f"{name} b{batch}: torch+graph {graphed:.3f} ms, compile {compiled} ms, onnxrun {ours} ms {e}",
                  flush=True)
    fmt = lambda v, spec=".3f": "-" if v is None else format(v, spec)
    lines = ["| model | batch | torch+graph ms | torch.compile ms | onnxrun gpu ms | vs compile | peak MiB graph "
             f"| peak MiB compile | peak MiB onnxrun | {args.precision} err vs torch fp32 | attention on SDPA |", "|" + "---|" * 11]
    for name, batch, graphed, compiled, ours, tpeak, cpeak, opeak, err, sdpa in rows:
        ratio = f"{compiled / ours:.2f}x" if ours and compiled else "-"
        lines.append(f"| {name} | {batch} | {graphed:.3f} | {fmt(compiled)} | {fmt(ours)} | {ratio} | {tpeak:.0f} "
                     f"| {fmt(cpeak, '.0f')} | {fmt(opeak, '.0f')} | {err} | {sdpa} |")
    table = "\n".join(lines)
    with open(os.path.join(args.out, f"bench_transformers_{args.precision}.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
