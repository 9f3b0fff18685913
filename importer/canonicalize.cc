// One rewrite function per op whose older forms differ from the canonical form; a table maps op
// types to rewrites. Ops not in the table are already canonical.
#include "importer/canonicalize.h"

#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "importer/contrib_ops.h"
#include "importer/rewrite_util.h"

namespace importer {
namespace {

using ir::Graph;
using ir::Node;
using ir::Tensor;

absl::Status ClipAttrsToInputs(Graph& graph, Node& node, std::vector<Node>&) {
  if (node.opset >= 11) return absl::OkStatus();
  const ir::DType dtype = InputDType(graph, node, 0);
  const struct {
    const char* attr;
    size_t index;
  } bounds[] = {{"min", 1}, {"max", 2}};
  for (const auto& bound : bounds) {
    if (!node.attrs.Has(bound.attr)) continue;
    absl::StatusOr<Tensor> v = ScalarOfType(dtype, node.attrs.GetFloat(bound.attr, 0));
    if (!v.ok()) return v.status();
    SetConstantInput(graph, node, bound.index, bound.attr, *std::move(v));
    node.attrs.Erase(bound.attr);
  }
  return absl::OkStatus();
}

absl::Status AxesAttrToInput(Graph& graph, Node& node, std::vector<Node>&) {
  IntsAttrToInput(graph, node, "axes", 1);
  return absl::OkStatus();
}

absl::Status SplitAttrToInput(Graph& graph, Node& node, std::vector<Node>&) {
  IntsAttrToInput(graph, node, "split", 1);
  return absl::OkStatus();
}

absl::Status SliceAttrsToInputs(Graph& graph, Node& node, std::vector<Node>&) {
  if (node.opset >= 10) return absl::OkStatus();
  IntsAttrToInput(graph, node, "starts", 1);
  IntsAttrToInput(graph, node, "ends", 2);
  IntsAttrToInput(graph, node, "axes", 3);
  return absl::OkStatus();
}

// TopK opset < 10: the `k` attribute becomes the int64 [1] input K.
absl::Status TopKAttrToInput(Graph& graph, Node& node, std::vector<Node>&) {
  if (node.opset >= 10) return absl::OkStatus();
  if (!node.attrs.Has("k")) return absl::InvalidArgumentError("TopK needs the k attribute before opset 10");
  SetConstantInput(graph, node, 1, "k", Tensor::FromInt64s({node.attrs.GetInt("k", 0)}));
  node.attrs.Erase("k");
  return absl::OkStatus();
}

// Scatter (opset 9-10) is ScatterElements without a reduction.
absl::Status ScatterToScatterElements(Graph&, Node& node, std::vector<Node>&) {
  node.op_type = "ScatterElements";
  return absl::OkStatus();
}

absl::Status PadAttrsToInputs(Graph& graph, Node& node, std::vector<Node>&) {
  if (node.opset >= 11) return absl::OkStatus();
  if (node.attrs.Has("paddings")) {  // opset 1 name
    node.attrs.Set("pads", node.attrs.GetInts("paddings"));
    node.attrs.Erase("paddings");
  }
  IntsAttrToInput(graph, node, "pads", 1);
  absl::StatusOr<Tensor> value = ScalarOfType(InputDType(graph, node, 0), node.attrs.GetFloat("value", 0.0f));
  if (!value.ok()) return value.status();
  SetConstantInput(graph, node, 2, "value", *std::move(value));
  node.attrs.Erase("value");
  return absl::OkStatus();
}

// Upsample (any opset) and Resize-10: (X, scales) or scales attr -> Resize(X, _, scales).
absl::Status UpsampleToResize(Graph& graph, Node& node, std::vector<Node>&) {
  if (node.op_type == "Resize" && node.opset >= 11) return absl::OkStatus();
  ir::ValueId scales = node.input(1);
  node.inputs.resize(1);
  if (scales != ir::kNoValue) {
    node.inputs.push_back(ir::kNoValue);
    node.inputs.push_back(scales);
  } else if (node.attrs.Has("height_scale") || node.attrs.Has("width_scale")) {  // Upsample-1
    SetConstantInput(
        graph, node, 2, "scales",
        Tensor::FromFloats(
            {1.0f, 1.0f, node.attrs.GetFloat("height_scale", 1.0f), node.attrs.GetFloat("width_scale", 1.0f)}, {4}));
    node.attrs.Erase("height_scale");
    node.attrs.Erase("width_scale");
  } else if (node.attrs.Has("scales")) {
    std::vector<float> values = node.attrs.GetFloats("scales");
    const int64_t n = static_cast<int64_t>(values.size());
    SetConstantInput(graph, node, 2, "scales", Tensor::FromFloats(std::move(values), {n}));
    node.attrs.Erase("scales");
  } else {
    return absl::InvalidArgumentError("Upsample needs scales");
  }
  std::string mode = node.attrs.GetString("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  node.attrs.Set("mode", mode);
  node.attrs.Set("coordinate_transformation_mode", std::string("asymmetric"));
  // ONNX Runtime's rounding for both (PyTorch's too when enlarging): floor when enlarging, ceil when
  // shrinking ("simple", which the Resize kernels know; ONNX's reference evaluator applies opset 11's
  // defaults to Resize-10 instead, which picks other pixels at scales 3 and 4).
  node.attrs.Set("nearest_mode", std::string("simple"));
  node.op_type = "Resize";
  return absl::OkStatus();
}

// Opset < 7 binary ops with broadcast=1 and axis: B is aligned at `axis` of A. Unsqueeze B's
// trailing dims so that numpy broadcasting gives the same result.
absl::Status LegacyBroadcast(Graph& graph, Node& node, std::vector<Node>& prefix) {
  const bool legacy = node.attrs.GetInt("broadcast", 0) != 0 && node.attrs.Has("axis");
  const int64_t axis = node.attrs.GetInt("axis", 0);
  node.attrs.Erase("broadcast");
  node.attrs.Erase("axis");
  if (!legacy || node.inputs.size() != 2) return absl::OkStatus();
  const ir::TensorType& a = graph.value(node.inputs[0]).type;
  const ir::TensorType& b = graph.value(node.inputs[1]).type;
  if (a.rank() < 0 || b.rank() < 0) {
    return absl::InvalidArgumentError("legacy broadcast with axis needs inputs of known rank");
  }
  const int64_t start = axis < 0 ? axis + a.rank() : axis;
  const int64_t trailing = a.rank() - start - b.rank();
  if (start < 0 || trailing < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("legacy broadcast axis ", axis, " does not fit ranks ", a.rank(), " and ", b.rank()));
  }
  if (trailing == 0) return absl::OkStatus();
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < trailing; ++i) axes.push_back(b.rank() + i);
  Node unsqueeze;
  unsqueeze.name = absl::StrCat(node.name, "__broadcast");
  unsqueeze.op_type = "Unsqueeze";
  unsqueeze.opset = node.opset;
  unsqueeze.inputs = {node.inputs[1],
                      graph.AddConstant(absl::StrCat(unsqueeze.name, "_axes"), Tensor::FromInt64s(axes))};
  unsqueeze.outputs = {graph.AddValue(absl::StrCat(unsqueeze.name, "_out"))};
  node.inputs[1] = unsqueeze.outputs[0];
  prefix.push_back(std::move(unsqueeze));
  return absl::OkStatus();
}

absl::Status DropLegacyAttrs(Graph&, Node& node, std::vector<Node>&) {
  for (const char* attr : {"spatial", "is_test", "momentum", "broadcast"}) node.attrs.Erase(attr);
  if (node.op_type == "Dropout" && node.opset < 12) node.attrs.Erase("ratio");
  return absl::OkStatus();
}

// GridSample-16 names its modes "bilinear" and "bicubic"; opset 20 (canonical) "linear", "cubic".
absl::Status GridSampleModeNames(Graph&, Node& node, std::vector<Node>&) {
  const std::string mode = node.attrs.GetString("mode", "linear");
  if (mode == "bilinear") node.attrs.Set("mode", std::string("linear"));
  if (mode == "bicubic") node.attrs.Set("mode", std::string("cubic"));
  return absl::OkStatus();
}

// RoiAlign before opset 16 has no coordinate_transformation_mode and behaves as
// "output_half_pixel" (opset 16's default is "half_pixel").
absl::Status RoiAlignCoordinates(Graph&, Node& node, std::vector<Node>&) {
  if (node.opset < 16 && !node.attrs.Has("coordinate_transformation_mode")) {
    node.attrs.Set("coordinate_transformation_mode", std::string("output_half_pixel"));
  }
  return absl::OkStatus();
}

// Concat before opset 4 concatenates on axis 1 when no axis is given (later opsets require one).
absl::Status ConcatDefaultAxis(Graph&, Node& node, std::vector<Node>&) {
  if (node.opset < 4 && !node.attrs.Has("axis")) node.attrs.Set("axis", int64_t{1});
  return absl::OkStatus();
}

// Reshape before opset 5 takes the new shape as an attribute.
absl::Status ReshapeAttrToInput(Graph& graph, Node& node, std::vector<Node>&) {
  if (node.opset < 5) IntsAttrToInput(graph, node, "shape", 1);
  return absl::OkStatus();
}

// CastLike(input, target_type) is Cast(input) to target_type's dtype.
absl::Status CastLikeToCast(Graph& graph, Node& node, std::vector<Node>&) {
  if (node.inputs.size() != 2 || node.inputs[1] == ir::kNoValue) {
    return absl::InvalidArgumentError("CastLike needs two inputs");
  }
  const ir::DType dtype = graph.value(node.inputs[1]).type.dtype;
  if (dtype == ir::DType::kUndefined) return absl::InvalidArgumentError("CastLike's target_type has no known dtype");
  node.inputs.resize(1);
  node.attrs.Set("to", static_cast<int64_t>(dtype));
  node.op_type = "Cast";
  return absl::OkStatus();
}

// Opset < 7 recurrent ops may carry output_sequence (Y is produced when it is an output anyway).
absl::Status DropOutputSequence(Graph&, Node& node, std::vector<Node>&) {
  node.attrs.Erase("output_sequence");
  return absl::OkStatus();
}

// The ops ONNX dropped from its experimental set (ONNX Runtime still runs them; real exports such
// as the model zoo's tiny-yolov2 carry them) become standard ops: a scalar or [C,1,1] constant of
// the input's dtype and helper nodes (rewrite_util.h).

// Scale: scale * x. Affine: alpha * x + beta.
absl::Status ScaleOrAffineToMul(Graph& graph, Node& node, std::vector<Node>& prefix) {
  const bool affine = node.op_type == "Affine";
  absl::StatusOr<ir::ValueId> scale =
      ConstantLike(graph, node, "scale", {node.attrs.GetFloat(affine ? "alpha" : "scale", 1.0f)}, {});
  if (!scale.ok()) return scale.status();
  if (!affine) {
    Become(node, "Mul", {node.input(0), *scale});
    return absl::OkStatus();
  }
  absl::StatusOr<ir::ValueId> beta = ConstantLike(graph, node, "beta", {node.attrs.GetFloat("beta", 0.0f)}, {});
  if (!beta.ok()) return beta.status();
  Become(node, "Add", {Prepend(graph, node, prefix, "Mul", {node.input(0), *scale}), *beta});
  return absl::OkStatus();
}

// ScaledTanh: alpha * tanh(beta * x). ParametricSoftplus: alpha * softplus(beta * x).
absl::Status ScaledUnaryToMuls(Graph& graph, Node& node, std::vector<Node>& prefix) {
  const std::string unary = node.op_type == "ScaledTanh" ? "Tanh" : "Softplus";
  absl::StatusOr<ir::ValueId> alpha = ConstantLike(graph, node, "alpha", {node.attrs.GetFloat("alpha", 1.0f)}, {});
  absl::StatusOr<ir::ValueId> beta = ConstantLike(graph, node, "beta", {node.attrs.GetFloat("beta", 1.0f)}, {});
  if (!alpha.ok()) return alpha.status();
  if (!beta.ok()) return beta.status();
  const ir::ValueId scaled = Prepend(graph, node, prefix, "Mul", {node.input(0), *beta});
  Become(node, "Mul", {Prepend(graph, node, prefix, unary, {scaled}), *alpha});
  return absl::OkStatus();
}

// ImageScaler: scale * x + bias[c] over an NCHW image.
absl::Status ImageScalerToMulAdd(Graph& graph, Node& node, std::vector<Node>& prefix) {
  const std::vector<float> bias = node.attrs.GetFloats("bias");
  const ir::TensorType& x = graph.value(node.input(0)).type;
  if (x.rank() >= 0 && x.rank() != 4) return absl::InvalidArgumentError("ImageScaler needs an NCHW input");
  if (x.rank() == 4 && (*x.shape)[1].known() && static_cast<int64_t>(bias.size()) != (*x.shape)[1].value) {
    return absl::InvalidArgumentError(
        absl::StrCat("ImageScaler has ", bias.size(), " bias values for ", (*x.shape)[1].value, " channels"));
  }
  absl::StatusOr<ir::ValueId> scale = ConstantLike(graph, node, "scale", {node.attrs.GetFloat("scale", 1.0f)}, {});
  if (!scale.ok()) return scale.status();
  absl::StatusOr<ir::ValueId> shift =
      ConstantLike(graph, node, "bias", bias, {static_cast<int64_t>(bias.size()), 1, 1});
  if (!shift.ok()) return shift.status();
  Become(node, "Add", {Prepend(graph, node, prefix, "Mul", {node.input(0), *scale}), *shift});
  return absl::OkStatus();
}

// Crop (NCHW): border = [left, top, right, bottom]; with scale = [height, width] the window starts
// at (top, left) and has that size, otherwise it ends `bottom` / `right` before the edges.
absl::Status CropToSlice(Graph& graph, Node& node, std::vector<Node>&) {
  const std::vector<int64_t> border = node.attrs.GetInts("border");
  const std::vector<int64_t> scale = node.attrs.GetInts("scale");
  if (border.size() != 4 || (!scale.empty() && scale.size() != 2)) {
    return absl::InvalidArgumentError("Crop needs border = [left, top, right, bottom] and scale = [height, width]");
  }
  for (int64_t v : border) {
    if (v < 0) return absl::InvalidArgumentError("Crop's border values must not be negative");
  }
  constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> ends = {border[3] > 0 ? -border[3] : kToEnd, border[2] > 0 ? -border[2] : kToEnd};
  if (!scale.empty()) ends = {border[1] + scale[0], border[0] + scale[1]};
  const ir::ValueId x = node.input(0);
  Become(node, "Slice", {x});
  SetConstantInput(graph, node, 1, "starts", Tensor::FromInt64s({border[1], border[0]}));
  SetConstantInput(graph, node, 2, "ends", Tensor::FromInt64s(std::move(ends)));
  SetConstantInput(graph, node, 3, "axes", Tensor::FromInt64s({2, 3}));
  return absl::OkStatus();
}

// DynamicSlice(data, starts, ends, axes) is Slice-10 without steps.
absl::Status DynamicSliceToSlice(Graph&, Node& node, std::vector<Node>&) {
  node.op_type = "Slice";
  return absl::OkStatus();
}

// MeanVarianceNormalization before opset 9 (NCHW): statistics per channel over the batch and the
// pixels (opset 9's default axes), or over everything with across_channels, as ONNX Runtime
// computes it; normalize_variance = 0 only subtracts the mean.
absl::Status MvnAttrsToAxes(Graph& graph, Node& node, std::vector<Node>& prefix) {
  if (node.opset >= 9) return absl::OkStatus();
  const bool across_channels = node.attrs.GetInt("across_channels", 0) != 0;
  const bool normalize_variance = node.attrs.GetInt("normalize_variance", 1) != 0;
  const std::vector<int64_t> axes = across_channels ? std::vector<int64_t>{0, 1, 2, 3} : std::vector<int64_t>{0, 2, 3};
  if (normalize_variance) {
    node.attrs = ir::Attributes();
    node.attrs.Set("axes", axes);
    return absl::OkStatus();
  }
  const ir::ValueId x = node.input(0);
  const ir::ValueId mean =
      Prepend(graph, node, prefix, "ReduceMean", {x, NodeConstant(graph, node, "axes", Tensor::FromInt64s(axes))});
  prefix.back().attrs.Set("keepdims", int64_t{1});
  Become(node, "Sub", {x, mean});
  return absl::OkStatus();
}

// SwiGLU (opset 28): Swish_alpha(A) * B = A * Sigmoid(alpha * A) * B, as pointwise ops the GPU
// fuses into the producing matmul's tail.
absl::Status SwiGluToMuls(Graph& graph, Node& node, std::vector<Node>& prefix) {
  if (node.inputs.size() < 2) return absl::InvalidArgumentError("SwiGLU needs A and B");
  absl::StatusOr<ir::ValueId> alpha = ConstantLike(graph, node, "alpha", {node.attrs.GetFloat("alpha", 1.0f)}, {});
  if (!alpha.ok()) return alpha.status();
  const ir::ValueId a = node.input(0), b = node.input(1);
  const ir::ValueId gate = Prepend(graph, node, prefix, "Sigmoid", {Prepend(graph, node, prefix, "Mul", {a, *alpha})});
  const ir::ValueId swish = Prepend(graph, node, prefix, "Mul", {a, gate});
  node.attrs = ir::Attributes();
  Become(node, "Mul", {swish, b});
  return absl::OkStatus();
}

// Sum, Mean, Max and Min of one input or more than two, and Sum / Mean of two: a left-to-right
// chain of binary Add / Max / Min (Mean's sum then divided by the input count, as ONNX's reference
// computes it), ops the GPU runs on its pointwise kernel or in a conv's or matmul's fused tail.
// Max / Min of two inputs already are binary ops.
absl::Status VariadicToBinaryChain(Graph& graph, Node& node, std::vector<Node>& prefix) {
  const size_t count = node.inputs.size();
  if (count == 0) return absl::InvalidArgumentError(absl::StrCat(node.op_type, " needs at least one input"));
  for (ir::ValueId v : node.inputs) {
    if (v == ir::kNoValue) return absl::InvalidArgumentError(absl::StrCat(node.op_type, " has an empty input name"));
  }
  const bool mean = node.op_type == "Mean";
  if (count == 2 && !mean && node.op_type != "Sum") return absl::OkStatus();
  const std::string binary = node.op_type == "Max" || node.op_type == "Min" ? node.op_type : "Add";
  // Helper nodes fold every input but the last into `folded` (Mean: every input; the node divides).
  const size_t helpers_end = mean ? count : count - 1;
  ir::ValueId folded = node.input(0);
  for (size_t i = 1; i < helpers_end; ++i) folded = Prepend(graph, node, prefix, binary, {folded, node.input(i)});
  node.attrs = ir::Attributes();
  if (count == 1) {
    Become(node, "Identity", {folded});
  } else if (mean) {
    absl::StatusOr<ir::ValueId> divisor = ConstantLike(graph, node, "count", {static_cast<float>(count)}, {});
    if (!divisor.ok()) return divisor.status();
    Become(node, "Div", {folded, *divisor});
  } else {
    Become(node, binary, {folded, node.input(count - 1)});
  }
  return absl::OkStatus();
}

const std::map<std::string, Rewrite>& Rewrites() {
  static const auto* table = [] {
    auto* rewrites = new std::map<std::string, Rewrite>{
        {"Clip", ClipAttrsToInputs},
        {"Sum", VariadicToBinaryChain},
        {"Mean", VariadicToBinaryChain},
        {"Max", VariadicToBinaryChain},
        {"Min", VariadicToBinaryChain},
        {"Squeeze", AxesAttrToInput},
        {"Unsqueeze", AxesAttrToInput},
        {"ReduceMean", AxesAttrToInput},
        {"ReduceSum", AxesAttrToInput},
        {"ReduceMax", AxesAttrToInput},
        {"ReduceMin", AxesAttrToInput},
        {"ReduceProd", AxesAttrToInput},
        {"ReduceL1", AxesAttrToInput},
        {"ReduceL2", AxesAttrToInput},
        {"ReduceLogSum", AxesAttrToInput},
        {"ReduceLogSumExp", AxesAttrToInput},
        {"ReduceSumSquare", AxesAttrToInput},
        {"Split", SplitAttrToInput},
        {"Slice", SliceAttrsToInputs},
        {"Pad", PadAttrsToInputs},
        {"TopK", TopKAttrToInput},
        {"Scatter", ScatterToScatterElements},
        {"CastLike", CastLikeToCast},
        {"Upsample", UpsampleToResize},
        {"Resize", UpsampleToResize},
        {"Add", LegacyBroadcast},
        {"Sub", LegacyBroadcast},
        {"Mul", LegacyBroadcast},
        {"Div", LegacyBroadcast},
        {"Pow", LegacyBroadcast},
        {"Equal", LegacyBroadcast},
        {"Greater", LegacyBroadcast},
        {"Less", LegacyBroadcast},
        {"And", LegacyBroadcast},
        {"Or", LegacyBroadcast},
        {"Xor", LegacyBroadcast},
        {"Gemm", DropLegacyAttrs},
        {"BatchNormalization", DropLegacyAttrs},
        {"Dropout", DropLegacyAttrs},
        {"GridSample", GridSampleModeNames},
        {"RoiAlign", RoiAlignCoordinates},
        {"RNN", DropOutputSequence},
        {"GRU", DropOutputSequence},
        {"LSTM", DropOutputSequence},
        {"Concat", ConcatDefaultAxis},
        {"Reshape", ReshapeAttrToInput},
        {"Scale", ScaleOrAffineToMul},
        {"Affine", ScaleOrAffineToMul},
        {"ScaledTanh", ScaledUnaryToMuls},
        {"ParametricSoftplus", ScaledUnaryToMuls},
        {"ImageScaler", ImageScalerToMulAdd},
        {"Crop", CropToSlice},
        {"DynamicSlice", DynamicSliceToSlice},
        {"MeanVarianceNormalization", MvnAttrsToAxes},
        {"SwiGLU", SwiGluToMuls},
    };
    // ONNX Runtime's contrib ops (keys with their domain, or no standard op's name).
    rewrites->insert(ContribRewrites().begin(), ContribRewrites().end());
    return rewrites;
  }();
  return *table;
}

}  // namespace

absl::StatusOr<std::vector<Node>> CanonicalizeNode(Graph& graph, Node node) {
  node.attrs.Erase("consumed_inputs");  // opset 1-5 memory hint, no meaning here
  std::vector<Node> nodes;
  auto it = Rewrites().find(node.op_type);
  if (it != Rewrites().end()) {
    absl::Status status = it->second(graph, node, nodes);
    if (!status.ok()) return status;
  }
  nodes.push_back(std::move(node));
  return nodes;
}

}  // namespace importer
