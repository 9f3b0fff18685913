"""Exports the architecture sweep (torchvision architectures and small models of common export
patterns) to ONNX, with torch's outputs as the reference.

Usage: /usr/bin/python3 models/sweep/export_sweep.py OUT_DIR [NAME ...]
       /usr/bin/python3 models/sweep/export_sweep.py --list

Each case is exported the way users typically do it: model.eval(), torch.onnx.export's defaults
(do_constant_folding=True, TrainingMode.EVAL) at the case's opset. With no NAME, all cases run; an
export that fails is reported and the sweep goes on. Per case, in the ONNX backend-test layout:

  OUT_DIR/<name>/model.onnx
  OUT_DIR/<name>/test_data_set_0/input_<i>.pb    graph-input order
  OUT_DIR/<name>/test_data_set_0/output_<i>.pb   torch's float32 outputs, flattened in order
  OUT_DIR/<name>/meta.json                       opset, ops used, node count, output shapes, time

and OUT_DIR/export_status.json accumulates every case's result over runs. Needs Debian's
python3-torch (1.13), python3-torchvision (0.14) and python3-onnx, hence /usr/bin/python3.
"""

import json
import os
import sys
import time
import traceback

import onnx
from onnx import numpy_helper
import torch

import cases_small
import cases_vision

SEED = 0
NUM_THREADS = 2  # as the reference outputs were made with
CASES = {**cases_vision.CASES, **cases_small.CASES}


def flatten_tensors(obj):
    """The tensors of nested lists, tuples and dicts, in order (torch.onnx.export's flattening)."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in flatten_tensors(item)]
    raise TypeError(f"not a tensor or a container of tensors: {type(obj)}")


def write_tensor(tensor, name, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(tensor.detach().cpu().numpy(), name).SerializeToString())


def output_names(case, n_outputs):
    if case.output_names is not None and len(case.output_names) == n_outputs:
        return case.output_names
    return [f"out_{i}" for i in range(n_outputs)]


def dynamic_axes(case, out_names):
    if case.dynamic_batch:
        return {name: {0: "N"} for name in case.input_names + out_names}
    return case.dynamic_axes


def graph_input_names(proto):
    initializers = {init.name for init in proto.graph.initializer}
    return [i.name for i in proto.graph.input if i.name not in initializers]


def write_test_data(proto, inputs, outputs, data_dir):
    in_names = graph_input_names(proto)
    if len(in_names) != len(inputs):
        raise RuntimeError(f"graph has {len(in_names)} inputs {in_names}, torch has {len(inputs)}")
    if len(proto.graph.output) != len(outputs):
        raise RuntimeError(f"graph has {len(proto.graph.output)} outputs, torch has {len(outputs)}")
    os.makedirs(data_dir, exist_ok=True)
    for i, (name, tensor) in enumerate(zip(in_names, inputs)):
        write_tensor(tensor, name, os.path.join(data_dir, f"input_{i}.pb"))
    for i, (output, tensor) in enumerate(zip(proto.graph.output, outputs)):
        write_tensor(tensor, output.name, os.path.join(data_dir, f"output_{i}.pb"))


def export_case(name, case, out_dir):
    """Exports one case into OUT_DIR/<name>; returns its meta.json record."""
    start = time.time()
    torch.manual_seed(SEED)
    model, inputs = case.make()
    model.eval()
    test_inputs = case.make_test_inputs() if case.make_test_inputs else None
    with torch.no_grad():
        outputs = flatten_tensors(model(*(test_inputs or inputs)))

    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir, exist_ok=True)
    model_path = os.path.join(case_dir, "model.onnx")
    out_names = output_names(case, len(outputs))
    axes = dynamic_axes(case, out_names)
    torch.onnx.export(model, inputs, model_path, opset_version=case.opset,
                      input_names=case.input_names, output_names=out_names,
                      **({"dynamic_axes": axes} if axes else {}))
    proto = onnx.load(model_path)
    write_test_data(proto, flatten_tensors(test_inputs or inputs), outputs,
                    os.path.join(case_dir, "test_data_set_0"))

    meta = dict(name=name, opset=case.opset, ops=sorted({n.op_type for n in proto.graph.node}),
                nodes=len(proto.graph.node), out_shapes=[tuple(t.shape) for t in outputs],
                dyn=bool(axes), test_batch_differs=test_inputs is not None,
                seconds=round(time.time() - start, 1))
    with open(os.path.join(case_dir, "meta.json"), "w") as f:
        json.dump(meta, f)
    return meta


def run_case(name, out_dir):
    """Exports one case, prints a status line and returns the case's export_status.json record."""
    case = CASES[name]
    try:
        meta = export_case(name, case, out_dir)
    except Exception as e:  # a failed export is a result of the sweep, not an error of it
        message = "".join(traceback.format_exception_only(type(e), e)).strip()
        print(f"FAIL {name}: {message[-600:]}", flush=True)
        return dict(ok=False, opset=case.opset, error=message[-2000:])
    shapes = meta["out_shapes"]
    print(f"OK   {name}: {meta['nodes']} nodes, {meta['seconds']} s, outs {shapes[:6]}"
          f"{'...' if len(shapes) > 6 else ''}", flush=True)
    return dict(ok=True, **meta)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    if argv[1] == "--list":
        print("\n".join(CASES))
        return 0
    out_dir = argv[1]
    names = argv[2:] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"export_sweep.py: unknown case(s) {unknown}; --list lists them", file=sys.stderr)
        return 2
    torch.set_num_threads(NUM_THREADS)
    os.makedirs(out_dir, exist_ok=True)
    status_path = os.path.join(out_dir, "export_status.json")
    status = {}
    if os.path.exists(status_path):
        with open(status_path) as f:
            status = json.load(f)
    for name in names:
        status[name] = run_case(name, out_dir)
        with open(status_path, "w") as f:
            json.dump(status, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
