# Regenerates tests/conformance/onnx_1_23_node.tar.xz: ONNX's own node test cases, made by the test-case
# generator of the onnx package from PyPI (1.23.2: `pip install onnx==1.23.2 numpy`), for every case whose
# model imports ai.onnx opset 18 to 28 — the opsets libonnx-testdata (ONNX 1.12) lacks. Usage:
#   python make_onnx_1_23_cases.py OUT 18 28 && python make_onnx_1_23_cases.py OUT ml && tar cf - -C $(dirname OUT) $(basename OUT) | xz -9 > onnx_1_23_node.tar.xz
# (the archive's top folder is "genall"; tests/conformance/conformance_test.cc unpacks it).
import os, sys
import onnx
from onnx import numpy_helper
from onnx.backend.test.case.node import collect_testcases
# `python make_onnx_1_23_cases.py OUT ml` writes only the cases of domain ai.onnx.ml (ONNX 1.12's data
# has none; the archive holds them beside the opset 18-24 ones).
out = sys.argv[1]
ml_only = sys.argv[2] == "ml"
lo, hi = (0, 0) if ml_only else (int(sys.argv[2]), int(sys.argv[3]))
n = 0
for case in collect_testcases(None):
    if case.model is None: continue
    if ml_only:
        if not any(o.domain == "ai.onnx.ml" for o in case.model.opset_import): continue
    else:
        ver = [o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx")]
        if not ver or not (lo <= ver[0] <= hi): continue
    d = os.path.join(out, case.name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    for i, (inputs, outputs) in enumerate(case.data_sets):
        ds = os.path.join(d, f"test_data_set_{i}")
        os.makedirs(ds, exist_ok=True)
        for kind, values, infos in (("input", inputs, case.model.graph.input), ("output", outputs, case.model.graph.output)):
            for j, v in enumerate(values):
                ti = infos[j].type
                if ti.HasField("sequence_type"): t = numpy_helper.from_list(v, infos[j].name)
                elif ti.HasField("optional_type"): t = numpy_helper.from_optional(v, infos[j].name)
                elif isinstance(v, onnx.TensorProto): t = v
                else: t = numpy_helper.from_array(v, infos[j].name)
                with open(os.path.join(ds, f"{kind}_{j}.pb"), "wb") as f:
                    f.write(t.SerializeToString())
    n += 1
print(n, "cases")
