"""What the sweep's exporters for other frameworks share (export_hf.py, export_timm.py,
export_keras.py): writing a tensor of the test layout, and running every named case with failures
reported and the others still run."""

import traceback

from onnx import numpy_helper


def write_tensor(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def run_cases(names, run_one):
    """Calls run_one(name) for each name; it returns the line to print. 1 when any failed, else 0."""
    failed = 0
    for name in names:
        try:
            print(f"{name}: {run_one(name)}", flush=True)
        except Exception as e:  # a failure is reported, the others still run
            failed += 1
            last = traceback.extract_tb(e.__traceback__)[-1]
            print(f"{name}: FAILED {type(e).__name__} at {last.name}: {str(e)[:300]}", flush=True)
    return 1 if failed else 0
