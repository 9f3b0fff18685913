// LRN: attribute parsing and type/shape inference (see lrn.h).
#include "ops/lrn.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

// Larger windows are refused: cuDNN takes at most 16 and real models use 3-11.
constexpr int64_t kMaxLrnSize = 1 << 16;

absl::StatusOr<std::vector<ir::TensorType>> InferLrn(const InferContext& ctx) {
  if (absl::Status s =
          ExpectDType(ctx, 0, {ir::DType::kFloat32, ir::DType::kFloat64, ir::DType::kFloat16, ir::DType::kBFloat16});
      !s.ok()) {
    return s;
  }
  if (absl::StatusOr<LrnAttrs> attrs = ParseLrnAttrs(ctx.node); !attrs.ok()) return attrs.status();
  const ir::TensorType& x = ctx.type(0);
  if (x.shape && x.shape->size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat("input must have rank >= 2 (N, C, ...), not ", x.shape->size()));
  }
  return std::vector<ir::TensorType>{x};
}

}  // namespace

absl::StatusOr<LrnAttrs> ParseLrnAttrs(const ir::Node& node) {
  LrnAttrs attrs;
  if (!node.attrs.Has("size")) return absl::InvalidArgumentError("attribute 'size' is required");
  attrs.size = node.attrs.GetInt("size", 0);
  if (attrs.size < 1 || attrs.size > kMaxLrnSize) {
    return absl::InvalidArgumentError(absl::StrCat("size must be in [1, ", kMaxLrnSize, "], not ", attrs.size));
  }
  attrs.alpha = node.attrs.GetFloat("alpha", 1e-4f);
  attrs.beta = node.attrs.GetFloat("beta", 0.75f);
  attrs.bias = node.attrs.GetFloat("bias", 1.0f);
  if (!std::isfinite(attrs.alpha) || !std::isfinite(attrs.beta) || !std::isfinite(attrs.bias)) {
    return absl::InvalidArgumentError("alpha, beta and bias must be finite");
  }
  return attrs;
}

std::vector<OpDef> LrnOpDefs() { return {{"LRN", 1, 1, InferLrn}}; }

}  // namespace ops
