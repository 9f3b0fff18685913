// Owns the type/shape inference of the math family: Ceil, Floor, Round, trigonometric and
// hyperbolic functions, Softsign, ThresholdedRelu, Shrink, Celu, Mish, the variadic broadcasting
// Mean and Hardmax (with its axis helpers of ops/math.h).
#include "ops/math.h"

#include <limits>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::DType;
using InferResult = absl::StatusOr<std::vector<ir::TensorType>>;

constexpr int kVariadic = std::numeric_limits<int>::max();

absl::Status ExpectFloat(const InferContext& ctx, size_t i) {
  return ExpectDType(ctx, i, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
}

InferResult InferFloatUnary(const InferContext& ctx) {
  if (absl::Status s = ExpectFloat(ctx, 0); !s.ok()) return s;
  return SameAsInput0(ctx);
}

// Shrink takes every numeric dtype.
InferResult InferShrink(const InferContext& ctx) {
  absl::Status s =
      ExpectDType(ctx, 0,
                  {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8, DType::kInt16,
                   DType::kInt32, DType::kInt64, DType::kUint8, DType::kUint16, DType::kUint32, DType::kUint64});
  if (!s.ok()) return s;
  return SameAsInput0(ctx);
}

// Mean(x0, x1, ...): float inputs of one dtype, broadcast.
InferResult InferMean(const InferContext& ctx) {
  if (absl::Status s = ExpectFloat(ctx, 0); !s.ok()) return s;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (absl::Status s = ExpectDType(ctx, i, {ctx.type(0).dtype}); !s.ok()) return s;
  }
  absl::StatusOr<std::optional<ir::Shape>> shape = BroadcastInputs(ctx);
  if (!shape.ok()) return shape.status();
  return std::vector<ir::TensorType>{ir::TensorType{ctx.type(0).dtype, *shape}};
}

InferResult InferHardmax(const InferContext& ctx) {
  if (absl::Status s = ExpectFloat(ctx, 0); !s.ok()) return s;
  if (ctx.type(0).shape) {
    absl::StatusOr<int64_t> axis = HardmaxAxis(ctx.node, ctx.type(0).rank());
    if (!axis.ok()) return axis.status();
  }
  return SameAsInput0(ctx);
}

}  // namespace

absl::StatusOr<int64_t> HardmaxAxis(const ir::Node& node, int64_t rank) {
  if (node.opset >= 13) return NormalizeAxis(node.attrs.GetInt("axis", -1), rank);
  const int64_t axis = node.attrs.GetInt("axis", 1);
  if (axis < -rank || axis > rank) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<HardmaxExtents> HardmaxExtentsOf(const ir::Node& node, const std::vector<int64_t>& dims) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  absl::StatusOr<int64_t> axis = HardmaxAxis(node, rank);
  if (!axis.ok()) return axis.status();
  const bool legacy = node.opset < 13;
  HardmaxExtents e;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t& part = d < *axis ? e.outer : (d == *axis || legacy ? e.n : e.inner);
    part *= dims[d];
  }
  return e;
}

std::vector<OpDef> MathOpDefs() {
  return {
      {"Ceil", 1, 1, InferFloatUnary},     {"Floor", 1, 1, InferFloatUnary},
      {"Round", 1, 1, InferFloatUnary},    {"Cos", 1, 1, InferFloatUnary},
      {"Sin", 1, 1, InferFloatUnary},      {"Tan", 1, 1, InferFloatUnary},
      {"Acos", 1, 1, InferFloatUnary},     {"Asin", 1, 1, InferFloatUnary},
      {"Atan", 1, 1, InferFloatUnary},     {"Cosh", 1, 1, InferFloatUnary},
      {"Sinh", 1, 1, InferFloatUnary},     {"Acosh", 1, 1, InferFloatUnary},
      {"Asinh", 1, 1, InferFloatUnary},    {"Atanh", 1, 1, InferFloatUnary},
      {"Softsign", 1, 1, InferFloatUnary}, {"ThresholdedRelu", 1, 1, InferFloatUnary},
      {"Shrink", 1, 1, InferShrink},       {"Celu", 1, 1, InferFloatUnary},
      {"Mish", 1, 1, InferFloatUnary},     {"Swish", 1, 1, InferFloatUnary},
      {"Mean", 1, kVariadic, InferMean},   {"Hardmax", 1, 1, InferHardmax},
  };
}

}  // namespace ops
