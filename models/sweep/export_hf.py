"""Exports Hugging Face transformers architectures (built from small configs, seeded random weights)
to ONNX in the test layout, with ONNX Runtime's CPU outputs as the reference, for `onnxrun test`:
encoders (BERT, DistilBERT, RoBERTa, ALBERT, ELECTRA, DeBERTa-v2, T5, CLIP text), decoders
(GPT-NeoX, OPT, LLaMA), an encoder-decoder (BART), vision (ViT, ConvNeXt, Swin, SegFormer, MobileViT,
ResNet) and audio (Wav2Vec2, the Whisper encoder). Each takes a padding mask where the architecture
has one (the second sample's last 5 positions masked) and a dynamic batch axis.

Not part of the build or CI. Needs transformers from PyPI beside Debian's torch 1.13 (onnx and
onnxruntime from PyPI too):

  python3 -m venv --system-site-packages /tmp/hf && /tmp/hf/bin/pip install transformers==4.30.2 onnxruntime
  /tmp/hf/bin/python models/sweep/export_hf.py OUT_DIR [name,name,...]  (OPSET=17 for opset 17)
  bazel-bin/cli/onnxrun test --device cpu --precisions fp32,fp16 OUT_DIR

ORT_OPTIMIZE=1 also writes <name>_ortopt: the export fused by ONNX Runtime's transformers optimizer
(EmbedLayerNormalization, Attention, SkipLayerNormalization, FastGelu, ...: com.microsoft contrib
ops, as ORT users ship models), with ORT's outputs for it (needs `pip install sympy` as well).
"""

import os
import sys

import numpy as np
import onnxruntime
import torch
import transformers as T
from onnx import TensorProto, numpy_helper
from sweep_io import run_cases, write_tensor

SEQ = 16
SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=100)


def token_ids(vocab=100, offset=0):
    return torch.randint(0, vocab, (2, SEQ)) + offset


def padding_mask():
    mask = torch.ones(2, SEQ, dtype=torch.long)
    mask[1, SEQ - 5:] = 0
    return mask


def text(model, vocab=100, offset=0):
    return model, lambda: {"input_ids": token_ids(vocab, offset), "attention_mask": padding_mask()}


def image(model, side=64):
    return model, lambda: {"pixel_values": torch.randn(2, 3, side, side)}


CASES = {
    "bert": lambda: text(T.BertModel(T.BertConfig(**SMALL))),
    "distilbert": lambda: text(T.DistilBertModel(T.DistilBertConfig(dim=64, n_layers=2, n_heads=4, hidden_dim=128,
                                                                     vocab_size=100))),
    "roberta": lambda: text(T.RobertaModel(T.RobertaConfig(**SMALL)), vocab=90, offset=2),
    "albert": lambda: text(T.AlbertModel(T.AlbertConfig(embedding_size=32, **SMALL))),
    "electra": lambda: text(T.ElectraModel(T.ElectraConfig(embedding_size=32, **SMALL))),
    "deberta_v2": lambda: text(T.DebertaV2Model(T.DebertaV2Config(**SMALL))),
    "t5_encoder": lambda: text(T.T5EncoderModel(T.T5Config(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                                                           vocab_size=100))),
    "clip_text": lambda: text(T.CLIPTextModel(T.CLIPTextConfig(hidden_size=64, num_hidden_layers=2,
                                                               num_attention_heads=4, intermediate_size=128,
                                                               vocab_size=100, max_position_embeddings=32))),
    "gpt_neox": lambda: text(T.GPTNeoXModel(T.GPTNeoXConfig(**SMALL, use_cache=False))),
    "opt": lambda: text(T.OPTModel(T.OPTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, ffn_dim=128,
                                               vocab_size=100, word_embed_proj_dim=64, use_cache=False))),
    "llama": lambda: text(T.LlamaModel(T.LlamaConfig(**SMALL, use_cache=False))),
    "bart": lambda: text(T.BartModel(T.BartConfig(d_model=64, encoder_layers=2, decoder_layers=2,
                                                  encoder_attention_heads=4, decoder_attention_heads=4,
                                                  encoder_ffn_dim=128, decoder_ffn_dim=128, vocab_size=100,
                                                  use_cache=False))),
    "vit": lambda: image(T.ViTModel(T.ViTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                intermediate_size=128, image_size=32, patch_size=8)), side=32),
    "convnext": lambda: image(T.ConvNextModel(T.ConvNextConfig(hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 2, 1]))),
    "swin": lambda: image(T.SwinModel(T.SwinConfig(image_size=64, patch_size=4, embed_dim=32, depths=[1, 1],
                                                   num_heads=[2, 4], window_size=4))),
    "segformer": lambda: image(T.SegformerForSemanticSegmentation(T.SegformerConfig(
        hidden_sizes=[16, 32, 64, 128], num_attention_heads=[1, 2, 4, 8], depths=[1, 1, 1, 1],
        decoder_hidden_size=64, num_labels=5))),
    "mobilevit": lambda: image(T.MobileViTModel(T.MobileViTConfig(image_size=64, hidden_sizes=[32, 48, 64],
                                                                  neck_hidden_sizes=[8, 16, 24, 32, 40, 48, 160]))),
    "resnet": lambda: image(T.ResNetModel(T.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32, 64, 128],
                                                         depths=[1, 1, 1, 1]))),
    "wav2vec2": lambda: (T.Wav2Vec2Model(T.Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                          intermediate_size=128, conv_dim=(32, 32), conv_stride=(5, 2),
                                                          conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                                                          num_conv_pos_embedding_groups=4)),
                         lambda: {"input_values": torch.randn(2, 1600)}),
    "whisper_encoder": lambda: (T.WhisperModel(T.WhisperConfig(
        d_model=64, encoder_layers=2, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=16, max_source_positions=50, vocab_size=100,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)).encoder,
        lambda: {"input_features": torch.randn(2, 16, 100)}),
}


