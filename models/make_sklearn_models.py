#!/usr/bin/env python3
"""Builds models/sklearn_ml_ops: scikit-learn estimators converted by skl2onnx (the exporter
scikit-learn users ship with), merged into one model whose outputs ONNX Runtime (CPU) computed, in
the ONNX test layout (see make_small_models.py). It carries the ai.onnx.ml ops skl2onnx writes:
LinearClassifier (multinomial, one-vs-rest, binary, LinearSVC), LinearRegressor (one and two
targets), TreeEnsembleClassifier (decision tree, random forest, extra trees, gradient boosting:
binary and multiclass), TreeEnsembleRegressor (also with two targets),
SVMClassifier (RBF / linear / polynomial / sigmoid kernels, with and without probabilities),
SVMRegressor (SVR, NuSVR, one-class SVM), Scaler, Normalizer (L1, L2, MAX), Imputer,
OneHotEncoder (strings and integers), LabelEncoder, Binarizer, and, written node by node,
CategoryMapper (both ways), FeatureVectorizer, the tree ensembles' other aggregates and
post_transforms, and the standard ops that move string elements (see handwritten()).

Classifiers are converted with zipmap=False (their probabilities as one [N, classes] tensor).
Needs `python3 -m pip install onnx onnxruntime numpy scikit-learn skl2onnx`. Deterministic: rerunning
gives the same files (seeded data and estimators)."""
import warnings

import numpy as np
import onnx
from onnx import TensorProto, compose, helper
from skl2onnx import to_onnx
from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType, Int64TensorType, StringTensorType
from sklearn import ensemble, impute, linear_model, pipeline, preprocessing, svm, tree
from sklearn.datasets import make_classification

from make_small_models import save

OPSETS = {"": 19, "ai.onnx.ml": 3}
ROWS = 24


def data(rng):
    x3, y3 = make_classification(n_samples=200, n_features=6, n_informative=4, n_classes=3, random_state=0)
    y2 = (x3[:, 0] + x3[:, 1] * x3[:, 2] > 0).astype(np.int64)
    target = x3 @ rng.standard_normal(6) + np.sin(x3[:, 3]) * 3
    return x3.astype(np.float32), y3, y2, target, np.stack([target, x3[:, 1] ** 2], axis=1)


def estimators(rng):
    """(name, estimator, which target: 3 / 2 / "r" / "r2" / None, input kind)."""
    return [
        ("logreg_multinomial", linear_model.LogisticRegression(max_iter=500), 3, "X"),
        ("logreg_ovr", pipeline.make_pipeline(preprocessing.StandardScaler(), linear_model.LogisticRegression(
            max_iter=500, class_weight="balanced")), 3, "X"),
        ("logreg_binary", linear_model.LogisticRegression(), 2, "X"),
        ("linear_svc", svm.LinearSVC(random_state=0), 3, "X"),
        ("linear_svc_binary", svm.LinearSVC(random_state=0), 2, "X"),
        ("linreg", linear_model.LinearRegression(), "r", "X"),
        ("ridge_two_targets", linear_model.Ridge(), "r2", "X"),
        ("decision_tree", tree.DecisionTreeClassifier(max_depth=5, random_state=0), 3, "X"),
        ("random_forest_binary", ensemble.RandomForestClassifier(n_estimators=6, max_depth=5, random_state=0), 2, "X"),
        ("extra_trees", ensemble.ExtraTreesClassifier(n_estimators=4, max_depth=4, random_state=0), 3, "X"),
        ("gboost_binary", ensemble.GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=0), 2, "X"),
        ("gboost_multiclass", ensemble.GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0), 3, "X"),
        ("gboost_regressor", ensemble.GradientBoostingRegressor(n_estimators=8, random_state=0), "r", "X"),
        ("forest_regressor_two_targets", ensemble.RandomForestRegressor(n_estimators=4, max_depth=5, random_state=0),
         "r2", "X"),
        ("svc_rbf_probability", svm.SVC(probability=True, random_state=0), 3, "X"),
        ("svc_linear_binary_probability", svm.SVC(kernel="linear", probability=True, random_state=0), 2, "X"),
        ("svc_poly", svm.SVC(kernel="poly", degree=2, random_state=0), 3, "X"),
        ("svc_sigmoid_binary", svm.SVC(kernel="sigmoid", gamma=0.05, random_state=0), 2, "X"),
        ("svr_rbf", svm.SVR(C=10.0), "r", "X"),
        ("nu_svr_linear", svm.NuSVR(kernel="linear"), "r", "X"),
        ("one_class_svm", svm.OneClassSVM(gamma=0.2), None, "X"),
        ("scalers", pipeline.make_pipeline(impute.SimpleImputer(strategy="median"), preprocessing.StandardScaler(),
                                           preprocessing.MinMaxScaler(), preprocessing.Normalizer(norm="l1"),
                                           preprocessing.Normalizer(norm="max"), preprocessing.Normalizer(),
                                           linear_model.LinearRegression()), "r", "X_missing"),
        ("binarizer", preprocessing.Binarizer(threshold=0.3), None, "X"),
        ("onehot_ints", preprocessing.OneHotEncoder(handle_unknown="ignore"), None, "I"),
        ("onehot_strings", preprocessing.OneHotEncoder(handle_unknown="ignore"), None, "S"),
        ("ordinal_strings", preprocessing.OrdinalEncoder(), None, "S"),
    ]


