"""onnxrun behind Triton Inference Server's Python backend: each model instance holds one
onnxrun.Session on the GPU Triton gave it (or the CPU), and `execute` runs every request of a batch
through it. The ONNX file is `<model repository>/<version>/model.onnx`; config.pbtxt's parameters
pick the device ("auto" | "cpu" | "cuda") and the precision. GPU input tensors go in through DLPack
(no copy), CPU ones as numpy arrays; a request that fails gets its error back, the others their
outputs. See docs/serving.md."""
import json
import os

import numpy as np
import triton_python_backend_utils as pb_utils

import onnxrun


def _parameter(config, key, default):
    return config.get("parameters", {}).get(key, {}).get("string_value", default)


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        path = os.path.join(args["model_repository"], args["model_version"], "model.onnx")
        device = _parameter(config, "device", "auto")
        if args.get("model_instance_kind") == "CPU":
            device = "cpu"
        device_id = int(args.get("model_instance_device_id", 0) or 0)
        self.session = onnxrun.Session(path, device=device, device_id=device_id,
                                       precision=_parameter(config, "precision", "fp32"))
        self.input_names = [i["name"] for i in self.session.inputs]
        self.output_names = [o["name"] for o in self.session.outputs]

    def _feed(self, tensor):
        """A GPU tensor by DLPack (no copy), a CPU one as a numpy array."""
        if hasattr(tensor, "is_cpu") and not tensor.is_cpu() and hasattr(tensor, "__dlpack__"):
            return tensor
        return tensor.as_numpy()

    def _respond(self, request):
        feeds = {}
        for name in self.input_names:
            tensor = pb_utils.get_input_tensor_by_name(request, name)
            if tensor is None:
                raise onnxrun.Error(f"the request has no input '{name}'")
            feeds[name] = self._feed(tensor)
        outputs = self.session.run(feeds)
        tensors = []
        for name in self.output_names:
            value = outputs[name]
            if isinstance(value, np.ndarray):
                tensors.append(pb_utils.Tensor(name, value))
            else:  # an onnxrun.DeviceArray: stays on the GPU
                tensors.append(pb_utils.Tensor.from_dlpack(name, value))
        return pb_utils.InferenceResponse(output_tensors=tensors)

    def execute(self, requests):
        responses = []
        for request in requests:
            try:
                responses.append(self._respond(request))
            except (onnxrun.Error, ValueError, TypeError) as error:
                responses.append(pb_utils.InferenceResponse(output_tensors=[], error=pb_utils.TritonError(str(error))))
        return responses

    def finalize(self):
        self.session = None
