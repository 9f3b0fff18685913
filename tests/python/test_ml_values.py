"""The Python package on scikit-learn models: string tensors in and out (numpy object arrays of str),
ZipMap's sequence of maps (a list of dicts, as ONNX Runtime returns it) and map inputs (a dict, as
DictVectorizer and CastMap read them), against ONNX Runtime's stored outputs of
models/sklearn_ml_ops, tests/zipmap/cases and tests/ml_maps/cases (every element, every map).
Run by tests/python/pytest_test.sh with PYTHONPATH holding onnxrun.so."""
import glob
import os

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

import onnxrun

ROOT = os.environ.get("ONNXRUN_REPO", ".")


def as_dict(proto):
    """A MapProto as {key: value} (str keys decoded)."""
    return {(k.decode() if isinstance(k, bytes) else k): onnx.numpy_helper.to_array(v).item()
            for k, v in zip(list(proto.string_keys) or list(proto.keys), proto.values.tensor_values)}


def read_value(path, kind="tensor"):
    """A stored input or output: an array (TensorProto), a dict (`kind` "map": a MapProto) or a list
    of dicts ("maps": a SequenceProto of MapProto)."""
    with open(path, "rb") as f:
        data = f.read()
    if kind == "map":
        proto = onnx.MapProto()
        proto.ParseFromString(data)
        return as_dict(proto)
    if kind == "maps":
        sequence = onnx.SequenceProto()
        sequence.ParseFromString(data)
        assert sequence.elem_type == onnx.SequenceProto.MAP, path
        return [as_dict(m) for m in sequence.map_values]
    tensor = onnx.TensorProto()
    tensor.ParseFromString(data)
    array = onnx.numpy_helper.to_array(tensor)
    return array.astype(object) if array.dtype.kind in "OSU" else array


def case(folder, session):
    """The stored inputs and outputs; a value the session calls non-tensor is a map (an input) or a
    sequence of maps (an output)."""
    files = lambda kind: sorted(glob.glob(os.path.join(folder, "test_data_set_0", f"{kind}_*.pb")),
                                key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    kind = lambda info, non_tensor: non_tensor if info["dtype"] == "non-tensor" else "tensor"
    return ([read_value(p, kind(i, "map")) for p, i in zip(files("input"), session.inputs)],
            [read_value(p, kind(o, "maps")) for p, o in zip(files("output"), session.outputs)])


def assert_same(got, want, name):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), name
        for row_got, row_want in zip(got, want):
            assert list(row_got) == list(row_want), name  # the labels, in order
            np.testing.assert_allclose(list(row_got.values()), list(row_want.values()), rtol=1e-4, atol=1e-6,
                                       err_msg=name)
    elif want.dtype == object:
        assert got.dtype == object and got.shape == want.shape, name
        assert [str(s) for s in got.ravel()] == [s.decode() if isinstance(s, bytes) else s for s in want.ravel()], name
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)


MODELS = ([os.path.join(ROOT, "models/sklearn_ml_ops")] + sorted(glob.glob(os.path.join(ROOT, "tests/zipmap/cases/*"))) +
          sorted(glob.glob(os.path.join(ROOT, "tests/ml_maps/cases/*"))))


@pytest.mark.parametrize("folder", MODELS, ids=os.path.basename)
def test_matches_onnx_runtime(folder):
    session = onnxrun.Session(os.path.join(folder, "model.onnx"), device="cpu")
    inputs, outputs = case(folder, session)
    got = session.run({info["name"]: x for info, x in zip(session.inputs, inputs)})
    assert [o["name"] for o in session.outputs] == list(got)
    for info, want in zip(session.outputs, outputs):
        assert_same(got[info["name"]], want, info["name"])


def test_string_metadata_and_bad_string_input():
    session = onnxrun.Session(os.path.join(ROOT, "models/sklearn_ml_ops/model.onnx"), device="cpu")
    assert {i["name"]: i["dtype"] for i in session.inputs}["S"] == "str"
    inputs, _ = case(os.path.join(ROOT, "models/sklearn_ml_ops"), session)
    feeds = {info["name"]: x for info, x in zip(session.inputs, inputs)}
    feeds["S"] = np.array([[1.5]] * len(feeds["S"]), dtype=object)
    with pytest.raises(onnxrun.Error, match="not str or bytes"):
        session.run(feeds)


def test_empty_dict_is_an_empty_map():
    folder = os.path.join(ROOT, "tests/ml_maps/cases/dictvectorizer_string_keys")
    session = onnxrun.Session(os.path.join(folder, "model.onnx"), device="cpu")
    got = session.run({"X": {}})["Y"]
    np.testing.assert_array_equal(got, np.zeros([1, 4], np.float32))  # no key of the vocabulary: all 0


def test_bad_map_input():
    session = onnxrun.Session(os.path.join(ROOT, "tests/ml_maps/cases/castmap_dense_float/model.onnx"), device="cpu")
    with pytest.raises(onnxrun.Error, match="map"):
        session.run({"X": {"a": 1.0}})  # string keys for map(int64, float)
    with pytest.raises(onnxrun.Error, match="map"):
        session.run({"X": np.zeros([2], np.float32)})  # a tensor for a map
