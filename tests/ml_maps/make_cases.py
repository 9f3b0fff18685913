#!/usr/bin/env python3
"""Writes tests/ml_maps/cases: models whose input is a map (ONNX's map(int64 | string, T)), as
DictVectorizer and CastMap read them: scikit-learn pipelines that start with a DictVectorizer,
converted by skl2onnx with its defaults, and DictVectorizer / CastMap nodes written by hand (keys
missing from the vocabulary and absent from the map, int64 and string keys, every cast_to and
map_form, keys past max_map), each with the outputs ONNX Runtime (CPU) computed, in the ONNX test
layout (a map input as a MapProto, as onnx.helper.make_map writes it).
Needs `python3 -m pip install onnx onnxruntime numpy scikit-learn skl2onnx`. Deterministic."""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from skl2onnx import to_onnx
from skl2onnx.common.data_types import DictionaryType, FloatTensorType, StringTensorType
from sklearn import feature_extraction, linear_model, pipeline, preprocessing, tree

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from ort_case import write_case  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]


def map_proto(feed, name):
    """{key: value} -> MapProto: int64 or string keys, values a sequence of one-element tensors."""
    string_keys = isinstance(next(iter(feed)), str) if feed else False
    keys = [k.encode() for k in feed] if string_keys else [int(k) for k in feed]
    values = helper.make_sequence("", onnx.SequenceProto.TENSOR,
                                  [numpy_helper.from_array(np.float32(v)) for v in feed.values()])
    proto = helper.make_map(name, TensorProto.STRING if string_keys else TensorProto.INT64, keys, values)
    return proto


def save(name, model, feeds):
    write_case(HERE, name, model, feeds, input_proto=map_proto)


def sklearn_cases():
    """DictVectorizer first, as scikit-learn users featurise dicts: a classifier and a regressor."""
    rng = np.random.default_rng(0)
    words = ["age", "height", "weight", "income", "score"]
    rows = [{w: float(rng.normal()) for w in words if rng.random() < 0.7} for _ in range(60)]
    y = np.array([int(sum(r.values()) > 0) for r in rows])
    string_input = [("input", DictionaryType(StringTensorType([1]), FloatTensorType([1])))]
    feed = {"age": 0.5, "income": -1.25, "unseen": 3.0, "score": 2.0}
    classifier = pipeline.make_pipeline(feature_extraction.DictVectorizer(sparse=False),
                                        preprocessing.StandardScaler(), linear_model.LogisticRegression())
    classifier.fit(rows, y)
    save("dictvectorizer_logreg", to_onnx(classifier, initial_types=string_input,
                                          options={id(classifier.steps[-1][1]): {"zipmap": False}},
                                          target_opset={"": 17, "ai.onnx.ml": 3}), {"input": feed})
    regressor = pipeline.make_pipeline(feature_extraction.DictVectorizer(sparse=False),
                                       tree.DecisionTreeRegressor(max_depth=4, random_state=0))
    regressor.fit(rows, np.array([sum(r.values()) for r in rows]))
    save("dictvectorizer_tree", to_onnx(regressor, initial_types=string_input,
                                        target_opset={"": 17, "ai.onnx.ml": 3}), {"input": feed})


def one_node(name, node, key, value, out_dtype, feed):
    in_type = helper.make_map_type_proto(key, helper.make_tensor_type_proto(value, None))
    graph = helper.make_graph([node], name, [helper.make_value_info("X", in_type)],
                              [helper.make_tensor_value_info("Y", out_dtype, [1, None])])
    model = helper.make_model(graph, opset_imports=OPSETS)
    model.ir_version = 8
    save(name, model, {"X": feed})


def handwritten_cases():
    ml = "ai.onnx.ml"
    string_map = {"b": 2.5, "a": -1.0, "zz": 9.0}
    int_map = {7: 1.5, 2: -2.75, 40: 0.5, 3: 1e20}
    one_node("dictvectorizer_string_keys",
             helper.make_node("DictVectorizer", ["X"], ["Y"], domain=ml, string_vocabulary=["a", "c", "b", "a2"]),
             TensorProto.STRING, TensorProto.FLOAT, TensorProto.FLOAT, string_map)
    one_node("dictvectorizer_int_keys",
             helper.make_node("DictVectorizer", ["X"], ["Y"], domain=ml, int64_vocabulary=[40, 1, 7, 2]),
             TensorProto.INT64, TensorProto.FLOAT, TensorProto.FLOAT, int_map)
    small_map = {7: 1.5, 2: -2.75, 40: 0.5, 3: -7.9}
    for cast_to, out in [("TO_FLOAT", TensorProto.FLOAT), ("TO_INT64", TensorProto.INT64),
                         ("TO_STRING", TensorProto.STRING)]:
        suffix = cast_to[3:].lower()
        one_node(f"castmap_dense_{suffix}",
                 helper.make_node("CastMap", ["X"], ["Y"], domain=ml, cast_to=cast_to),
                 TensorProto.INT64, TensorProto.FLOAT, out, small_map)
        one_node(f"castmap_sparse_{suffix}",
                 helper.make_node("CastMap", ["X"], ["Y"], domain=ml, cast_to=cast_to, map_form="SPARSE", max_map=9),
                 TensorProto.INT64, TensorProto.FLOAT, out, small_map)


if __name__ == "__main__":
    shutil.rmtree(HERE, ignore_errors=True)
    sklearn_cases()
    handwritten_cases()
