"""The Python package (`import onnxrun`) on models/tiny_cnn: metadata, a run against ONNX Runtime's
stored output (models/tiny_cnn/test_data_set_0, every element), the same result as the C++ CLI's
library path (a second session on the CPU), explain() as a dict, and errors as onnxrun.Error.
Run by tests/python/pytest_test.sh with PYTHONPATH holding onnxrun.so."""
import os
import re
import threading

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

import onnxrun

ROOT = os.environ.get("ONNXRUN_REPO", ".")
MODEL = os.path.join(ROOT, "models/tiny_cnn/model.onnx")
DATA = os.path.join(ROOT, "models/tiny_cnn/test_data_set_0")


def load(name):
    tensor = onnx.TensorProto()
    with open(os.path.join(DATA, name), "rb") as f:
        tensor.ParseFromString(f.read())
    return onnx.numpy_helper.to_array(tensor)


@pytest.fixture(scope="module")
def session():
    return onnxrun.Session(MODEL, device="cpu")


def test_metadata(session):
    assert session.device == "cpu"
    assert [i["name"] for i in session.inputs] == ["image"]
    assert session.inputs[0]["dtype"] == "float32"
    assert [o["name"] for o in session.outputs] == ["probs"]
    assert session.inputs[0]["shape"] == ["N", 3, 32, 32]  # a named batch dim stays a name


def test_torch_cpu_tensor_is_a_host_input(session):
    torch = pytest.importorskip("torch")
    x = load("input_0.pb")
    got = session.run({"image": torch.from_numpy(x.copy())})["probs"]
    np.testing.assert_array_equal(got, session.run({"image": x})["probs"])


class FakeCudaTensor:
    """Says it lives in CUDA memory (__cuda_array_interface__) without any GPU behind it."""

    def __init__(self, shape):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (4096, False), "version": 3}


def test_device_inputs_on_a_cpu_session_are_an_error(session):
    with pytest.raises(onnxrun.Error, match="GPU session"):
        session.run({"image": FakeCudaTensor((1, 3, 32, 32))})
    with pytest.raises(onnxrun.Error, match="all numpy arrays or all CUDA tensors"):
        session.run({"image": FakeCudaTensor((1, 3, 32, 32)), "other": np.zeros(1, np.float32)})


def test_run_matches_stored_outputs(session):
    x, want = load("input_0.pb"), load("output_0.pb")
    got = session.run({"image": x})["probs"]
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_non_contiguous_input_is_copied_in_order(session):
    x = load("input_0.pb")
    flipped = np.ascontiguousarray(x[:, :, :, ::-1])[:, :, :, ::-1]  # a view with a negative stride
    np.testing.assert_array_equal(session.run({"image": flipped})["probs"], session.run({"image": x})["probs"])


def test_threads_share_one_session(session):
    x = load("input_0.pb")
    want = session.run({"image": x})["probs"]
    results = [None] * 4

    def work(i):
        results[i] = session.run({"image": x})["probs"]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


def test_explain_is_the_plan(session):
    plan = session.explain()
    assert isinstance(plan, dict)
    assert plan["steps"], plan.keys()


def test_errors_raise_with_the_status_message(session):
    with pytest.raises(onnxrun.Error, match="no/such/model.onnx"):
        onnxrun.Session("no/such/model.onnx")
    with pytest.raises(onnxrun.Error, match="image"):
        session.run({"image": load("input_0.pb").astype(np.float64)})
    with pytest.raises(onnxrun.Error, match="device"):
        onnxrun.Session(MODEL, device="tpu")
    with pytest.raises(onnxrun.Error, match="shape"):
        session.run({"image": np.zeros((1, 3, 31, 32), np.float32)})
    with pytest.raises(onnxrun.Error, match="missing input 'image'"):
        session.run({})


def test_version_is_the_release():
    assert re.fullmatch(r"\d+\.\d+\.\d+", onnxrun.__version__), onnxrun.__version__


def test_config_entries_set_options_or_raise():
    configured = onnxrun.Session(MODEL, device="cpu", config={"tune_for_streams": 2, "cuda_graph": False})
    got = configured.run({"image": load("input_0.pb")})["probs"]
    np.testing.assert_allclose(got, load("output_0.pb"), rtol=1e-4, atol=1e-5)
    with pytest.raises(onnxrun.Error, match="unknown session config key 'tune_for_stream'"):
        onnxrun.Session(MODEL, device="cpu", config={"tune_for_stream": 2})
    with pytest.raises(onnxrun.Error, match="cuda_graph: 'maybe' is not 1, 0, true or false"):
        onnxrun.Session(MODEL, device="cpu", config={"cuda_graph": "maybe"})


def test_half_inputs_take_float16_and_compute_what_the_cast_would():
    x = load("input_0.pb")
    casting = onnxrun.Session(MODEL, device="cpu", precision="fp16")
    half = onnxrun.Session(MODEL, device="cpu", precision="fp16", config={"half_inputs": True})
    assert half.inputs[0]["dtype"] == "float16", half.inputs
    np.testing.assert_array_equal(half.run({"image": x.astype(np.float16)})["probs"], casting.run({"image": x})["probs"])
    with pytest.raises(onnxrun.Error, match="has dtype float32, the model expects float16"):
        half.run({"image": x})