class FirstOutput(torch.nn.Module):
    """The model's main output tensor (last_hidden_state, logits, or the first of a tuple)."""

    def __init__(self, model, names):
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *inputs):
        result = self.model(**dict(zip(self.names, inputs)))
        for field in ("last_hidden_state", "logits"):
            if hasattr(result, field):
                return getattr(result, field)
        return result[0]


def export(name, out_dir, opset):
    model, make_inputs = CASES[name]()
    inputs = make_inputs()
    names = list(inputs)
    wrapper = FirstOutput(model, names).eval()  # eval() on the wrapper: export restores its mode after
    folder = os.path.join(out_dir, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    torch.onnx.export(wrapper, tuple(inputs.values()), path, input_names=names, output_names=["output"],
                      opset_version=opset, dynamic_axes={n: {0: "batch"} for n in names})
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {i.name: inputs[i.name].numpy() for i in session.get_inputs()}  # unused inputs may be dropped
    outputs = session.run(None, feeds)
    with torch.no_grad():
        torch_out = wrapper(*inputs.values()).numpy()
    for k, i in enumerate(session.get_inputs()):
        write_tensor(os.path.join(folder, "test_data_set_0", f"input_{k}.pb"), feeds[i.name], i.name)
    for k, o in enumerate(session.get_outputs()):
        write_tensor(os.path.join(folder, "test_data_set_0", f"output_{k}.pb"), outputs[k], o.name)
    return float(np.abs(outputs[0] - torch_out).max() / max(np.abs(torch_out).max(), 1e-12))


# The ORT optimizer's model_type per case (others: "bert"); cases it cannot fuse keep their ops.
ORT_MODEL_TYPES = {"gpt_neox": "gpt_neox", "opt": "gpt2", "llama": "gpt2", "bart": "bart", "vit": "vit", "swin": "swin",
                   "clip_text": "clip", "t5_encoder": "t5", "convnext": "vit", "segformer": "vit", "mobilevit": "vit",
                   "resnet": "vit"}


def ort_optimize(name, out_dir):
    """Writes <name>_ortopt from <name>'s export and data set: ORT's transformers optimizer, ORT's outputs."""
    from onnxruntime.transformers import optimizer
    folder, optimized = os.path.join(out_dir, name), os.path.join(out_dir, name + "_ortopt")
    os.makedirs(os.path.join(optimized, "test_data_set_0"), exist_ok=True)
    path = os.path.join(optimized, "model.onnx")
    optimizer.optimize_model(os.path.join(folder, "model.onnx"), model_type=ORT_MODEL_TYPES.get(name, "bert"),
                             num_heads=4, hidden_size=64, opt_level=0).save_model_to_file(path)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {}
    for k, i in enumerate(session.get_inputs()):
        source = os.path.join(folder, "test_data_set_0", f"input_{k}.pb")
        with open(source, "rb") as f:
            feeds[i.name] = numpy_helper.to_array(TensorProto.FromString(f.read()))
        write_tensor(os.path.join(optimized, "test_data_set_0", f"input_{k}.pb"), feeds[i.name], i.name)
    for k, (o, y) in enumerate(zip(session.get_outputs(), session.run(None, feeds))):
        write_tensor(os.path.join(optimized, "test_data_set_0", f"output_{k}.pb"), y, o.name)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    names = argv[2].split(",") if len(argv) > 2 else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"unknown cases: {', '.join(unknown)}; known: {', '.join(CASES)}")
        return 2
    opset = int(os.environ.get("OPSET", "14"))

    def run_one(name):
        torch.manual_seed(0)
        line = f"exported at opset {opset}; ONNX Runtime vs torch {export(name, argv[1], opset):.2e} of max"
        if os.environ.get("ORT_OPTIMIZE") == "1":
            ort_optimize(name, argv[1])
            line += f"; {name}_ortopt fused by ONNX Runtime's transformers optimizer"
        return line

    return run_cases(names, run_one)

if __name__ == "__main__":
    sys.exit(main(sys.argv))
