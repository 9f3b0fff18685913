#!/usr/bin/env python3
"""Writes tests/tokenizer/cases: ONNX Runtime's com.microsoft.Tokenizer, which skl2onnx writes for a
TfidfVectorizer / CountVectorizer, in each of its modes (tokenexp, separators, characters; mark,
mincharnum, padding; [C] and [N, C] inputs, UTF-8 text, a row left without tokens), and a
scikit-learn TfidfVectorizer + LogisticRegression pipeline converted by skl2onnx, with the outputs
ONNX Runtime (CPU) computed. Needs `python3 -m pip install onnx onnxruntime numpy scikit-learn
skl2onnx`. Deterministic."""
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from ort_case import write_case  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
TEXTS = np.array(["The quick brown fox, jumps; over the lazy dog.", "a b  cc ddd", "", "naïve café: über-cool!",
                  "under_score and digits 42x"], dtype=object)


def tokenizer_model(input_dims, **attrs):
    node = helper.make_node("Tokenizer", ["text"], ["tokens"], domain="com.microsoft", **attrs)
    graph = helper.make_graph([node], "tokenizer", [helper.make_tensor_value_info("text", TensorProto.STRING, input_dims)],
                              [helper.make_tensor_value_info("tokens", TensorProto.STRING, list(input_dims) + ["D"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


def tokenizer_cases():
    cases = {
        "tokenexp_words": dict(mark=0, mincharnum=1, pad_value="#", tokenexp="[a-zA-Z0-9_]+"),
        "tokenexp_min3_marked": dict(mark=1, mincharnum=3, pad_value="<pad>", tokenexp="[a-zA-Z0-9_]+"),
        "tokenexp_word_class": dict(mark=0, mincharnum=2, pad_value="", tokenexp="\\w+"),
        "separators_space_punct": dict(mark=0, mincharnum=1, pad_value="#", separators=[" ", "[.,;:!]"]),
        "separators_marked": dict(mark=1, mincharnum=2, pad_value="#", separators=["\\s+"]),
        "characters": dict(mark=0, mincharnum=1, pad_value="_", separators=[""]),
        "characters_tokenexp_dot_marked": dict(mark=1, mincharnum=1, pad_value="_", tokenexp="."),
    }
    for name, attrs in cases.items():
        write_case(HERE, name, tokenizer_model([5], **attrs), {"text": TEXTS})
    batch = TEXTS[[0, 1, 3, 4]].reshape(2, 2)
    write_case(HERE, "batched_n_by_c", tokenizer_model([2, 2], mark=1, mincharnum=1, pad_value="#",
                                                       tokenexp="[a-zA-Z]+"), {"text": batch})
    write_case(HERE, "no_tokens_anywhere", tokenizer_model([3], mark=1, mincharnum=1, pad_value="#", tokenexp="[0-9]+"),
               {"text": np.array(["abc", "", "x y"], dtype=object)})


def tfidf_pipeline():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import StringTensorType

    train = ["the cat sat on the mat", "dogs bark loudly", "stock prices rise", "markets fall on news",
             "the dog chased the cat", "investors buy stocks"]
    pipeline = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(train, [0, 0, 1, 1, 0, 1])
    model = convert_sklearn(pipeline, initial_types=[("text", StringTensorType([None, 1]))],
                            options={id(pipeline.steps[-1][1]): {"zipmap": False}})
    for node in model.graph.node:  # ORT's StringNormalizer needs a locale this machine has
        if node.op_type == "StringNormalizer":
            kept = [a for a in node.attribute if a.name != "locale"]
            del node.attribute[:]
            node.attribute.extend(kept + [helper.make_attribute("locale", "C")])
    feeds = {"text": np.array([["the cat chased dogs"], ["Stock markets RISE on news"], ["nothing known here"]],
                              dtype=object)}
    write_case(HERE, "sklearn_tfidf_logreg", model, feeds)


def main():
    shutil.rmtree(HERE, ignore_errors=True)
    tokenizer_cases()
    tfidf_pipeline()


if __name__ == "__main__":
    main()
