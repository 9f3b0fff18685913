#!/usr/bin/env python3
"""Writes tests/quantized_lstm/cases: com.microsoft.DynamicQuantizeLSTM, what ONNX Runtime's
quantize_dynamic makes of an LSTM (int8 weights, a scale per direction or per gate column), with
ORT's outputs for the standard LSTM on the dequantized weights as the reference: what onnxrun
computes (the weights exact, the activations in float). ORT's own DynamicQuantizeLSTM also rounds X
and the hidden state to uint8 for its integer GEMMs: on these models its outputs are 0.07 from the
float LSTM's (15% of the largest), onnxrun's 0.001 (the weights' int8 rounding alone), so ORT's
quantized outputs are not a reference here.
Needs `python3 -m pip install onnx onnxruntime numpy`. Deterministic."""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util"))
from ort_case import write_case  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
SEQ, BATCH, INPUT, HIDDEN = 5, 2, 6, 8


def float_lstm(direction, rng):
    dirs = 2 if direction == "bidirectional" else 1
    inits = [numpy_helper.from_array(rng.uniform(-0.5, 0.5, shape).astype(np.float32), name) for name, shape in
             [("W", (dirs, 4 * HIDDEN, INPUT)), ("R", (dirs, 4 * HIDDEN, HIDDEN)), ("B", (dirs, 8 * HIDDEN))]]
    node = helper.make_node("LSTM", ["X", "W", "R", "B"], ["Y", "Y_h", "Y_c"], hidden_size=HIDDEN,
                            direction=direction)
    graph = helper.make_graph(
        [node], "lstm", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [SEQ, BATCH, INPUT])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [SEQ, dirs, BATCH, HIDDEN]),
         helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [dirs, BATCH, HIDDEN]),
         helper.make_tensor_value_info("Y_c", TensorProto.FLOAT, [dirs, BATCH, HIDDEN])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    return m


def quantized(model, per_channel):
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "f.onnx"), os.path.join(tmp, "q.onnx")
        onnx.save(model, src)
        quantize_dynamic(src, dst, weight_type=QuantType.QInt8, per_channel=per_channel, op_types_to_quantize=["LSTM"])
        q = onnx.load(dst)
    assert any(n.op_type == "DynamicQuantizeLSTM" for n in q.graph.node), "quantize_dynamic made no DynamicQuantizeLSTM"
    return q


def dequantized_twin(q):
    """The standard LSTM on q's dequantized weights ([D, rows, 4H] -> [D, 4H, rows])."""
    inits = {t.name: numpy_helper.to_array(t) for t in q.graph.initializer}
    node = next(n for n in q.graph.node if n.op_type == "DynamicQuantizeLSTM")
    def weight(w, scale, zero):
        s, z = inits[scale], inits[zero].astype(np.float32)
        s = s.reshape(s.shape[0], 1, -1)
        z = z.reshape(z.shape[0], 1, -1)
        return ((inits[w].astype(np.float32) - z) * s).transpose(0, 2, 1).astype(np.float32)
    w = weight(node.input[1], node.input[8], node.input[9])
    r = weight(node.input[2], node.input[10], node.input[11])
    direction = next(a.s.decode() for a in node.attribute if a.name == "direction")
    twin = float_lstm(direction, np.random.default_rng(0))
    for t in twin.graph.initializer:
        if t.name in ("W", "R"):
            t.CopyFrom(numpy_helper.from_array(w if t.name == "W" else r, t.name))
        if t.name == "B":
            t.CopyFrom(numpy_helper.from_array(inits[node.input[3]], "B"))
    return twin


def main():
    shutil.rmtree(HERE, ignore_errors=True)
    rng = np.random.default_rng(11)
    for direction, per_channel in [("forward", False), ("bidirectional", True)]:
        name = f"dynamic_quantize_lstm_{direction}_{'per_channel' if per_channel else 'per_tensor'}"
        q = quantized(float_lstm(direction, rng), per_channel)
        feeds = {"X": rng.uniform(-1, 1, (SEQ, BATCH, INPUT)).astype(np.float32)}
        folder = os.path.join(HERE, name)
        write_case(HERE, name, dequantized_twin(q), feeds)
        onnx.save(q, os.path.join(folder, "model.onnx"))  # the quantized model, the float twin's outputs


if __name__ == "__main__":
    main()
