#!/usr/bin/env python3
"""Writes tests/zipmap/cases: scikit-learn classifiers converted by skl2onnx with its defaults, so
that their probabilities come out of a ZipMap as a sequence of maps ({label: probability} per row,
int64 or string labels), plus ZipMap nodes written by hand (a 1-D input, string labels, labels out of
order and repeated), each with
the outputs ONNX Runtime (CPU) computed, in the ONNX test layout (maps as SequenceProto of
MapProto, as onnx.numpy_helper.from_list writes them).
Needs `python3 -m pip install onnx onnxruntime numpy scikit-learn skl2onnx`. Deterministic inputs and
outputs (skl2onnx may name model internals differently on a rerun)."""
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from skl2onnx import to_onnx
from skl2onnx.common.data_types import FloatTensorType
from sklearn import ensemble, linear_model, pipeline, preprocessing, svm, tree
from sklearn.datasets import make_classification

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from ort_case import write_case  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
OPSETS = {"": 17, "ai.onnx.ml": 3}


def classifiers():
    """(name, estimator, labels: 'int3' / 'str3' / 'int2' / 'str2', skl2onnx options)."""
    return [
        ("logreg_int_labels", linear_model.LogisticRegression(max_iter=500), "int3", None),
        ("pipeline_scaler_logreg", pipeline.make_pipeline(preprocessing.StandardScaler(),
                                                          linear_model.LogisticRegression(max_iter=500)), "int3", None),
        ("forest_string_labels", ensemble.RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0),
         "str3", None),
        ("tree_binary_string_labels", tree.DecisionTreeClassifier(max_depth=4, random_state=0), "str2", None),
        ("svc_binary_probability", svm.SVC(probability=True, random_state=0), "int2", None),
        ("gboost_binary", ensemble.GradientBoostingClassifier(n_estimators=6, random_state=0), "int2", None),
        ("logreg_zipmap_columns", linear_model.LogisticRegression(max_iter=500), "str3", {"zipmap": "columns"}),
    ]


def labels(kind, y3, y2):
    names = np.array(["setosa", "versicolor", "virginica"])
    return {"int3": y3 * 10 + 1, "str3": names[y3], "int2": y2, "str2": np.array(["no", "yes"])[y2]}[kind]


def to_proto(value, name):
    """ORT's output -> the proto the ONNX test layout stores (a list of dicts: SequenceProto of MAP)."""
    if isinstance(value, list):
        return onnx.helper.make_sequence(name, onnx.SequenceProto.MAP, [to_map(row) for row in value])
    return numpy_helper.from_array(np.asarray(value), name)


def to_map(row):
    """{label: probability} -> MapProto (numpy_helper.from_dict's layout; it cannot take str keys)."""
    string_keys = isinstance(next(iter(row)), str)
    keys = [k.encode() for k in row] if string_keys else [int(k) for k in row]
    values = onnx.helper.make_sequence("", onnx.SequenceProto.TENSOR,
                                       [numpy_helper.from_array(np.float32(v)) for v in row.values()])
    return onnx.helper.make_map("", TensorProto.STRING if string_keys else TensorProto.INT64, keys, values)


def save(name, model, feeds):
    write_case(HERE, name, model, feeds, output_proto=to_proto)


def handwritten(rows):
    """ZipMap alone: [N, 4] scores to string labels, and a 1-D [3] row to int64 labels."""
    nodes = [helper.make_node("ZipMap", ["scores"], ["by_name"], domain="ai.onnx.ml",
                              classlabels_strings=["a", "b", "c", "d"]),
             helper.make_node("ZipMap", ["row"], ["by_id"], domain="ai.onnx.ml", classlabels_int64s=[-5, 0, 7])]
    seq_map = lambda key: helper.make_value_info(
        "", helper.make_sequence_type_proto(helper.make_map_type_proto(key, helper.make_tensor_type_proto(
            TensorProto.FLOAT, None))))
    outputs = []
    for out, key in (("by_name", TensorProto.STRING), ("by_id", TensorProto.INT64)):
        info = seq_map(key)
        info.name = out
        outputs.append(info)
    graph = helper.make_graph(nodes, "zipmap", [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [None, 4]),
                                                helper.make_tensor_value_info("row", TensorProto.FLOAT, [3])], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 8
    rng = np.random.default_rng(3)
    feeds = {"scores": rng.standard_normal((rows, 4)).astype(np.float32),
             "row": np.array([0.25, -1.5, 3.0], dtype=np.float32)}
    return model, feeds


def unsorted_labels():
    """Labels out of order and repeated: ORT's maps hold them sorted, a repeated label's last column."""
    nodes = [helper.make_node("ZipMap", ["scores"], ["by_id"], domain="ai.onnx.ml", classlabels_int64s=[7, -5, 0, 7]),
             helper.make_node("ZipMap", ["scores"], ["by_name"], domain="ai.onnx.ml",
                              classlabels_strings=["b", "a", "c", "a"])]
    outputs = []
    for out, key in (("by_id", TensorProto.INT64), ("by_name", TensorProto.STRING)):
        info = helper.make_value_info(out, helper.make_sequence_type_proto(helper.make_map_type_proto(
            key, helper.make_tensor_type_proto(TensorProto.FLOAT, None))))
        outputs.append(info)
    graph = helper.make_graph(nodes, "zipmap_unsorted", [helper.make_tensor_value_info("scores", TensorProto.FLOAT,
                                                                                        [None, 4])], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 8
    return model, {"scores": np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)}


def main():
    shutil.rmtree(HERE, ignore_errors=True)
    x, y3 = make_classification(n_samples=200, n_features=6, n_informative=4, n_classes=3, random_state=0)
    y2 = (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype(np.int64)
    x = x.astype(np.float32)
    for name, estimator, kind, options in classifiers():
        estimator.fit(x, labels(kind, y3, y2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = to_onnx(estimator, initial_types=[("X", FloatTensorType([None, 6]))], options=options,
                            target_opset=OPSETS)
        save(name, model, {"X": x[:20]})
    save("handwritten", *handwritten(7))
    save("handwritten_unsorted_labels", *unsorted_labels())


if __name__ == "__main__":
    main()
