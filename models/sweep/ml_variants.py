"""Single-node variants of the ai.onnx.ml model ops (TreeEnsembleRegressor / Classifier with every
aggregate, post_transform, base_values and two-class form on random trees with NaN tracking;
LinearClassifier / Regressor with and without labels; SVMClassifier with every kernel, two or three
classes, with and without probabilities; linear-mode SVMs; SVMRegressor and one-class; Normalizer,
Scaler, Imputer and OneHotEncoder on other dtypes), each with ONNX Runtime's outputs (one thread),
in the ONNX test layout. Cases whose outputs ORT leaves undefined are not written.

  python3 models/sweep/ml_variants.py OUT_DIR && onnxrun test OUT_DIR     # 331 cases

Needs `pip install onnx onnxruntime numpy`."""
import itertools
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else "ml_variants"
shutil.rmtree(OUT, ignore_errors=True)
rng = np.random.default_rng(5)
F = 4
def save(name, node, inputs, out_types):
    ins = [helper.make_tensor_value_info(n, dt, None) for n, (dt, _) in inputs.items()]
    outs = [helper.make_tensor_value_info(n, dt, None) for n, dt in out_types]
    g = helper.make_graph([node], name, ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])
    m.ir_version = 8
    try:
        so = ort.SessionOptions(); so.intra_op_num_threads = 1
        s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        res = s.run(None, {n: v for n, (_, v) in inputs.items()})
    except Exception as e:
        print("ORT refuses", name, str(e)[:150]); return
    d = os.path.join(OUT, name, "test_data_set_0"); os.makedirs(d)
    onnx.save(m, os.path.join(OUT, name, "model.onnx"))
    for i, (n, (_, v)) in enumerate(inputs.items()):
        onnx.save_tensor(numpy_helper.from_array(v, n), os.path.join(d, f"input_{i}.pb"))
    for i, ((n, _), v) in enumerate(zip(out_types, res)):
        onnx.save_tensor(numpy_helper.from_array(v, n), os.path.join(d, f"output_{i}.pb"))

def random_trees(n_trees, depth, n_out, weights_fn):
    attrs = dict(nodes_treeids=[], nodes_nodeids=[], nodes_featureids=[], nodes_values=[], nodes_modes=[],
                 nodes_truenodeids=[], nodes_falsenodeids=[], nodes_missing_value_tracks_true=[])
    leaves = []
    modes = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]
    for t in range(n_trees):
        nid = [0]
        def build(d):
            me = nid[0]; nid[0] += 1
            idx = len(attrs["nodes_nodeids"])
            for k in attrs: attrs[k].append(0)
            attrs["nodes_treeids"][idx] = t; attrs["nodes_nodeids"][idx] = me
            if d == depth or rng.random() < 0.15:
                attrs["nodes_modes"][idx] = "LEAF"; attrs["nodes_values"][idx] = float(rng.normal())
                leaves.append((t, me))
                return me
            attrs["nodes_modes"][idx] = modes[rng.integers(0, 4)] if rng.random() < 0.9 else modes[rng.integers(4, 6)]
            attrs["nodes_featureids"][idx] = int(rng.integers(0, F))
            attrs["nodes_values"][idx] = float(np.float32(rng.normal() if attrs["nodes_modes"][idx] not in ("BRANCH_EQ", "BRANCH_NEQ") else 1.0))
            attrs["nodes_missing_value_tracks_true"][idx] = int(rng.random() < 0.5)
            tr = build(d + 1); fa = build(d + 1)
            attrs["nodes_truenodeids"][idx] = tr; attrs["nodes_falsenodeids"][idx] = fa
            return me
        build(0)
    w = weights_fn(leaves)
    return attrs, w

X = rng.normal(size=(40, F)).astype(np.float32)
X[::7, 1] = np.nan
X[3, 2] = 1.0
X64 = X.astype(np.float64)

