// ONNX Runtime's quantized contrib ops (its quantizer's QOperator format; the ONNX model zoo's int8
// models) as standard ops, computed as ORT computes them: QLinearAdd / QLinearMul in float on the
// dequantized inputs with the scale ratios MLAS uses, then one rounding; the table-driven unary ops
// (QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QLinearConcat, QLinearWhere) as dequantize ->
// op -> quantize, which is how ORT fills their tables; QGemm and MatMulIntegerToFloat on the
// integer MatMul with the int32 bias, scaled in float; DynamicQuantizeLSTM as an LSTM on the
// dequantized weights (its activations in float, where ORT quantizes them).
#include <utility>

#include "absl/strings/str_cat.h"
#include "importer/contrib_ops.h"

namespace importer {
namespace {

using ir::Graph;
using ir::kNoValue;
using ir::Node;
using ir::Tensor;
using ir::ValueId;

ValueId FloatScalar(Graph& graph, const Node& node, const std::string& what, float value) {
  return NodeConstant(graph, node, what, Tensor::FromFloats({value}, {}));
}

// `zero_point`, or a zero of `dtype` where it is absent (an output takes its input's dtype then).
absl::StatusOr<ValueId> ZeroPointOr(Graph& graph, const Node& node, ValueId zero_point, ir::DType dtype) {
  if (zero_point != kNoValue) return zero_point;
  absl::StatusOr<Tensor> zero = ValuesOfType(dtype, {0.0f}, {});
  if (!zero.ok()) return zero.status();
  return NodeConstant(graph, node, "zero_point", *std::move(zero));
}

ValueId Dequantize(Graph& graph, const Node& node, std::vector<Node>& prefix, ValueId x, ValueId scale,
                   ValueId zero_point) {
  std::vector<ValueId> inputs = {x, scale};
  if (zero_point != kNoValue) inputs.push_back(zero_point);
  return Prepend(graph, node, prefix, "DequantizeLinear", std::move(inputs));
}

// `node` becomes QuantizeLinear(x, scale, zero_point): output dtype from the zero point, or x's
// input's dtype (input 0 of the contrib node) where the node has none.
absl::Status BecomeQuantize(Graph& graph, Node& node, ValueId x, ValueId scale, ValueId zero_point) {
  absl::StatusOr<ValueId> zero = ZeroPointOr(graph, node, zero_point, InputDType(graph, node, 0));
  if (!zero.ok()) return zero.status();
  Become(node, "QuantizeLinear", {x, scale, *zero});
  return absl::OkStatus();
}

// QLinearAdd (A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale, C_zp?): each input dequantized at
// its scale over C's, summed, rounded, shifted by C's zero point. QLinearMul: the centred inputs
// multiplied, times A's scale times B's over C's.
absl::Status QLinearBinaryToFloat(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  const bool mul = node.op_type == "com.microsoft.QLinearMul";
  const ValueId a = node.input(0), a_scale = node.input(1), a_zero = node.input(2);
  const ValueId b = node.input(3), b_scale = node.input(4), b_zero = node.input(5);
  const ValueId c_scale = node.input(6), c_zero = node.input(7);
  const ValueId one = FloatScalar(graph, node, "one", 1.0f);
  ValueId result;
  if (mul) {
    const ValueId ratio =
        Prepend(graph, node, prefix, "Div", {Prepend(graph, node, prefix, "Mul", {a_scale, b_scale}), c_scale});
    const ValueId product =
        Prepend(graph, node, prefix, "Mul",
                {Dequantize(graph, node, prefix, a, one, a_zero), Dequantize(graph, node, prefix, b, one, b_zero)});
    result = Prepend(graph, node, prefix, "Mul", {product, ratio});
  } else {
    const ValueId a_ratio = Prepend(graph, node, prefix, "Div", {a_scale, c_scale});
    const ValueId b_ratio = Prepend(graph, node, prefix, "Div", {b_scale, c_scale});
    result = Prepend(
        graph, node, prefix, "Add",
        {Dequantize(graph, node, prefix, a, a_ratio, a_zero), Dequantize(graph, node, prefix, b, b_ratio, b_zero)});
  }
  return BecomeQuantize(graph, node, result, one, c_zero);
}

// QLinearSigmoid / QLinearLeakyRelu / QLinearSoftmax (X, X_scale, X_zp?, Y_scale, Y_zp?):
// dequantize, the float op, quantize.
absl::Status QLinearUnaryToFloat(Graph& graph, Node& node, std::vector<Node>& prefix) {
  const std::string op = node.op_type.substr(std::string("com.microsoft.QLinear").size());
  const int softmax_opset = static_cast<int>(node.attrs.GetInt("opset", kContribTargetOpset));
  const ir::Attributes attrs = node.attrs;
  AtTargetOpset(node);
  const ValueId x = Dequantize(graph, node, prefix, node.input(0), node.input(1), node.input(2));
  const ValueId y = Prepend(graph, node, prefix, op, {x});
  if (op == "LeakyRelu") prefix.back().attrs.Set("alpha", attrs.GetFloat("alpha", 0.01f));
  if (op == "Softmax") {
    prefix.back().attrs.Set("axis", attrs.GetInt("axis", -1));
    prefix.back().opset = softmax_opset;
  }
  return BecomeQuantize(graph, node, y, node.input(3), node.input(4));
}

// QLinearGlobalAveragePool / QLinearAveragePool (X, X_scale, X_zp?, Y_scale, Y_zp?), NHWC where
// channels_last: the pool of X dequantized at its scale over Y's (GlobalAveragePool, as MLAS sums
// the centred integers) or at its own (AveragePool), quantized.
absl::Status QLinearPoolToFloat(Graph& graph, Node& node, std::vector<Node>& prefix) {
  const bool global = node.op_type == "com.microsoft.QLinearGlobalAveragePool";
  const bool channels_last = node.attrs.GetInt("channels_last", 0) != 0;
  ir::Attributes pool_attrs = node.attrs;
  pool_attrs.Erase("channels_last");
  AtTargetOpset(node);
  absl::StatusOr<int64_t> rank = channels_last ? ChannelsLastRank(graph, node) : int64_t{0};
  if (!rank.ok()) return rank.status();
  ValueId x = node.input(0);
  if (channels_last) x = ChannelsMoved(graph, node, prefix, x, *rank, /*to_channels_first=*/true);
  const ValueId x_scale = global ? Prepend(graph, node, prefix, "Div", {node.input(1), node.input(3)}) : node.input(1);
  ValueId y = Prepend(graph, node, prefix, global ? "GlobalAveragePool" : "AveragePool",
                      {Dequantize(graph, node, prefix, x, x_scale, node.input(2))});
  if (!global) prefix.back().attrs = std::move(pool_attrs);
  if (channels_last) y = ChannelsMoved(graph, node, prefix, y, *rank, /*to_channels_first=*/false);
  const ValueId y_scale = global ? FloatScalar(graph, node, "one", 1.0f) : node.input(3);
  return BecomeQuantize(graph, node, y, y_scale, node.input(4));
}

// QLinearConcat(Y_scale, Y_zp, X0, X0_scale, X0_zp, X1, ...): the inputs dequantized, joined on
// `axis`, quantized.
absl::Status QLinearConcatToFloat(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  if (node.inputs.size() < 5 || (node.inputs.size() - 2) % 3 != 0) {
    return absl::InvalidArgumentError("QLinearConcat needs Y_scale, Y_zero_point, then X, X_scale, X_zero_point");
  }
  std::vector<ValueId> parts;
  for (size_t i = 2; i < node.inputs.size(); i += 3) {
    parts.push_back(Dequantize(graph, node, prefix, node.inputs[i], node.inputs[i + 1], node.inputs[i + 2]));
  }
  const int64_t axis = node.attrs.GetInt("axis", 0);
  const ValueId y_scale = node.input(0), y_zero = node.input(1);
  const ValueId joined = Prepend(graph, node, prefix, "Concat", std::move(parts));
  prefix.back().attrs.Set("axis", axis);
  Become(node, "QuantizeLinear", {joined, y_scale, y_zero});
  return absl::OkStatus();
}

// QLinearWhere(condition, X, x_scale, x_zp, Y, y_scale, y_zp, z_scale, z_zp).
absl::Status QLinearWhereToFloat(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  const ValueId x = Dequantize(graph, node, prefix, node.input(1), node.input(2), node.input(3));
  const ValueId y = Dequantize(graph, node, prefix, node.input(4), node.input(5), node.input(6));
  const ValueId chosen = Prepend(graph, node, prefix, "Where", {node.input(0), x, y});
  const ValueId z_scale = node.input(7), z_zero = node.input(8);
  Become(node, "QuantizeLinear", {chosen, z_scale, z_zero});
  return absl::OkStatus();
}

// com.microsoft's QLinearConv: the standard one, NHWC where channels_last.
absl::Status QLinearConvToStandard(Graph& graph, Node& node, std::vector<Node>& prefix) {
  const bool channels_last = node.attrs.GetInt("channels_last", 0) != 0;
  node.attrs.Erase("channels_last");
  AtTargetOpset(node);
  node.op_type = "QLinearConv";
  if (!channels_last) return absl::OkStatus();
  absl::StatusOr<int64_t> rank = ChannelsLastRank(graph, node);
  if (!rank.ok()) return rank.status();
  Node conv = node;
  conv.name = absl::StrCat(node.name, "__nchw");
  conv.inputs[0] = ChannelsMoved(graph, node, prefix, node.input(0), *rank, /*to_channels_first=*/true);
  conv.outputs = {graph.AddValue(absl::StrCat(conv.name, "_out"))};
  const ValueId y = conv.outputs[0];
  prefix.push_back(std::move(conv));
  Become(node, "Transpose", {y});
  node.attrs.Set("perm", ChannelsPerm(*rank, /*to_channels_first=*/false));
  return absl::OkStatus();
}

// com.microsoft's QuantizeLinear / DequantizeLinear: the standard ones (same inputs and axis).
absl::Status QuantizeToStandard(Graph&, Node& node, std::vector<Node>&) {
  AtTargetOpset(node);
  node.op_type = node.op_type.substr(std::string("com.microsoft.").size());
  return absl::OkStatus();
}

// QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?, y_zp?): (A - a_zp) @ (B - b_zp) + C in
// int32 (B's zero point and scale per column or per tensor), times alpha * a_scale * b_scale (over
// y_scale), requantized to y_zp's dtype where y_zp is given, else float.
absl::Status QGemmToMatMulInteger(Graph& graph, Node& node, std::vector<Node>& prefix) {
  const float alpha = node.attrs.GetFloat("alpha", 1.0f);
  const bool trans_a = node.attrs.GetInt("transA", 0) != 0;
  const bool trans_b = node.attrs.GetInt("transB", 0) != 0;
  AtTargetOpset(node);
  ValueId a = node.input(0), b = node.input(3);
  if (trans_a) a = Prepend(graph, node, prefix, "Transpose", {a});
  if (trans_b) b = Prepend(graph, node, prefix, "Transpose", {b});
  ValueId acc = Prepend(graph, node, prefix, "MatMulInteger", {a, b, node.input(2), node.input(5)});
  if (node.input(6) != kNoValue) acc = Prepend(graph, node, prefix, "Add", {acc, node.input(6)});
  const ValueId alpha_a =
      Prepend(graph, node, prefix, "Mul", {FloatScalar(graph, node, "alpha", alpha), node.input(1)});
  ValueId scale = Prepend(graph, node, prefix, "Mul", {alpha_a, node.input(4)});
  const ValueId y_scale = node.input(7), y_zero = node.input(8);
  if (y_scale != kNoValue) scale = Prepend(graph, node, prefix, "Div", {scale, y_scale});
  const ValueId as_float = PrependCast(graph, node, prefix, acc, ir::DType::kFloat32);
  if (y_zero == kNoValue) {
    Become(node, "Mul", {as_float, scale});
    return absl::OkStatus();
  }
  const ValueId y = Prepend(graph, node, prefix, "Mul", {as_float, scale});
  Become(node, "QuantizeLinear", {y, FloatScalar(graph, node, "one", 1.0f), y_zero});
  return absl::OkStatus();
}

// MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp?, b_zp?, bias?): the integer MatMul times
// a_scale * b_scale, plus bias.
absl::Status MatMulIntegerToFloatToMatMulInteger(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  const ValueId acc =
      Prepend(graph, node, prefix, "MatMulInteger", {node.input(0), node.input(1), node.input(4), node.input(5)});
  const ValueId scale = Prepend(graph, node, prefix, "Mul", {node.input(2), node.input(3)});
  const ValueId as_float = PrependCast(graph, node, prefix, acc, ir::DType::kFloat32);
  const ValueId bias = node.input(6);
  if (bias == kNoValue) {
    Become(node, "Mul", {as_float, scale});
  } else {
    Become(node, "Add", {Prepend(graph, node, prefix, "Mul", {as_float, scale}), bias});
  }
  return absl::OkStatus();
}

// DynamicQuantizeMatMul(A float, B, b_scale, b_zp?, bias?): A quantized to uint8 as
// DynamicQuantizeLinear does, then as MatMulIntegerToFloat.
absl::Status DynamicQuantizeMatMulToMatMulInteger(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  const std::vector<ValueId> q =
      PrependWithOutputs(graph, node, prefix, "DynamicQuantizeLinear", {node.input(0)}, 3);  // y, scale, zero point
  node.inputs = {q[0], node.input(1), q[1], node.input(2), q[2], node.input(3), node.input(4)};
  return MatMulIntegerToFloatToMatMulInteger(graph, node, prefix);
}

// An LSTM weight of DynamicQuantizeLSTM ([D, rows, 4H] int8 / uint8; scale and zero point per
// direction [D] or per direction and gate column [D, 4H]) as LSTM takes it: float, [D, 4H, rows].
ValueId DequantizedLstmWeight(Graph& graph, const Node& node, std::vector<Node>& prefix, const std::string& what,
                              ValueId w, ValueId scale, ValueId zero_point) {
  const ValueId columns = NodeConstant(graph, node, what + "_scale_shape", Tensor::FromInt64s({0, 1, -1}));
  ValueId x = PrependCast(graph, node, prefix, w, ir::DType::kFloat32);
  if (zero_point != kNoValue) {
    const ValueId zero = PrependCast(graph, node, prefix, zero_point, ir::DType::kFloat32);
    x = Prepend(graph, node, prefix, "Sub", {x, Prepend(graph, node, prefix, "Reshape", {zero, columns})});
  }
  x = Prepend(graph, node, prefix, "Mul", {x, Prepend(graph, node, prefix, "Reshape", {scale, columns})});
  const ValueId moved = Prepend(graph, node, prefix, "Transpose", {x});
  prefix.back().attrs.Set("perm", std::vector<int64_t>{0, 2, 1});
  return moved;
}

// DynamicQuantizeLSTM(X, W, R, B, sequence_lens, initial_h, initial_c, P, W_scale, W_zero_point,
// R_scale, R_zero_point): what ORT's dynamic quantizer makes of an LSTM. An LSTM (the same
// attributes) on the dequantized weights. ORT also quantizes X and the hidden state to uint8 for
// its integer GEMMs; here they stay float, so outputs differ from ORT's by up to that rounding.
absl::Status DynamicQuantizeLstmToLstm(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  const ValueId w = DequantizedLstmWeight(graph, node, prefix, "w", node.input(1), node.input(8), node.input(9));
  const ValueId r = DequantizedLstmWeight(graph, node, prefix, "r", node.input(2), node.input(10), node.input(11));
  std::vector<ValueId> inputs = {node.input(0), w, r};
  for (size_t i = 3; i < 8; ++i) inputs.push_back(node.input(i));
  while (inputs.back() == kNoValue) inputs.pop_back();
  node.op_type = "LSTM";
  node.inputs = std::move(inputs);
  return absl::OkStatus();
}

}  // namespace

std::map<std::string, Rewrite> QuantizedContribRewrites() {
  return {
      {"com.microsoft.QLinearAdd", NeedsInputs({0, 1, 3, 4, 6}, QLinearBinaryToFloat)},
      {"com.microsoft.QLinearMul", NeedsInputs({0, 1, 3, 4, 6}, QLinearBinaryToFloat)},
      {"com.microsoft.QLinearSigmoid", NeedsInputs({0, 1, 3}, QLinearUnaryToFloat)},
      {"com.microsoft.QLinearLeakyRelu", NeedsInputs({0, 1, 3}, QLinearUnaryToFloat)},
      {"com.microsoft.QLinearSoftmax", NeedsInputs({0, 1, 3}, QLinearUnaryToFloat)},
      {"com.microsoft.QLinearGlobalAveragePool", NeedsInputs({0, 1, 3}, QLinearPoolToFloat)},
      {"com.microsoft.QLinearAveragePool", NeedsInputs({0, 1, 3}, QLinearPoolToFloat)},
      {"com.microsoft.QLinearConcat", NeedsInputs({0, 1}, QLinearConcatToFloat)},
      {"com.microsoft.QLinearWhere", NeedsInputs({0, 1, 2, 4, 5, 7}, QLinearWhereToFloat)},
      {"com.microsoft.QLinearConv", NeedsInputs({0, 1, 2, 3, 4, 5, 6, 7}, QLinearConvToStandard)},
      {"com.microsoft.QuantizeLinear", NeedsInputs({0, 1}, QuantizeToStandard)},
      {"com.microsoft.DequantizeLinear", NeedsInputs({0, 1}, QuantizeToStandard)},
      {"com.microsoft.QGemm", NeedsInputs({0, 1, 2, 3, 4, 5}, QGemmToMatMulInteger)},
      {"com.microsoft.MatMulIntegerToFloat", NeedsInputs({0, 1, 2, 3}, MatMulIntegerToFloatToMatMulInteger)},
      {"com.microsoft.DynamicQuantizeMatMul", NeedsInputs({0, 1, 2}, DynamicQuantizeMatMulToMatMulInteger)},
      {"com.microsoft.DynamicQuantizeLSTM", NeedsInputs({0, 1, 2, 8, 10}, DynamicQuantizeLstmToLstm)},
  };
}

}  // namespace importer
