#!/usr/bin/env python3
"""Runs `onnxrun --device cpu --input-dir CASE/test_data_set_0 --output-dir OUT CASE/model.onnx`
on every ONNX backend case whose ops are all supported (per `onnxrun --list-ops`), compares the
written outputs with the stored ones (numpy, rtol 1e-3, atol 1e-7) and prints the pass rate.
Independent of the C++ test runner. Needs `python3 -m pip install onnx numpy`.
usage: tools/check_cli_conformance.py [ONNXRUN] [DATA_ROOT]"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

onnxrun = sys.argv[1] if len(sys.argv) > 1 else "bazel-bin/cli/onnxrun"
root = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/libonnx-testdata/data"
supported = {line.split()[0] for line in subprocess.run([onnxrun, "--list-ops"], capture_output=True, text=True,
                                                       check=True).stdout.splitlines()
             if line and not line.startswith("#")}


def case_ops(model_path):
    model = onnx.load(model_path, load_external_data=False)
    return {(n.domain or "") + ("." if n.domain else "") + n.op_type for n in model.graph.node}


def outputs_match(case, out_dir):
    expected = sorted(glob.glob(os.path.join(case, "test_data_set_0", "output_*.pb")))
    for path in expected:
        want = numpy_helper.to_array(onnx.load_tensor(path))
        got_path = os.path.join(out_dir, os.path.basename(path))
        if not os.path.exists(got_path):
            return False
        got = numpy_helper.to_array(onnx.load_tensor(got_path))
        if got.shape != want.shape or got.dtype != want.dtype:
            return False
        if want.dtype.kind in "fc":
            if not np.allclose(got, want, rtol=1e-3, atol=1e-7, equal_nan=True):
                return False
        elif not np.array_equal(got, want):
            return False
    return True


results = {"pass": [], "fail": []}
for suite in ("node", "pytorch-converted", "pytorch-operator", "simple"):
    for case in sorted(glob.glob(os.path.join(root, suite, "test_*"))):
        model = os.path.join(case, "model.onnx")
        if not os.path.exists(model) or not case_ops(model) <= supported:
            continue
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run([onnxrun, "--device", "cpu", "--input-dir",
                                  os.path.join(case, "test_data_set_0"), "--output-dir", out, model],
                                 capture_output=True, text=True)
            ok = run.returncode == 0 and outputs_match(case, out)
        results["pass" if ok else "fail"].append(f"{suite}/{os.path.basename(case)}")

total = len(results["pass"]) + len(results["fail"])
for name in results["fail"]:
    print("FAIL", name)
print(f"{len(results['pass'])} of {total} cases with supported ops match "
      f"({100.0 * len(results['pass']) / max(total, 1):.1f}%)")
