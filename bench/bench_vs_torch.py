#!/usr/bin/env python3
"""Times onnxrun against PyTorch on the GPU machine, in one call: for each model (torchvision,
random weights), batch and precision, PyTorch eager, PyTorch + CUDA graph and torch.compile
(mode="reduce-overhead") (channels_last, cudnn.benchmark; median of N runs, each timed with CUDA
events, inputs on the device) and `onnxrun --benchmark N` (GPU compute p50, CUDA events, inputs on
the device; in fp16 its input in float16 through --half-inputs, as PyTorch's) on the same model
exported to ONNX. Prints a table with onnxrun's speed-up over
torch.compile (higher is better) and the peak device memory of each. Run from the repo root with a
bundle in .gpu/ (see tools/gpu_smoke.sh):  python3 bench/bench_vs_torch.py [--models resnet50,...]
[--batches 1,32] [--precisions fp16,tf32] [--runs 50] [--no-compile]"""
import argparse
import inspect
import os
import re
import subprocess
import time

import torch
import torchvision


def export(name, path):
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "N"}, "output": {0: "N"}}, **kwargs)
    return model


def median_ms(fn, runs):
    """Median of `runs` calls of fn, each timed with CUDA events on the current stream."""
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def time_compiled(m, inputs, runs):
    """torch.compile(mode="reduce-overhead") of m(*inputs): Inductor kernels replayed through CUDA
    graphs. Returns the median ms and the peak device memory in MiB."""
    torch._dynamo.reset()
    compiled = torch.compile(m, mode="reduce-overhead")
    torch.cuda.reset_peak_memory_stats()
    with torch.inference_mode():
        ms = median_ms(lambda: compiled(*inputs), runs)
    return ms, torch.cuda.max_memory_allocated() / 2**20


def time_cuda_graph(fn, runs):
    """fn() captured into one CUDA graph (after three warm-up calls on a side stream), the median ms
    of its replays. Call under torch.inference_mode()."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return median_ms(graph.replay, runs)


def time_torch(model, batch, precision, runs, compile_too):
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    dtype = torch.float16 if precision == "fp16" else torch.float32
    m = model.to("cuda", dtype).to(memory_format=torch.channels_last)
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype).to(memory_format=torch.channels_last)
    torch.cuda.reset_peak_memory_stats()
    with torch.inference_mode():
        eager = median_ms(lambda: m(x), runs)
        graphed = time_cuda_graph(lambda: m(x), runs)
    peak = torch.cuda.max_memory_allocated() / 2**20
    compiled, compiled_peak = time_compiled(m, (x,), runs) if compile_too else (None, None)
    m.to("cpu", torch.float32)
    return eager, graphed, peak, compiled, compiled_peak


def time_onnxrun(path, batch, precision, runs, extra=()):
    cmd = [".gpu/run", "bin/onnxrun", "--device", "cuda", "--precision", precision, "--batch", str(batch),
           "--benchmark", str(runs), *extra, os.path.abspath(path)]
    start = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True)
    text = out.stdout + out.stderr
    p50 = re.search(r"benchmark: .* p50 ([0-9.]+) ms", text)
    compute = re.search(r"gpu compute: p50 ([0-9.]+) ms", text)
    peak = re.search(r"peak device memory: ([0-9.]+) MiB", text)
    if out.returncode != 0 or not p50 or not compute:
        return None, None, None, time.time() - start, text.strip().splitlines()[-1:]
    return (float(compute.group(1)), float(p50.group(1)), float(peak.group(1)) if peak else None,
            time.time() - start, [])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="resnet50,mobilenet_v2,efficientnet_b0")
    p.add_argument("--batches", default="1,32,256")
    p.add_argument("--precisions", default="fp16,tf32")
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile (its compile takes minutes)")
    p.add_argument("--float-inputs", action="store_true",
                   help="fp16: give onnxrun float32 inputs that it casts (default: float16, as PyTorch gets)")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in args.models.split(","):
        path = f"/tmp/bench_{name}.onnx"
        model = export(name, path)
        for precision in args.precisions.split(","):
            for batch in [int(b) for b in args.batches.split(",")]:
                eager, graphed, torch_peak, compiled, compiled_peak = time_torch(model, batch, precision, args.runs,
                                                                                 not args.no_compile)
                # PyTorch takes its input in the compute dtype: so does onnxrun (--half-inputs in fp16).
                half = ("--half-inputs",) if precision == "fp16" and not args.float_inputs else ()
                ours, host, our_peak, wall, err = time_onnxrun(path, batch, precision, args.runs, half)
                rows.append((name, precision, batch, eager, graphed, compiled, ours, host, torch_peak, compiled_peak,
                             our_peak, err))
                print(f"{name} {precision} b{batch}: torch eager {eager:.3f} ms, graph {graphed:.3f} ms, "
                      f"compile {compiled} ms, onnxrun {ours} ms on the GPU, {host} ms host to host "
                      f"(process {wall:.1f} s) {err}", flush=True)
    # Like for like: PyTorch's input already sits on the GPU in the compute dtype, so the ratio uses
    # onnxrun's GPU compute time (inputs on the device -> outputs on the device). The host-to-host
    # time (the input copied in, in float16 for fp16 as PyTorch's, the output copied out) is shown
    # beside it.
    header = ("| model | prec | batch | torch eager ms | torch+graph ms | torch.compile ms | onnxrun gpu ms "
              "| speed-up vs compile | speed-up vs graph | onnxrun host-to-host ms | peak MiB torch+graph "
              "| peak MiB compile | peak MiB onnxrun |")
    lines = [header, "|" + "---|" * 13]
    fmt = lambda v, spec=".3f": "-" if v is None else format(v, spec)
    for name, precision, batch, eager, graphed, compiled, ours, host, tpeak, cpeak, opeak, err in rows:
        vs_compile = f"{compiled / ours:.2f}x" if ours and compiled else "-"
        vs_graph = f"{graphed / ours:.2f}x" if ours else "failed"
        lines.append(f"| {name} | {precision} | {batch} | {eager:.3f} | {graphed:.3f} | {fmt(compiled)} "
                     f"| {fmt(ours)} | {vs_compile} | {vs_graph} | {fmt(host)} | {tpeak:.0f} | {fmt(cpeak, '.0f')} "
                     f"| {fmt(opeak, '.0f')} |")
    table = "\n".join(lines)
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
