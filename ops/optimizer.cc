// Adagrad, Adam and Momentum (ai.onnx.preview.training): attribute parsing, the input layout and
// the type/shape inference (see optimizer.h).
#include "ops/optimizer.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::DType;
using InferResult = absl::StatusOr<std::vector<ir::TensorType>>;

constexpr int kVariadic = std::numeric_limits<int>::max();

absl::StatusOr<OptimizerKind> KindOf(const ir::Node& node) {
  if (node.op_type == kAdagradOp) return OptimizerKind::kAdagrad;
  if (node.op_type == kAdamOp) return OptimizerKind::kAdam;
  if (node.op_type == kMomentumOp) return OptimizerKind::kMomentum;
  return absl::InvalidArgumentError(absl::StrCat("'", node.op_type, "' is not an optimizer op"));
}

// A required float attribute.
absl::StatusOr<double> RequiredFloat(const ir::Node& node, const char* name) {
  if (!node.attrs.Has(name)) return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' is missing"));
  return node.attrs.GetFloat(name, 0);
}

absl::Status ParseMomentum(const ir::Node& node, OptimizerAttrs& attrs) {
  for (auto [name, field] : {std::pair{"alpha", &attrs.alpha}, std::pair{"beta", &attrs.beta},
                             std::pair{"norm_coefficient", &attrs.norm_coefficient}}) {
    absl::StatusOr<double> value = RequiredFloat(node, name);
    if (!value.ok()) return value.status();
    *field = *value;
  }
  if (!node.attrs.Has("mode")) return absl::InvalidArgumentError("attribute 'mode' is missing");
  const std::string mode = node.attrs.GetString("mode", "");
  if (mode != "standard" && mode != "nesterov") {
    return absl::InvalidArgumentError(absl::StrCat("mode must be \"standard\" or \"nesterov\", not \"", mode, "\""));
  }
  attrs.nesterov = mode == "nesterov";
  return absl::OkStatus();
}

// An error unless input `in` (a gradient or state of the tensor at input `x`) has x's dtype and shape.
absl::Status ExpectLikeX(const InferContext& ctx, size_t in, size_t x) {
  if (absl::Status s = ExpectDType(ctx, in, {ctx.type(x).dtype}); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(s.message(), " (input ", x, " has ", ir::DTypeName(ctx.type(x).dtype), "; they must match)"));
  }
  if (!ctx.type(x).shape) return absl::OkStatus();
  const std::string name = absl::StrCat("input ", in);
  absl::Status dims = ExpectDims(ctx.type(in), *ctx.type(x).shape, name.c_str());
  if (dims.ok()) return dims;
  return absl::InvalidArgumentError(absl::StrCat(dims.message(), " (the shape of input ", x, ")"));
}

InferResult InferOptimizer(const InferContext& ctx) {
  absl::StatusOr<OptimizerAttrs> attrs = ParseOptimizerAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<int64_t> n = OptimizedTensorCount(attrs->kind, ctx.num_inputs(), ctx.num_outputs());
  if (!n.ok()) return n.status();
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat64}); !s.ok()) return s;
  if (absl::Status s = ExpectScalarLike(ctx, 0, "R"); !s.ok()) return s;
  if (absl::Status s = ExpectDType(ctx, 1, {DType::kInt64}); !s.ok()) return s;
  if (absl::Status s = ExpectScalarLike(ctx, 1, "T"); !s.ok()) return s;
  const int runs = OptimizerInputRuns(attrs->kind);
  std::vector<ir::TensorType> out(ctx.num_outputs());
  for (int64_t i = 0; i < *n; ++i) {
    const size_t x = static_cast<size_t>(2 + i);
    if (absl::Status s = ExpectDType(ctx, x, {DType::kFloat32, DType::kFloat64}); !s.ok()) return s;
    for (int run = 1; run < runs; ++run) {
      if (absl::Status s = ExpectLikeX(ctx, x + run * *n, x); !s.ok()) return s;
    }
    for (int run = 0; run + 1 < runs; ++run) out[run * *n + i] = ctx.type(x);
  }
  return out;
}

}  // namespace

absl::StatusOr<OptimizerAttrs> ParseOptimizerAttrs(const ir::Node& node) {
  absl::StatusOr<OptimizerKind> kind = KindOf(node);
  if (!kind.ok()) return kind.status();
  OptimizerAttrs attrs;
  attrs.kind = *kind;
  const ir::Attributes& a = node.attrs;
  switch (*kind) {
    case OptimizerKind::kAdagrad:
      attrs.epsilon = a.GetFloat("epsilon", 1e-6f);
      attrs.decay_factor = a.GetFloat("decay_factor", 0.0f);
      attrs.norm_coefficient = a.GetFloat("norm_coefficient", 0.0f);
      return attrs;
    case OptimizerKind::kAdam:
      attrs.alpha = a.GetFloat("alpha", 0.9f);
      attrs.beta = a.GetFloat("beta", 0.999f);
      attrs.epsilon = a.GetFloat("epsilon", 1e-6f);
      attrs.norm_coefficient = a.GetFloat("norm_coefficient", 0.0f);
      attrs.norm_coefficient_post = a.GetFloat("norm_coefficient_post", 0.0f);
      return attrs;
    case OptimizerKind::kMomentum:
      if (absl::Status s = ParseMomentum(node, attrs); !s.ok()) return s;
      return attrs;
  }
  return attrs;
}

int OptimizerInputRuns(OptimizerKind kind) { return kind == OptimizerKind::kAdam ? 4 : 3; }

absl::StatusOr<int64_t> OptimizedTensorCount(OptimizerKind kind, size_t num_inputs, size_t num_outputs) {
  const int64_t runs = OptimizerInputRuns(kind);
  const int64_t tensors = static_cast<int64_t>(num_inputs) - 2;
  if (tensors < runs || tensors % runs != 0) {
    return absl::InvalidArgumentError(absl::StrCat("needs R, T and ", runs, " runs of n tensors (", runs,
                                                   "n + 2 inputs, n >= 1), got ", num_inputs, " inputs"));
  }
  const int64_t n = tensors / runs;
  if (static_cast<int64_t>(num_outputs) != (runs - 1) * n) {
    return absl::InvalidArgumentError(absl::StrCat(n, " optimized tensors need ", (runs - 1) * n,
                                                   " outputs (X_new..., then the new states), got ", num_outputs));
  }
  return n;
}

absl::StatusOr<OptimizerStep> OptimizerStepOf(const ir::Tensor& rate, const ir::Tensor& count) {
  if (rate.num_elements() != 1 || count.num_elements() != 1) {
    return absl::InvalidArgumentError("R and T must hold one value each");
  }
  if (count.dtype() != DType::kInt64) return absl::InvalidArgumentError("T must be int64");
  return OptimizerStep{rate.GetAsDouble(0), count.GetAsInt64(0)};
}

std::vector<OpDef> OptimizerOpDefs() {
  return {
      {kAdagradOp, 5, kVariadic, InferOptimizer},
      {kAdamOp, 6, kVariadic, InferOptimizer},
      {kMomentumOp, 5, kVariadic, InferOptimizer},
  };
}

}  // namespace ops
