#!/usr/bin/env python3
"""Times onnxrun against PyTorch on the GPU machine, in one call: for each model (torchvision,
random weights), batch and precision, PyTorch eager and PyTorch + CUDA graph (channels_last,
cudnn.benchmark, median of N runs) and `onnxrun --benchmark N` (p50 of N runs after warm-up) on the
same model exported to ONNX. Prints a table with the ratio onnxrun / PyTorch+graph (lower is better)
and the peak device memory of both. Run from the repo root with a bundle in .gpu/ (see
tools/gpu_smoke.sh):  python3 bench/bench_vs_torch.py [--models resnet50,...] [--batches 1,32]
[--precisions fp16,tf32] [--runs 50]"""
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


def time_torch(model, batch, precision, runs):
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    dtype = torch.float16 if precision == "fp16" else torch.float32
    m = model.to("cuda", dtype).to(memory_format=torch.channels_last)
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype).to(memory_format=torch.channels_last)
    torch.cuda.reset_peak_memory_stats()

    def median_ms(fn):
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
        return sorted(times)[len(times) // 2]

    with torch.inference_mode():
        eager = median_ms(lambda: m(x))
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                m(x)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            m(x)
        graphed = median_ms(graph.replay)
    peak = torch.cuda.max_memory_allocated() / 2**20
    m.to("cpu", torch.float32)
    return eager, graphed, peak


def time_onnxrun(path, batch, precision, runs):
    cmd = [".gpu/run", "bin/onnxrun", "--device", "cuda", "--precision", precision, "--batch", str(batch),
           "--benchmark", str(runs), os.path.abspath(path)]
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
    args = p.parse_args()
    rows = []
    for name in args.models.split(","):
        path = f"/tmp/bench_{name}.onnx"
        model = export(name, path)
        for precision in args.precisions.split(","):
            for batch in [int(b) for b in args.batches.split(",")]:
                eager, graphed, torch_peak = time_torch(model, batch, precision, args.runs)
                ours, host, our_peak, wall, err = time_onnxrun(path, batch, precision, args.runs)
                rows.append((name, precision, batch, eager, graphed, ours, host, torch_peak, our_peak, wall, err))
                print(f"{name} {precision} b{batch}: torch eager {eager:.3f} ms, graph {graphed:.3f} ms, "
                      f"onnxrun {ours} ms on the GPU, {host} ms host to host (process {wall:.1f} s) {err}",
                      flush=True)
    # Like for like: PyTorch's input already sits on the GPU in the compute dtype, so the ratio uses
    # onnxrun's GPU compute time (inputs on the device -> outputs on the device). The host-to-host
    # time (fp32 input copied in, output copied out) is shown beside it.
    header = ("| model | prec | batch | torch eager ms | torch+graph ms | onnxrun gpu ms | onnxrun/graph "
              "| onnxrun host-to-host ms | img/s onnxrun | img/s torch+graph | peak MiB torch | peak MiB onnxrun |")
    lines = [header, "|" + "---|" * 12]
    for name, precision, batch, eager, graphed, ours, host, tpeak, opeak, wall, err in rows:
        ratio = f"{ours / graphed:.2f}" if ours else "failed"
        ips = f"{batch * 1000 / ours:.0f}" if ours else "-"
        lines.append(f"| {name} | {precision} | {batch} | {eager:.3f} | {graphed:.3f} | {ours or '-'} | {ratio} "
                     f"| {host or '-'} | {ips} | {batch * 1000 / graphed:.0f} | {tpeak:.0f} | {opeak or '-'} |")
    table = "\n".join(lines)
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