INPUT_TYPES = {"X": FloatTensorType([None, 6]), "X64": DoubleTensorType([None, 6]),
               "X_missing": FloatTensorType([None, 6]), "I": Int64TensorType([None, 2]),
               "S": StringTensorType([None, 1])}


def inputs(rng, x):
    rows = x[:ROWS]
    missing = rows.copy()
    missing[rng.random(missing.shape) < 0.2] = np.nan
    ints = (np.abs(rows[:, :2]) * 2).round().astype(np.int64)
    strings = np.array([["cat", "dog", "bird", "fish"][i % 4] for i in range(ROWS)], dtype=object).reshape(-1, 1)
    strings[5, 0] = "unseen"
    return {"X": rows, "X64": rows.astype(np.float64), "X_missing": missing, "I": ints, "S": strings}


def fit(estimator, target, kind, x, y3, y2, regression, two_targets, feeds):
    train = {"X": x, "X64": x.astype(np.float64), "X_missing": x, "I": (np.abs(x[:, :2]) * 2).round().astype(np.int64),
             "S": np.array([["cat", "dog", "bird", "fish"][i % 4] for i in range(len(x))], dtype=object)[:, None]}[kind]
    labels = {3: y3, 2: y2, "r": regression, "r2": two_targets, None: None}[target]
    estimator.fit(train, labels) if labels is not None else estimator.fit(train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        types = [(kind, INPUT_TYPES[kind])]
        try:  # classifiers with probabilities take zipmap; LinearSVC has no such option
            return to_onnx(estimator, initial_types=types, options={"zipmap": False}, target_opset=OPSETS)
        except NameError:
            return to_onnx(estimator, initial_types=types, target_opset=OPSETS)


def tree_attrs():
    """Two small trees over 6 features (one with a NaN-tracking branch), leaves 3, 4 / 2, 3, 4."""
    return dict(nodes_treeids=[0] * 5 + [1] * 5, nodes_nodeids=[0, 1, 2, 3, 4] * 2,
                nodes_featureids=[0, 1, 0, 0, 0, 2, 3, 0, 0, 0], nodes_values=[0.1, -0.3, 0, 0, 0, 0.5, 0.2, 0, 0, 0],
                nodes_modes=["BRANCH_LEQ", "BRANCH_GT", "LEAF", "LEAF", "LEAF",
                             "BRANCH_LT", "LEAF", "BRANCH_GTE", "LEAF", "LEAF"],
                nodes_truenodeids=[1, 3, 0, 0, 0, 1, 0, 3, 0, 0], nodes_falsenodeids=[2, 4, 0, 0, 0, 2, 0, 4, 0, 0],
                nodes_missing_value_tracks_true=[0, 1, 0, 0, 0, 1, 0, 0, 0, 0])


def handwritten():
    """What skl2onnx does not write: CategoryMapper both ways, FeatureVectorizer, the tree ensembles'
    other aggregates and post_transforms (PROBIT, SOFTMAX_ZERO, two targets with MIN), and the ops
    that move string elements (Transpose, Concat, Slice, Where, Compress, GatherElements,
    ScatterElements, Split, Expand, Tile)."""
    ml = "ai.onnx.ml"
    leaves = [(0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4)]
    ints = lambda name, v: onnx.numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    nodes = [
        helper.make_node("CategoryMapper", ["S"], ["category_ids"], domain=ml, cats_strings=["bird", "cat", "dog"],
                         cats_int64s=[10, 20, 30], default_int64=-7),
        helper.make_node("CategoryMapper", ["I"], ["category_names"], domain=ml, cats_strings=["bird", "cat", "dog"],
                         cats_int64s=[0, 1, 2], default_string="other"),
        helper.make_node("FeatureVectorizer", ["X", "X_missing"], ["features"], domain=ml, inputdimensions=[6, 4]),
        helper.make_node("TreeEnsembleRegressor", ["X_missing"], ["trees_min_two_targets"], domain=ml, **tree_attrs(),
                         n_targets=2, aggregate_function="MIN", base_values=[0.5, -0.5],
                         target_treeids=[t for t, _ in leaves] + [0], target_nodeids=[n for _, n in leaves] + [4],
                         target_ids=[0, 1, 0, 1, 0, 0, 1], target_weights=[0.3, -1.2, 2.0, 0.7, -0.1, 1.1, 0.4]),
        helper.make_node("TreeEnsembleRegressor", ["X"], ["trees_probit"], domain=ml, **tree_attrs(),
                         n_targets=1, aggregate_function="AVERAGE", post_transform="PROBIT", target_treeids=[t for t, _ in leaves],
                         target_nodeids=[n for _, n in leaves], target_ids=[0] * 6,
                         target_weights=[0.2, 0.45, 0.9, 0.6, 0.35, 0.75]),
        helper.make_node("TreeEnsembleClassifier", ["X"], ["trees_label", "trees_softmax_zero"], domain=ml,
                         **tree_attrs(), classlabels_strings=["a", "b", "c"], post_transform="SOFTMAX_ZERO",
                         class_treeids=[t for t, _ in leaves], class_nodeids=[n for _, n in leaves],
                         class_ids=[0, 1, 2, 2, 1, 0], class_weights=[0.5, -0.2, 1.5, 0.8, 0.0, -0.7]),
        helper.make_node("Transpose", ["S"], ["strings_transposed"]),
        helper.make_node("Concat", ["S", "category_names"], ["strings_joined"], axis=1),
        helper.make_node("Slice", ["strings_joined", "starts", "ends", "axes"], ["strings_sliced"]),
        helper.make_node("Slice", ["category_names", "zero", "one", "one"], ["category_names_first"]),
        helper.make_node("Equal", ["S", "category_names_first"], ["same"]),
        helper.make_node("Where", ["same", "S", "category_names_first"], ["strings_where"]),
        helper.make_node("Compress", ["strings_joined", "keep"], ["strings_compressed"], axis=1),
        helper.make_node("GatherElements", ["strings_joined", "picks"], ["strings_gathered"], axis=1),
        helper.make_node("ScatterElements", ["strings_joined", "picks", "category_names_first"], ["strings_scattered"],
                         axis=1),
        helper.make_node("Split", ["strings_joined"], ["strings_split_0", "strings_split_1"], axis=1, num_outputs=2),
        helper.make_node("Expand", ["S", "wide"], ["strings_expanded"]),
        helper.make_node("Tile", ["S", "twice"], ["strings_tiled"]),
    ]
    inits = [ints("starts", [2, 1]), ints("ends", [20, 3]), ints("axes", [0, 1]), ints("zero", [0]), ints("one", [1]),
             ints("picks", [[2]] * ROWS), ints("wide", [ROWS, 3]), ints("twice", [1, 2]),
             onnx.numpy_helper.from_array(np.array([True, False, True]), "keep")]
    string_outputs = ["category_names", "strings_transposed", "strings_joined", "strings_sliced", "strings_where",
                      "strings_compressed", "strings_gathered", "strings_scattered", "strings_split_0",
                      "strings_split_1", "strings_expanded", "strings_tiled", "trees_label"]
    float_outputs = ["features", "trees_min_two_targets", "trees_probit", "trees_softmax_zero"]
    graph = helper.make_graph(nodes, "handwritten", [
        helper.make_tensor_value_info("S", TensorProto.STRING, [None, 1]),
        helper.make_tensor_value_info("I", TensorProto.INT64, [None, 2]),
        helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 6]),
        helper.make_tensor_value_info("X_missing", TensorProto.FLOAT, [None, 6])],
        [helper.make_tensor_value_info("category_ids", TensorProto.INT64, [None, 1])] +
        [helper.make_tensor_value_info(n, TensorProto.STRING, [None] * (1 if n == "trees_label" else 2))
         for n in string_outputs] +
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None, None]) for n in float_outputs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19), helper.make_opsetid(ml, 3)])


def merge(parts, feeds):
    """One graph: every part's nodes, initializers and outputs under its name; the inputs shared."""
    nodes, inits, outputs, inputs_used = [], [], [], {}
    for name, model in parts:
        model = compose.add_prefix(model, name + "_", rename_inputs=False)
        nodes += model.graph.node
        inits += model.graph.initializer
        outputs += model.graph.output
        for i in model.graph.input:
            inputs_used.setdefault(i.name, i)
    graph_inputs = [inputs_used[k] for k in feeds if k in inputs_used]
    graph = helper.make_graph(nodes, "sklearn_ml_ops", graph_inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in OPSETS.items()],
                              producer_name="skl2onnx (merged by models/make_sklearn_models.py)")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, [feeds[i.name] for i in graph_inputs]


def sklearn_ml_ops(rng):
    x, y3, y2, regression, two_targets = data(rng)
    feeds = inputs(rng, x)
    parts = [(name, fit(est, target, kind, x, y3, y2, regression, two_targets, feeds))
             for name, est, target, kind in estimators(rng)]
    parts.append(("handwritten", handwritten()))
    return merge(parts, feeds)


if __name__ == "__main__":
    save("sklearn_ml_ops", *sklearn_ml_ops(np.random.default_rng(21)))
