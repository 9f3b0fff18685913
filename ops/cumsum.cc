// CumSum: attribute and axis parsing, and its type/shape inference (see cumsum.h).
#include "ops/cumsum.h"

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

absl::StatusOr<std::vector<ir::TensorType>> InferCumSum(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0,
                                   {ir::DType::kFloat32, ir::DType::kFloat64, ir::DType::kFloat16, ir::DType::kBFloat16,
                                    ir::DType::kInt32, ir::DType::kInt64, ir::DType::kUint32, ir::DType::kUint64});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectDType(ctx, 1, {ir::DType::kInt32, ir::DType::kInt64}); !s.ok()) return s;
  if (absl::StatusOr<CumSumAttrs> attrs = ParseCumSumAttrs(ctx.node); !attrs.ok()) return attrs.status();
  const ir::TensorType& x = ctx.type(0);
  const ir::TensorType& axis = ctx.type(1);
  if (axis.shape && axis.shape->size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("axis must be a scalar, not of rank ", axis.shape->size()));
  }
  if (ctx.value(1) != nullptr && x.shape) {
    if (absl::StatusOr<int64_t> a = CumSumAxis(*ctx.value(1), static_cast<int64_t>(x.shape->size())); !a.ok()) {
      return a.status();
    }
  }
  return std::vector<ir::TensorType>{x};
}

}  // namespace

absl::StatusOr<CumSumAttrs> ParseCumSumAttrs(const ir::Node& node) {
  CumSumAttrs attrs;
  absl::StatusOr<bool> exclusive = ParseFlagAttribute(node, "exclusive", false);
  if (!exclusive.ok()) return exclusive.status();
  absl::StatusOr<bool> reverse = ParseFlagAttribute(node, "reverse", false);
  if (!reverse.ok()) return reverse.status();
  attrs.exclusive = *exclusive;
  attrs.reverse = *reverse;
  return attrs;
}

absl::StatusOr<int64_t> CumSumAxis(const ir::Tensor& axis, int64_t rank) {
  if (axis.num_elements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("axis must hold one value, not ", axis.num_elements()));
  }
  if (rank == 0) return absl::InvalidArgumentError("a cumulative sum or product of a scalar (rank 0) has no axis");
  return NormalizeAxis(axis.ToInt64Vector()[0], rank);
}

ScanExtents ScanExtentsOf(const std::vector<int64_t>& dims, int64_t axis) {
  ScanExtents e;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    (d < axis ? e.outer : d == axis ? e.length : e.inner) *= dims[d];
  }
  return e;
}

std::vector<OpDef> CumSumOpDefs() { return {{"CumSum", 2, 2, InferCumSum}, {"CumProd", 2, 2, InferCumSum}}; }

}  // namespace ops
