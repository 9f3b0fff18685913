"""Single-node variants of the ONNX Runtime contrib ops that onnxruntime-genai's LLMs carry:
GroupQueryAttention (first prompt, token generation and a later prompt chunk over a KV cache;
grouped and multi-query heads; separate or packed QKV; rotary, interleaved or not, at the
token's position or at position_ids, over all or part of a head; a local window; softcap; smooth
softmax; a custom scale; a shared past/present buffer longer than the sequence; per-sequence
lengths in a batch; float16) and RotaryEmbedding (3-D and 4-D, interleaved, partial, a start
position) and GatherBlockQuantized (uint8 with 4 or 8 bits, int4, uint4; zero points or not; other
axes), each with ONNX Runtime's outputs, in the ONNX test layout.

  python3 models/sweep/genai_variants.py OUT_DIR && onnxrun test OUT_DIR

Needs `pip install onnx onnxruntime numpy`."""
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else "genai_variants"
shutil.rmtree(OUT, ignore_errors=True)
rng = np.random.default_rng(3)
MS = "com.microsoft"
written = 0


def save(name, node, feeds, outputs, initializers=(), out_dtype=None):
    """`out_dtype`: the outputs' numpy dtype (default: the first feed's)."""
    global written
    to_type = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16, np.int32: TensorProto.INT32,
               np.int64: TensorProto.INT64}
    ins = [helper.make_tensor_value_info(n, to_type[v.dtype.type], v.shape) for n, v in feeds.items()]
    out_type = to_type[(out_dtype or feeds[next(iter(feeds))].dtype).type]
    outs = [helper.make_tensor_value_info(n, out_type, None) for n in outputs]
    model = helper.make_model(helper.make_graph([node], name, ins, outs, list(initializers)),
                              opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(MS, 1)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        results = session.run(None, feeds)
    except Exception as e:  # noqa: BLE001: a form this ORT refuses is not written
        print("ORT refuses", name, str(e)[:200])
        return
    data = os.path.join(OUT, name, "test_data_set_0")
    os.makedirs(data)
    onnx.save(model, os.path.join(OUT, name, "model.onnx"))
    for i, (n, v) in enumerate(feeds.items()):
        onnx.save_tensor(numpy_helper.from_array(v, n), os.path.join(data, f"input_{i}.pb"))
    for i, (n, v) in enumerate(zip(outputs, results)):
        onnx.save_tensor(numpy_helper.from_array(v, n), os.path.join(data, f"output_{i}.pb"))
    written += 1


def caches(rows, half, dtype):
    angles = np.arange(rows)[:, None] * (0.5 ** np.arange(half))[None, :]
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def gqa(name, batch=2, seq=5, heads=4, kv_heads=2, head=16, past=0, lengths=None, total=None, packed=False,
        rotary=False, half=None, interleaved=False, positions=False, dtype=np.float32, **attrs):
    """lengths: each sequence's total length after the step (seqlens_k + 1); total: the scalar."""
    lengths = lengths or [past + seq] * batch
    total = total or max(lengths)
    feeds = {}
    if packed:
        feeds["query"] = rng.standard_normal((batch, seq, (heads + 2 * kv_heads) * head)).astype(dtype)
    else:
        feeds["query"] = rng.standard_normal((batch, seq, heads * head)).astype(dtype)
        feeds["key"] = rng.standard_normal((batch, seq, kv_heads * head)).astype(dtype)
        feeds["value"] = rng.standard_normal((batch, seq, kv_heads * head)).astype(dtype)
    feeds["past_key"] = rng.standard_normal((batch, kv_heads, past, head)).astype(dtype)
    feeds["past_value"] = rng.standard_normal((batch, kv_heads, past, head)).astype(dtype)
    feeds["seqlens_k"] = np.array(lengths, np.int32) - 1
    feeds["total_sequence_length"] = np.array([total], np.int32)
    inputs = ["query", "" if packed else "key", "" if packed else "value", "past_key", "past_value", "seqlens_k",
              "total_sequence_length"]
    if rotary:
        feeds["cos_cache"], feeds["sin_cache"] = caches(64, half or head // 2, dtype)
        inputs += ["cos_cache", "sin_cache"]
        if positions:
            feeds["position_ids"] = (np.array(lengths)[:, None] - seq + np.arange(seq)[None, :] + 3).astype(np.int64)
            inputs.append("position_ids")
        attrs.update(do_rotary=1, rotary_interleaved=int(interleaved))
    node = helper.make_node("GroupQueryAttention", inputs, ["output", "present_key", "present_value"], domain=MS,
                            num_heads=heads, kv_num_heads=kv_heads, **attrs)
    save("gqa_" + name, node, feeds, ["output", "present_key", "present_value"])


def rotary(name, shape, heads=0, half=4, interleaved=0, start=False, dim=0):
    batch, seq = shape[0], shape[2] if len(shape) == 4 else shape[1]
    feeds = {"input": rng.standard_normal(shape).astype(np.float32)}
    feeds["position_ids"] = (np.array([2], np.int64) if start else
                             rng.integers(0, 32, (batch, seq)).astype(np.int64))
    feeds["cos_cache"], feeds["sin_cache"] = caches(40, half, np.float32)
    attrs = dict(interleaved=interleaved)
    if heads:
        attrs["num_heads"] = heads
    if dim:
        attrs["rotary_embedding_dim"] = dim
    node = helper.make_node("RotaryEmbedding", ["input", "position_ids", "cos_cache", "sin_cache"], ["output"],
                            domain=MS, **attrs)
    save("rotary_" + name, node, feeds, ["output"])


def gather_quantized(name, dims, data_type=TensorProto.UINT8, bits=4, block=16, quantize_axis=-1, gather_axis=0,
                     zero_points=False, indices=(3, 0, 3), dtype=np.float32):
    """A quantized table (initializers) gathered by int64 indices; dims are the logical dims."""
    qa = quantize_axis % len(dims)
    blocks = list(dims)
    blocks[qa] = -(-dims[qa] // block)
    lo, hi = {TensorProto.INT4: (-8, 8), TensorProto.UINT4: (0, 16), TensorProto.UINT8: (0, 1 << bits)}[data_type]
    codes = rng.integers(lo, hi, dims)
    zps = rng.integers(lo, hi, blocks)
    def table(name, values):
        if data_type != TensorProto.UINT8 or bits == 8:
            return helper.make_tensor(name, data_type, values.shape, values.flatten().tolist())
        if values.shape[-1] % 2:
            values = np.concatenate([values, np.zeros(values.shape[:-1] + (1,), values.dtype)], -1)
        packed = (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)
        return numpy_helper.from_array(packed, name)
    inits = [table("data", codes), numpy_helper.from_array((rng.random(blocks) * 0.2 + 0.01).astype(dtype), "scales")]
    inputs = ["data", "indices", "scales"]
    if zero_points:
        inits.append(table("zero_points", zps))
        inputs.append("zero_points")
    node = helper.make_node("GatherBlockQuantized", inputs, ["y"], domain=MS, bits=bits, block_size=block,
                            quantize_axis=quantize_axis, gather_axis=gather_axis)
    save("gather_block_quantized_" + name, node, {"indices": np.array(indices, np.int64)}, ["y"], inits, np.dtype(dtype))


gqa("prompt")
gqa("prompt_mqa", heads=4, kv_heads=1)
gqa("prompt_packed", packed=True)
gqa("prompt_rotary", rotary=True)
gqa("prompt_rotary_interleaved_partial", head=32, rotary=True, interleaved=True, half=8)
gqa("prompt_window", seq=9, local_window_size=3)
gqa("prompt_softcap_scale", softcap=2.0, scale=0.7)
gqa("prompt_smooth", smooth_softmax=1)
gqa("prompt_batch1_long", batch=1, seq=17, heads=8, kv_heads=2, head=16, rotary=True)
gqa("decode", seq=1, past=6, rotary=True)
gqa("decode_lengths", seq=1, past=7, lengths=[7, 4], total=7, rotary=True)
gqa("decode_shared_buffer", seq=1, past=12, lengths=[9, 5], total=9, rotary=True)
gqa("decode_packed_window", seq=1, past=10, packed=True, local_window_size=4, rotary=True, interleaved=True)
gqa("decode_positions", seq=1, past=6, rotary=True, positions=True)
gqa("decode_softcap_smooth", seq=1, past=6, softcap=1.5, smooth_softmax=1)
gqa("chunk", batch=1, seq=4, past=6, total=10, rotary=True)
gqa("prompt_fp16", dtype=np.float16, rotary=True)
gqa("decode_fp16", seq=1, past=6, dtype=np.float16, rotary=True)
rotary("bsd", (2, 5, 32), heads=4)
rotary("bsd_derived_heads", (2, 5, 32))
rotary("bnsh", (2, 4, 5, 8))
rotary("interleaved_partial", (2, 5, 32), heads=2, half=4, interleaved=1, dim=8)
rotary("start", (2, 5, 32), heads=4, start=True)
gather_quantized("uint8_bits4", (5, 64))
gather_quantized("uint8_bits4_zero_points", (5, 48), zero_points=True, block=32)
gather_quantized("uint8_bits4_odd_blocks_zero_points", (4, 96), zero_points=True, block=32, indices=((1, 2), (3, 0)))
gather_quantized("uint8_bits8", (6, 32), bits=8)
gather_quantized("uint8_bits8_zero_points_fp16", (6, 32), bits=8, zero_points=True, dtype=np.float16)
gather_quantized("int4", (5, 32), data_type=TensorProto.INT4, quantize_axis=1)
gather_quantized("uint4_zero_points", (5, 32), data_type=TensorProto.UINT4, quantize_axis=1, zero_points=True)
gather_quantized("int4_axis0_gather1", (32, 4), data_type=TensorProto.INT4, quantize_axis=0, gather_axis=1,
                 zero_points=True, indices=(1, 3))
gather_quantized("int4_3d", (3, 16, 4), data_type=TensorProto.INT4, quantize_axis=1, indices=(2, -1))
print(f"wrote {written} cases to {OUT}")
