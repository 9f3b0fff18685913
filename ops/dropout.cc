// Dropout: attribute and input parsing, the identity test the partitioner uses, and its type/shape
// inference (see dropout.h).
#include "ops/dropout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::DType;

// The constant bound to input i of `node`; nullptr when the input is absent or computed.
const ir::Tensor* ConstantInput(const ir::Graph& graph, const ir::Node& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == ir::kNoValue) return nullptr;
  const std::optional<ir::Tensor>& constant = graph.value(node.inputs[i]).constant;
  return constant ? &*constant : nullptr;
}

bool HasInput(const ir::Node& node, size_t i) { return i < node.inputs.size() && node.inputs[i] != ir::kNoValue; }

// Dropout(data, ratio?, training_mode?) -> (output, mask?): output as data; the mask bool (data's
// dtype before opset 10).
absl::StatusOr<std::vector<ir::TensorType>> InferDropout(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
      !s.ok())
    return s;
  if (ctx.has_input(1)) {
    if (absl::Status s = ExpectDType(ctx, 1, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
        !s.ok())
      return s;
    if (absl::Status s = ExpectScalarLike(ctx, 1, "ratio"); !s.ok()) return s;
  }
  if (ctx.has_input(2)) {
    if (absl::Status s = ExpectDType(ctx, 2, {DType::kBool}); !s.ok()) return s;
    if (absl::Status s = ExpectScalarLike(ctx, 2, "training_mode"); !s.ok()) return s;
  }
  if (absl::StatusOr<DropoutAttrs> attrs = ParseDropoutAttrs(ctx.node); !attrs.ok()) return attrs.status();
  const bool ratio_known = !ctx.has_input(1) || ctx.value(1) != nullptr;
  if (ctx.value(2) != nullptr && ratio_known) {
    if (absl::StatusOr<bool> trains = DropoutTrains(ctx.value(1), ctx.value(2)); !trains.ok()) return trains.status();
  }
  std::vector<ir::TensorType> out(std::max<size_t>(1, ctx.num_outputs()), ctx.type(0));
  if (out.size() > 1) out[1].dtype = ctx.node.opset < 10 ? ctx.type(0).dtype : DType::kBool;
  return out;
}

}  // namespace

absl::StatusOr<DropoutAttrs> ParseDropoutAttrs(const ir::Node& node) {
  DropoutAttrs attrs;
  if (node.attrs.Has("seed")) attrs.seed = static_cast<uint32_t>(node.attrs.GetInt("seed", 0));
  return attrs;
}

absl::StatusOr<double> DropoutRatio(const ir::Tensor* ratio) {
  if (ratio == nullptr) return 0.5;
  if (ratio->num_elements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("ratio must hold one value, not ", ratio->num_elements()));
  }
  const double value = ratio->GetAsDouble(0);
  if (!(value >= 0 && value < 1)) {
    return absl::InvalidArgumentError(absl::StrCat("ratio must be in [0, 1), got ", value));
  }
  return value;
}

absl::StatusOr<bool> DropoutTrains(const ir::Tensor* ratio, const ir::Tensor* training_mode) {
  if (training_mode == nullptr) return false;
  if (training_mode->num_elements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("training_mode must hold one value, not ", training_mode->num_elements()));
  }
  if (training_mode->GetAsInt64(0) == 0) return false;
  absl::StatusOr<double> value = DropoutRatio(ratio);
  if (!value.ok()) return value.status();
  return *value > 0;
}

bool DropoutIsIdentity(const ir::Graph& graph, const ir::Node& node) {
  if (!HasInput(node, 2)) return true;
  const ir::Tensor* training = ConstantInput(graph, node, 2);
  if (training != nullptr && training->num_elements() == 1 && training->GetAsInt64(0) == 0) return true;
  const ir::Tensor* ratio = ConstantInput(graph, node, 1);
  return ratio != nullptr && ratio->num_elements() == 1 && ratio->GetAsDouble(0) == 0;
}

bool DropoutDrawsUnseeded(const ir::Graph& graph, const ir::Node& node) {
  return node.op_type == "Dropout" && !node.attrs.Has("seed") && !DropoutIsIdentity(graph, node);
}

std::vector<OpDef> DropoutOpDefs() { return {{"Dropout", 1, 3, InferDropout}}; }

}  // namespace ops