# Regressors
for agg, post, nt, base, rows in itertools.product(["SUM", "AVERAGE", "MIN", "MAX"], ["NONE", "PROBIT", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"], [1, 3], [False, True], [False]):
    def wf(leaves):
        ids, nodes, trees, ws = [], [], [], []
        for t, n in leaves:
            for k in range(nt):
                if nt > 1 and rng.random() < 0.3: continue
                trees.append(t); nodes.append(n); ids.append(k); ws.append(float(rng.normal()))
        return dict(target_treeids=trees, target_nodeids=nodes, target_ids=ids, target_weights=ws)
    attrs, w = random_trees(3, 3, nt, wf)
    kw = dict(attrs, **w, n_targets=nt, aggregate_function=agg, post_transform=post)
    if base: kw["base_values"] = [float(v) for v in rng.normal(size=nt)]
    if post == "PROBIT":  # probit needs [0,1]
        kw["target_weights"] = [abs(v) / 10 for v in kw["target_weights"]]
        if base: kw["base_values"] = [0.1] * nt
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml", **kw)
    save(f"ter_{agg}_{post}_{nt}_{int(base)}", node, {"X": (TensorProto.FLOAT, X)}, [("Y", TensorProto.FLOAT)])
# Double input regressor
attrs, w = random_trees(2, 3, 1, lambda L: dict(target_treeids=[t for t, n in L], target_nodeids=[n for t, n in L], target_ids=[0]*len(L), target_weights=[float(rng.normal()) for _ in L]))
save("ter_double", helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml", **attrs, **w, n_targets=1), {"X": (TensorProto.DOUBLE, X64)}, [("Y", TensorProto.FLOAT)])

# Classifiers
for k, post, base, which, positive, labels in itertools.product([2, 3], ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"], [0, 1, 2], ["one", "both"], [True, False], ["ints", "strings"]):
    if k == 3 and (which == "one" or base == 1): continue
    if post == "PROBIT" and base != 2: continue  # ORT leaves Z[1] undefined when class 1 has no score
    def wf(leaves):
        trees, nodes, ids, ws = [], [], [], []
        for t, n in leaves:
            cls = [0] if which == "one" else list(range(k))
            for c in cls:
                if which == "both" and rng.random() < 0.3: continue
                v = float(rng.uniform(0, 1)) if positive else float(rng.normal())
                trees.append(t); nodes.append(n); ids.append(c); ws.append(v)
        return dict(class_treeids=trees, class_nodeids=nodes, class_ids=ids, class_weights=ws)
    attrs, w = random_trees(3, 3, k, wf)
    kw = dict(attrs, **w, post_transform=post)
    if labels == "ints": kw["classlabels_int64s"] = [10 * (i + 1) for i in range(k)]
    else: kw["classlabels_strings"] = [f"c{i}" for i in range(k)]
    if base: kw["base_values"] = [float(v) for v in rng.uniform(0, 0.3, size=base if k == 2 else k)]
    if post == "PROBIT": kw["class_weights"] = [abs(v) / 10 for v in kw["class_weights"]]
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["Y", "Z"], domain="ai.onnx.ml", **kw)
    save(f"tec_{k}_{post}_{base}_{which}_{int(positive)}_{labels}", node, {"X": (TensorProto.FLOAT, X)},
         [("Y", TensorProto.STRING if labels == "strings" else TensorProto.INT64), ("Z", TensorProto.FLOAT)])

# Linear classifiers
Xn = np.nan_to_num(X)
for c, post, labels in itertools.product([1, 2, 4], ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"], ["none", "ints", "strings"]):
    if c > 1 and labels == "none": continue
    if post == "PROBIT" and c == 1 and labels != "none": continue
    kw = dict(coefficients=[float(v) for v in rng.normal(size=c * F) * (0.1 if post == "PROBIT" else 1)], intercepts=[float(v) for v in rng.normal(size=c) * 0.1], post_transform=post)
    if post == "PROBIT": kw["intercepts"] = [0.5] * c
    n = 2 if c == 1 else c
    if labels == "ints": kw["classlabels_ints"] = list(range(5, 5 + n))
    if labels == "strings": kw["classlabels_strings"] = [f"l{i}" for i in range(n)]
    node = helper.make_node("LinearClassifier", ["X"], ["Y", "Z"], domain="ai.onnx.ml", **kw)
    xin = (np.abs(Xn) / 10).astype(np.float32) if post == "PROBIT" else Xn
    save(f"lc_{c}_{post}_{labels}", node, {"X": (TensorProto.FLOAT, xin)}, [("Y", TensorProto.STRING if labels == "strings" else TensorProto.INT64), ("Z", TensorProto.FLOAT)])
for t, post in itertools.product([1, 3], ["NONE", "LOGISTIC", "SOFTMAX", "PROBIT"]):
    kw = dict(coefficients=[float(v) for v in rng.normal(size=t * F) * 0.05], intercepts=[0.5] * t, targets=t, post_transform=post)
    node = helper.make_node("LinearRegressor", ["X"], ["Y"], domain="ai.onnx.ml", **kw)
    save(f"lr_{t}_{post}", node, {"X": (TensorProto.FLOAT, (np.abs(Xn) / 10).astype(np.float32))}, [("Y", TensorProto.FLOAT)])
# Int input linear classifier + normalizer/scaler variants
Xi = (Xn * 3).round().astype(np.int64)
save("lc_int_input", helper.make_node("LinearClassifier", ["X"], ["Y", "Z"], domain="ai.onnx.ml", coefficients=[float(v) for v in rng.normal(size=3 * F)], intercepts=[0.1, 0.2, 0.3], classlabels_ints=[1, 2, 3]), {"X": (TensorProto.INT64, Xi)}, [("Y", TensorProto.INT64), ("Z", TensorProto.FLOAT)])
for norm in ["MAX", "L1", "L2"]:
    save(f"norm_{norm}", helper.make_node("Normalizer", ["X"], ["Y"], domain="ai.onnx.ml", norm=norm), {"X": (TensorProto.FLOAT, Xn)}, [("Y", TensorProto.FLOAT)])
    save(f"norm_{norm}_int", helper.make_node("Normalizer", ["X"], ["Y"], domain="ai.onnx.ml", norm=norm), {"X": (TensorProto.INT64, Xi)}, [("Y", TensorProto.FLOAT)])
save("scaler_one", helper.make_node("Scaler", ["X"], ["Y"], domain="ai.onnx.ml", offset=[0.5], scale=[2.0]), {"X": (TensorProto.DOUBLE, X64)}, [("Y", TensorProto.FLOAT)])
save("scaler_int", helper.make_node("Scaler", ["X"], ["Y"], domain="ai.onnx.ml", offset=[0.5, 1, 2, 3], scale=[2.0, 1, 1, 3]), {"X": (TensorProto.INT64, Xi)}, [("Y", TensorProto.FLOAT)])
save("imputer_int", helper.make_node("Imputer", ["X"], ["Y"], domain="ai.onnx.ml", imputed_value_int64s=[7], replaced_value_int64=0), {"X": (TensorProto.INT64, Xi)}, [("Y", TensorProto.INT64)])
save("imputer_float", helper.make_node("Imputer", ["X"], ["Y"], domain="ai.onnx.ml", imputed_value_floats=[1, 2, 3, 4], replaced_value_float=float("nan")), {"X": (TensorProto.FLOAT, X)}, [("Y", TensorProto.FLOAT)])
save("onehot_float", helper.make_node("OneHotEncoder", ["X"], ["Y"], domain="ai.onnx.ml", cats_int64s=[0, 1, -1, 2]), {"X": (TensorProto.FLOAT, Xn)}, [("Y", TensorProto.FLOAT)])
# SVMs
for kernel, c, prob, post in itertools.product(["LINEAR", "POLY", "RBF", "SIGMOID"], [2, 3], [False, True], ["NONE", "LOGISTIC", "SOFTMAX"]):
    vpc = [2, 3, 2][:c]; V = sum(vpc)
    kw = dict(kernel_type=kernel, kernel_params=[0.3, 0.1, 3.0], vectors_per_class=vpc, support_vectors=[float(v) for v in rng.normal(size=V * F)],
              coefficients=[float(v) for v in rng.normal(size=(c - 1) * V)], rho=[float(v) for v in rng.normal(size=c * (c - 1) // 2) * 0.1],
              classlabels_ints=list(range(c)), post_transform=post)
    if prob: kw["prob_a"] = [float(v) for v in rng.normal(size=c * (c - 1) // 2) - 1]; kw["prob_b"] = [float(v) for v in rng.normal(size=c * (c - 1) // 2) * 0.1]
    node = helper.make_node("SVMClassifier", ["X"], ["Y", "Z"], domain="ai.onnx.ml", **kw)
    save(f"svc_{kernel}_{c}_{int(prob)}_{post}", node, {"X": (TensorProto.FLOAT, Xn)}, [("Y", TensorProto.INT64), ("Z", TensorProto.FLOAT)])
for c, post in itertools.product([2, 3], ["NONE", "LOGISTIC"]):
    kw = dict(kernel_params=[0.3, 0.1, 3.0], coefficients=[float(v) for v in rng.normal(size=c * F)], rho=[0.2], classlabels_ints=list(range(c)), post_transform=post)
    save(f"svc_linear_mode_{c}_{post}", helper.make_node("SVMClassifier", ["X"], ["Y", "Z"], domain="ai.onnx.ml", **kw), {"X": (TensorProto.FLOAT, Xn)}, [("Y", TensorProto.INT64), ("Z", TensorProto.FLOAT)])
for kernel, oc in itertools.product(["LINEAR", "RBF", "POLY"], [0, 1]):
    V = 5
    kw = dict(kernel_type=kernel, kernel_params=[0.3, 0.1, 2.0], n_supports=V, support_vectors=[float(v) for v in rng.normal(size=V * F)], coefficients=[float(v) for v in rng.normal(size=V)], rho=[0.1], one_class=oc)
    save(f"svr_{kernel}_{oc}", helper.make_node("SVMRegressor", ["X"], ["Y"], domain="ai.onnx.ml", **kw), {"X": (TensorProto.FLOAT, Xn)}, [("Y", TensorProto.FLOAT)])
print(len(os.listdir(OUT)), "cases")
