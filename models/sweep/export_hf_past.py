"""Exports Hugging Face decoder LMs (small configs, seeded random weights) with their KV cache as
model inputs and outputs, as optimum and transformers.js ship them (past_key_values.N.key / .value
in, present.N.key / .value out, dynamic batch, past and sequence axes), in the test layout with
ONNX Runtime's CPU outputs: test_data_set_0 is a decode step (7 cached positions, 1 new token,
the second sample's first 2 positions padded), test_data_set_1 a prompt over an empty cache
(0 cached positions, 6 tokens).

Not part of the build or CI. Needs transformers from PyPI beside Debian's torch 1.13:

  /usr/bin/python3 -m venv --system-site-packages /tmp/hf && /tmp/hf/bin/pip install transformers==4.30.2 onnxruntime
  /tmp/hf/bin/python models/sweep/export_hf_past.py OUT_DIR [name,name,...]
  bazel-bin/cli/onnxrun test --device cpu OUT_DIR
"""
import os
import sys

import numpy as np
import onnxruntime
import torch
import transformers as T
from sweep_io import run_cases, write_tensor

SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=100)
CASES = {
    "gpt2": lambda: T.GPT2LMHeadModel(T.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=100)),
    "llama": lambda: T.LlamaForCausalLM(T.LlamaConfig(**SMALL)),
    "opt": lambda: T.OPTForCausalLM(T.OPTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                ffn_dim=128, vocab_size=100, word_embed_proj_dim=64)),
    "gpt_neox": lambda: T.GPTNeoXForCausalLM(T.GPTNeoXConfig(**SMALL)),
}


class WithPast(torch.nn.Module):
    """(input_ids, attention_mask, k0, v0, k1, v1, ...) -> (logits, present k0, v0, ...)."""

    def __init__(self, model, layers):
        super().__init__()
        self.model, self.layers = model, layers

    def forward(self, input_ids, attention_mask, *flat_past):
        past = tuple((flat_past[2 * i], flat_past[2 * i + 1]) for i in range(self.layers))
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, past_key_values=past, use_cache=True)
        return (out.logits,) + tuple(t for pair in out.past_key_values for t in pair)


def cache_shape(model, batch, length):
    c = model.config
    heads = getattr(c, "num_key_value_heads", None) or c.num_attention_heads
    head = c.hidden_size // c.num_attention_heads
    return (batch, heads, length, head)


def feeds(model, layers, past, seq, pad=0):
    torch.manual_seed(past * 10 + seq)
    mask = torch.ones(2, past + seq, dtype=torch.long)
    mask[1, :pad] = 0
    flat = [torch.randn(cache_shape(model, 2, past)) for _ in range(2 * layers)]
    return [torch.randint(0, 100, (2, seq)), mask] + flat


def export(name, out_dir):
    torch.manual_seed(0)
    model = CASES[name]().eval()
    layers = model.config.num_hidden_layers
    wrapper = WithPast(model, layers).eval()
    past_names = [f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    present_names = [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    names = ["input_ids", "attention_mask"] + past_names
    dynamic = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total"}}
    dynamic.update({n: {0: "batch", 2: "past"} for n in past_names})
    dynamic.update({n: {0: "batch", 2: "total"} for n in present_names})
    folder = os.path.join(out_dir, name + "_with_past")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(wrapper, tuple(feeds(model, layers, 5, 2)), path, input_names=names,
                          output_names=["logits"] + present_names, opset_version=17, dynamic_axes=dynamic)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    worst = 0.0
    for k, (past, seq, pad) in enumerate([(7, 1, 2), (0, 6, 0)]):
        data = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(data, exist_ok=True)
        values = dict(zip(names, [t.numpy() for t in feeds(model, layers, past, seq, pad)]))
        used = [i.name for i in session.get_inputs()]
        outputs = session.run(None, {n: values[n] for n in used})
        with torch.no_grad():
            torch_out = wrapper(*[torch.from_numpy(values[n]) for n in names])[0].numpy()
        worst = max(worst, float(np.abs(outputs[0] - torch_out).max() / np.abs(torch_out).max()))
        for i, n in enumerate(used):
            write_tensor(os.path.join(data, f"input_{i}.pb"), values[n], n)
        for i, o in enumerate(session.get_outputs()):
            write_tensor(os.path.join(data, f"output_{i}.pb"), outputs[i], o.name)
    return f"ORT vs torch {worst:.2e}"


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "hf_past"
    chosen = sys.argv[2].split(",") if len(sys.argv) > 2 else list(CASES)
    sys.exit(run_cases(chosen, lambda name: export(name, out)))
