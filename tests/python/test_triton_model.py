"""examples/serving/triton/tiny_cnn/1/model.py (onnxrun behind Triton's Python backend) on the CPU,
without a Triton server: `triton_python_backend_utils` is replaced by a stand-in with the calls the
model uses (Tensor, get_input_tensor_by_name, InferenceResponse, TritonError, as Triton documents
them). Checks that initialize reads the model from <repository>/<version>/model.onnx, that a batch
of requests gets ONNX Runtime's stored output on every element, and that a bad request gets its
own error while the others still get outputs. Run by tests/python/pytest_test.sh."""
import importlib.util
import json
import os
import sys
import types

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

import onnxrun

ROOT = os.environ.get("ONNXRUN_REPO", ".")
TINY = os.path.join(ROOT, "models/tiny_cnn")
EXAMPLE = os.path.join(ROOT, "examples/serving/triton/tiny_cnn")


def load(name):
    tensor = onnx.TensorProto()
    with open(os.path.join(TINY, "test_data_set_0", name), "rb") as f:
        tensor.ParseFromString(f.read())
    return onnx.numpy_helper.to_array(tensor)


def stand_in_pb_utils():
    """The part of triton_python_backend_utils model.py calls, on host arrays."""
    pb = types.ModuleType("triton_python_backend_utils")

    class Tensor:
        def __init__(self, name, array):
            self._name, self._array = name, np.asarray(array)

        def name(self):
            return self._name

        def as_numpy(self):
            return self._array

        def is_cpu(self):
            return True

    class TritonError:
        def __init__(self, message):
            self._message = message

        def message(self):
            return self._message

    class InferenceResponse:
        def __init__(self, output_tensors, error=None):
            self.output_tensors, self.error = output_tensors, error

    pb.Tensor, pb.TritonError, pb.InferenceResponse = Tensor, TritonError, InferenceResponse
    pb.get_input_tensor_by_name = lambda request, name: next((t for t in request if t.name() == name), None)
    return pb


@pytest.fixture()
def model(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "triton_python_backend_utils", stand_in_pb_utils())
    spec = importlib.util.spec_from_file_location("triton_tiny_cnn", os.path.join(EXAMPLE, "1", "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (tmp_path / "1").mkdir()
    os.symlink(os.path.abspath(os.path.join(TINY, "model.onnx")), tmp_path / "1" / "model.onnx")
    with open(os.path.join(EXAMPLE, "config.pbtxt")) as f:
        assert 'backend: "python"' in f.read()
    config = {"name": "tiny_cnn", "parameters": {"device": {"string_value": "cpu"}}}
    instance = module.TritonPythonModel()
    instance.initialize({"model_config": json.dumps(config), "model_repository": str(tmp_path),
                         "model_version": "1", "model_instance_kind": "CPU", "model_instance_device_id": "0"})
    yield instance
    instance.finalize()


def test_batch_of_requests_matches_onnx_runtime(model):
    pb = sys.modules["triton_python_backend_utils"]
    image, want = load("input_0.pb"), load("output_0.pb")
    responses = model.execute([[pb.Tensor("image", image)], [pb.Tensor("image", image)]])
    assert len(responses) == 2
    for response in responses:
        assert response.error is None
        (probs,) = response.output_tensors
        assert probs.name() == "probs"
        np.testing.assert_allclose(probs.as_numpy(), want, rtol=1e-4, atol=1e-6)


def test_bad_request_gets_its_own_error(model):
    pb = sys.modules["triton_python_backend_utils"]
    image = load("input_0.pb")
    wrong_shape = np.zeros((1, 3, 8, 8), np.float32)
    responses = model.execute([[pb.Tensor("image", wrong_shape)], [], [pb.Tensor("image", image)]])
    assert "image" in responses[0].error.message() and responses[0].output_tensors == []
    assert "no input 'image'" in responses[1].error.message()
    assert responses[2].error is None
    np.testing.assert_allclose(responses[2].output_tensors[0].as_numpy(), load("output_0.pb"), rtol=1e-4, atol=1e-6)
    assert isinstance(model.session, onnxrun.Session)
