// Owns the type/shape inference of Det ([..., M, M] -> [...]), LpNormalization and
// MeanVarianceNormalization (same shape as the input), and their attribute parsers.
#include "ops/math_norm.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::DType;
using InferResult = absl::StatusOr<std::vector<ir::TensorType>>;

absl::Status ExpectFloat(const InferContext& ctx, size_t i) {
  return ExpectDType(ctx, i, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
}

InferResult InferDet(const InferContext& ctx) {
  if (absl::Status s = ExpectFloat(ctx, 0); !s.ok()) return s;
  const ir::TensorType& in = ctx.type(0);
  ir::TensorType out{in.dtype, std::nullopt};
  if (!in.shape) return std::vector<ir::TensorType>{out};
  const int64_t rank = in.rank();
  if (rank < 2) return absl::InvalidArgumentError(absl::StrCat("Det needs rank >= 2, got ", rank));
  const ir::Dim& m = (*in.shape)[rank - 2];
  const ir::Dim& n = (*in.shape)[rank - 1];
  if (m.known() && n.known() && m.value != n.value) {
    return absl::InvalidArgumentError(absl::StrCat("Det needs square matrices, got ", m.value, "x", n.value));
  }
  out.shape = ir::Shape(in.shape->begin(), in.shape->end() - 2);
  return std::vector<ir::TensorType>{out};
}

InferResult InferLpNormalization(const InferContext& ctx) {
  if (absl::Status s = ExpectFloat(ctx, 0); !s.ok()) return s;
  if (ctx.type(0).shape) {
    absl::StatusOr<LpNormalizationAttrs> a = ParseLpNormalizationAttrs(ctx.node, ctx.type(0).rank());
    if (!a.ok()) return a.status();
  }
  return SameAsInput0(ctx);
}

InferResult InferMvn(const InferContext& ctx) {
  if (absl::Status s = ExpectFloat(ctx, 0); !s.ok()) return s;
  if (ctx.type(0).shape) {
    absl::StatusOr<std::vector<bool>> mask = MvnAxesMask(ctx.node, ctx.type(0).rank());
    if (!mask.ok()) return mask.status();
  }
  return SameAsInput0(ctx);
}

}  // namespace

absl::StatusOr<LpNormalizationAttrs> ParseLpNormalizationAttrs(const ir::Node& node, int64_t rank) {
  LpNormalizationAttrs attrs;
  absl::StatusOr<int64_t> axis = NormalizeAxis(node.attrs.GetInt("axis", -1), rank);
  if (!axis.ok()) return axis.status();
  attrs.axis = *axis;
  attrs.p = node.attrs.GetInt("p", 2);
  if (attrs.p != 1 && attrs.p != 2) return absl::InvalidArgumentError(absl::StrCat("p must be 1 or 2, got ", attrs.p));
  return attrs;
}

absl::StatusOr<std::vector<bool>> MvnAxesMask(const ir::Node& node, int64_t rank) {
  std::vector<bool> mask(rank, false);
  for (int64_t axis : node.attrs.GetInts("axes", {0, 2, 3})) {
    absl::StatusOr<int64_t> a = NormalizeAxis(axis, rank);
    if (!a.ok()) return a.status();
    if (mask[*a]) return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " repeated"));
    mask[*a] = true;
  }
  return mask;
}

std::vector<OpDef> MathNormOpDefs() {
  return {
      {"Det", 1, 1, InferDet},
      {"LpNormalization", 1, 1, InferLpNormalization},
      {"MeanVarianceNormalization", 1, 1, InferMvn},
  };
}

}  // namespace ops
