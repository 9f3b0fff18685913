"""Batch-1 throughput of one model from K Python threads: one Session shared (K execution contexts)
against K Sessions (one each), and one thread alone; host-to-host, numpy inputs, the GIL released
during runs. Tells whether requests in flight are limited by the GPU or by what a Session shares.

  python3 bench/threads_vs_sessions.py MODEL.onnx [--threads 4] [--runs 400] [--precision fp16]"""
import argparse
import threading
import time

import numpy as np

import onnxrun


def throughput(sessions, threads, runs, feeds):
    for s in sessions:
        for _ in range(20):
            s.run(feeds)
    start_line = threading.Barrier(threads + 1)

    def work(i):
        s = sessions[i % len(sessions)]
        for _ in range(5):
            s.run(feeds)  # this thread's context captures its graph
        start_line.wait()
        for _ in range(runs):
            s.run(feeds)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    start_line.wait()
    start = time.perf_counter()
    for w in workers:
        w.join()
    return threads * runs / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--precision", default="fp16")
    args = parser.parse_args()
    make = lambda: onnxrun.Session(args.model, device="cuda", precision=args.precision)  # noqa: E731
    first = make()
    info = first.inputs[0]
    shape = [d if isinstance(d, int) else 1 for d in info["shape"]]
    feeds = {info["name"]: np.random.default_rng(0).standard_normal(shape).astype(np.float32)}
    one = throughput([first], 1, args.runs, feeds)
    shared = throughput([first], args.threads, args.runs, feeds)
    separate = throughput([first] + [make() for _ in range(args.threads - 1)], args.threads, args.runs, feeds)
    print(f"1 thread: {one:.0f} req/s; {args.threads} threads on one Session: {shared:.0f} req/s "
          f"({shared / one:.2f}x); {args.threads} threads on {args.threads} Sessions: {separate:.0f} req/s "
          f"({separate / one:.2f}x)")


if __name__ == "__main__":
    main()
