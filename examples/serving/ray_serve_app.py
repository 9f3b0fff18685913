"""onnxrun behind Ray Serve: one replica per GPU (or CPU replicas), each holding one onnxrun.Session
whose execution contexts let concurrent requests overlap on its GPU.

    serve run examples.serving.ray_serve_app:app model=models/tiny_cnn/model.onnx   # or:
    python3 examples/serving/ray_serve_app.py models/tiny_cnn/model.onnx          # one request, then exit

Requests are JSON: {"inputs": {name: nested list}} -> {"outputs": {name: nested list}}. Options
(bind arguments): model, device ("auto" | "cpu" | "cuda"), precision, replicas, gpus_per_replica
(1 on GPU machines: Ray then pins each replica to its own GPU, which it sees as device 0).
See docs/serving.md for scaling across machines.
"""
import sys

import numpy as np
from ray import serve

import onnxrun


@serve.deployment(max_ongoing_requests=8)
class OnnxrunModel:
    def __init__(self, model, device="auto", precision="fp32"):
        self.session = onnxrun.Session(model, device=device, precision=precision)
        self.input_dtypes = {i["name"]: i["dtype"] for i in self.session.inputs}

    def infer(self, inputs):
        feeds = {name: np.asarray(value, dtype=self.input_dtypes[name]) for name, value in inputs.items()}
        return {name: array.tolist() for name, array in self.session.run(feeds).items()}

    async def __call__(self, request):
        body = await request.json()
        try:
            return {"outputs": self.infer(body["inputs"])}
        except (onnxrun.Error, KeyError, ValueError) as error:
            return {"error": str(error)}


def build(model, device="auto", precision="fp32", replicas=1, gpus_per_replica=0):
    options = {"num_replicas": int(replicas), "ray_actor_options": {"num_gpus": float(gpus_per_replica)}}
    return OnnxrunModel.options(**options).bind(model, device, precision)


def app_builder(args):
    """`serve run examples.serving.ray_serve_app:app model=... device=... replicas=...`."""
    return build(**args)


app = app_builder


def main(model):
    """Starts Ray locally, deploys one CPU replica, sends one request through the handle, prints it."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    handle = serve.run(build(model, device="cpu"), name="onnxrun", route_prefix=None)
    session = onnxrun.Session(model, device="cpu")
    feeds = {}
    for info in session.inputs:
        shape = [d if isinstance(d, int) else 1 for d in info["shape"]]
        feeds[info["name"]] = np.random.default_rng(0).standard_normal(shape).astype(info["dtype"]).tolist()
    served = handle.infer.remote(feeds).result()
    direct = session.run({k: np.asarray(v, dtype=np.float32) for k, v in feeds.items()})
    for name, value in direct.items():
        np.testing.assert_allclose(np.asarray(served[name]), value, rtol=1e-5, atol=1e-6)
        print(f"output '{name}': {np.asarray(served[name]).shape} through Ray Serve, same as a direct run")
    serve.shutdown()
    ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "models/tiny_cnn/model.onnx")
