// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: attribute parsing, extents and type/shape
// inference (see loss.h).
#include "ops/loss.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

// The input dims without C: the target's shape and the unreduced loss's shape.
ir::Shape WithoutClassDim(const ir::Shape& input) {
  ir::Shape out;
  for (size_t d = 0; d < input.size(); ++d) {
    if (d != 1) out.push_back(input[d]);
  }
  return out;
}

// Checks dtypes and the shapes that are known; returns the loss's TensorType.
absl::StatusOr<ir::TensorType> InferLoss(const InferContext& ctx) {
  if (absl::Status s =
          ExpectDType(ctx, 0, {ir::DType::kFloat32, ir::DType::kFloat64, ir::DType::kFloat16, ir::DType::kBFloat16});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectDType(ctx, 1, {ir::DType::kInt32, ir::DType::kInt64}); !s.ok()) return s;
  absl::StatusOr<LossAttrs> attrs = ParseLossAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const ir::TensorType& input = ctx.type(0);
  const ir::TensorType& target = ctx.type(1);
  std::optional<ir::Shape> loss_shape = target.shape;
  if (input.shape) {
    if (input.shape->size() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must have rank >= 2 ([N, C, d...]), not ", input.shape->size()));
    }
    loss_shape = WithoutClassDim(*input.shape);
    if (absl::Status s = ExpectDims(target, *loss_shape, "target"); !s.ok()) return s;
  }
  if (ctx.has_input(2)) {
    if (ctx.type(2).dtype != input.dtype) {
      return absl::InvalidArgumentError(absl::StrCat("weight must have the input's dtype ", ir::DTypeName(input.dtype),
                                                     ", not ", ir::DTypeName(ctx.type(2).dtype)));
    }
    const ir::Dim classes = input.shape ? (*input.shape)[1] : ir::Dim();
    if (absl::Status s = ExpectDims(ctx.type(2), {classes}, "weight"); !s.ok()) return s;
  }
  ir::TensorType loss{input.dtype, std::nullopt};
  if (attrs->reduction != LossReduction::kNone) {
    loss.shape = ir::Shape{};
  } else {
    loss.shape = loss_shape;
  }
  return loss;
}

absl::StatusOr<std::vector<ir::TensorType>> InferNegativeLogLikelihoodLoss(const InferContext& ctx) {
  absl::StatusOr<ir::TensorType> loss = InferLoss(ctx);
  if (!loss.ok()) return loss.status();
  return std::vector<ir::TensorType>{*loss};
}

// Outputs: the loss, and (optional) log_prob, LogSoftmax of the scores over C.
absl::StatusOr<std::vector<ir::TensorType>> InferSoftmaxCrossEntropyLoss(const InferContext& ctx) {
  absl::StatusOr<ir::TensorType> loss = InferLoss(ctx);
  if (!loss.ok()) return loss.status();
  std::vector<ir::TensorType> outputs{*loss};
  if (ctx.num_outputs() > 1) outputs.push_back(ctx.type(0));
  return outputs;
}

}  // namespace

absl::StatusOr<LossAttrs> ParseLossAttrs(const ir::Node& node) {
  LossAttrs attrs;
  const std::string reduction = node.attrs.GetString("reduction", "mean");
  if (reduction == "none") {
    attrs.reduction = LossReduction::kNone;
  } else if (reduction == "sum") {
    attrs.reduction = LossReduction::kSum;
  } else if (reduction != "mean") {
    return absl::InvalidArgumentError(
        absl::StrCat("reduction must be \"none\", \"sum\" or \"mean\", not \"", reduction, "\""));
  }
  if (node.attrs.Has("ignore_index")) attrs.ignore_index = node.attrs.GetInt("ignore_index", 0);
  return attrs;
}

absl::StatusOr<LossExtents> LossExtentsOf(const std::vector<int64_t>& input_dims,
                                          const std::vector<int64_t>& target_dims) {
  if (input_dims.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must have rank >= 2 ([N, C, d...]), not ", input_dims.size()));
  }
  std::vector<int64_t> expected_target;
  LossExtents e;
  for (size_t d = 0; d < input_dims.size(); ++d) {
    if (d == 1) continue;
    expected_target.push_back(input_dims[d]);
    if (d > 1) e.spatial *= input_dims[d];
  }
  if (target_dims != expected_target) {
    return absl::InvalidArgumentError(absl::StrCat("target dims [", absl::StrJoin(target_dims, ","),
                                                   "] must be the input's without C: [",
                                                   absl::StrJoin(expected_target, ","), "]"));
  }
  e.batch = input_dims[0];
  e.classes = input_dims[1];
  return e;
}

std::vector<OpDef> LossOpDefs() {
  return {{"NegativeLogLikelihoodLoss", 2, 3, InferNegativeLogLikelihoodLoss},
          {"SoftmaxCrossEntropyLoss", 2, 3, InferSoftmaxCrossEntropyLoss}};
}

}  // namespace ops
