"""The Python package on the GPU with models/tiny_cnn: numpy in and out, a torch CUDA tensor in
through DLPack and the output back through torch.from_dlpack (no copies), on the default and on a
side stream, and CuPy through __cuda_array_interface__ when installed; all must match ONNX Runtime's
stored output (fp32, rtol 1e-4) and each other. With ONNXRUN_CLI set, the CLI's --output-dir output
too. Skips without a CUDA torch. Runs under pytest or as `python3 test_gpu.py`."""
import os
import subprocess
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper

import onnxrun

try:
    import pytest
except ImportError:  # run as a script on a machine without pytest
    pytest = None

ROOT = os.environ.get("ONNXRUN_REPO", ".")
MODEL = os.path.join(ROOT, "models/tiny_cnn/model.onnx")
DATA = os.path.join(ROOT, "models/tiny_cnn/test_data_set_0")


def load(name):
    tensor = onnx.TensorProto()
    with open(os.path.join(DATA, name), "rb") as f:
        tensor.ParseFromString(f.read())
    return onnx.numpy_helper.to_array(tensor)


class Skipped(Exception):
    pass


def skip(why):
    if pytest:
        pytest.skip(why)
    raise Skipped(why)


def cuda_torch():
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        skip("no CUDA torch")
    return torch


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_numpy_and_torch_dlpack_agree_with_onnx_runtime():
    torch = cuda_torch()
    session = onnxrun.Session(MODEL, device="cuda")
    assert session.device == "cuda"
    x, want = load("input_0.pb"), load("output_0.pb")
    x_cuda = torch.from_numpy(x.copy()).cuda()
    for _ in range(4):  # step by step, capture, replays
        host = session.run({"image": x})["probs"]
        close(host, want)
        out = session.run({"image": x_cuda})["probs"]
        assert isinstance(out, onnxrun.DeviceArray) and out.shape == want.shape and out.dtype == "float32"
        y = torch.from_dlpack(out)
        assert y.is_cuda and y.data_ptr() == out.__cuda_array_interface__["data"][0]  # no copy
        close(y.cpu().numpy(), want)
        close(y.cpu().numpy(), host)


def test_side_stream():
    torch = cuda_torch()
    session = onnxrun.Session(MODEL, device="cuda")
    x, want = load("input_0.pb"), load("output_0.pb")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x_cuda = torch.from_numpy(x.copy()).cuda()
        for _ in range(3):
            out = session.run({"image": x_cuda}, stream=side.cuda_stream)["probs"]
            y = torch.from_dlpack(out)
            close(y.cpu().numpy(), want)


def test_cupy_through_cuda_array_interface():
    cuda_torch()
    try:
        import cupy
    except ImportError:
        skip("no cupy")
    session = onnxrun.Session(MODEL, device="cuda")
    x, want = load("input_0.pb"), load("output_0.pb")
    out = session.run({"image": cupy.asarray(x)})["probs"]
    close(cupy.asnumpy(cupy.asarray(out)), want)


def test_cli_output_matches():
    cli = os.environ.get("ONNXRUN_CLI")
    if not cli:
        skip("ONNXRUN_CLI not set")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([*cli.split(), "--device", "cuda", "--quiet", "--input-dir", DATA, "--output-dir", tmp, MODEL],
                       check=True, capture_output=True)
        tensor = onnx.TensorProto()
        with open(os.path.join(tmp, "output_0.pb"), "rb") as f:
            tensor.ParseFromString(f.read())
        close(onnx.numpy_helper.to_array(tensor), load("output_0.pb"))


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_"):
            try:
                fn()
                print("PASSED", name)
            except Skipped as why:
                print("SKIPPED", name, why)
