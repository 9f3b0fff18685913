"""Times onnxrun's CPU backend against ONNX Runtime's CPU provider on the same models and machine, in
one call: for each model, `onnxrun --device cpu --benchmark N` (p50 latency, host to host) and
onnxruntime.InferenceSession.run on the same input size (median of N after warm-up), with the same
number of threads (ONNXRUN_CPU_THREADS for onnxrun). Prints a markdown table (and writes it to OUT/bench_cpu.md).

  python3 bench/bench_cpu_vs_ort.py --onnxrun bazel-bin/cli/onnxrun \\
      bazel-bin/models/zoo/resnet50/model.onnx bazel-bin/models/zoo/mobilenet_v2/model.onnx

Needs numpy and onnxruntime (PyPI: `pip install onnxruntime numpy`, a test-only tool)."""
import argparse
import os
import re
import statistics
import subprocess
import time

import numpy as np
import onnxruntime as ort


def ort_input(type_name, shape):
    """Random normal floats; zeros (False) for integer and bool inputs such as masks and ids."""
    if type_name == "tensor(float)":
        return np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    dtypes = {"tensor(bool)": np.bool_, "tensor(int64)": np.int64, "tensor(int32)": np.int32,
              "tensor(float16)": np.float16}
    return np.zeros(shape, dtype=dtypes.get(type_name, np.float32))


def time_ort(path, batch, runs, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feeds = {}
    for inp in session.get_inputs():
        shape = [batch if not isinstance(d, int) else d for d in inp.shape]
        feeds[inp.name] = ort_input(inp.type, shape)
    for _ in range(3):
        session.run(None, feeds)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def time_onnxrun(binary, path, batch, runs, threads):
    cmd = [binary, "--device", "cpu", "--quiet", "--batch", str(batch), "--benchmark", str(runs), path]
    env = dict(os.environ, ONNXRUN_CPU_THREADS=str(threads))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    text = out.stdout + out.stderr
    p50 = re.search(r"benchmark: .* p50 ([0-9.]+) ms", text)
    if out.returncode != 0 or not p50:
        raise RuntimeError(f"onnxrun failed: {text.strip().splitlines()[-1:]}")
    return float(p50.group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("models", nargs="+")
    p.add_argument("--onnxrun", default="bazel-bin/cli/onnxrun")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    args = p.parse_args()
    lines = ["| model | batch | threads | onnxrun cpu ms | onnxruntime cpu ms | onnxrun / onnxruntime |",
             "|---|---|---|---|---|---|"]
    for path in args.models:
        name = os.path.basename(os.path.dirname(path)) or path
        ours = time_onnxrun(args.onnxrun, path, args.batch, args.runs, args.threads)
        theirs = time_ort(path, args.batch, args.runs, args.threads)
        lines.append(f"| {name} | {args.batch} | {args.threads} | {ours:.2f} | {theirs:.2f} | {ours / theirs:.2f}x |")
        print(lines[-1], flush=True)
    table = "\n".join(lines)
    with open(os.path.join(args.out, "bench_cpu.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
