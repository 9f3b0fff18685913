// The random generator ops: attribute parsing, the unseeded-draw rule and type/shape inference
// (see random.h).
#include "ops/random.h"

#include <cmath>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "ops/dropout.h"
#include "ops/infer_util.h"
#include "ops/tensor_ops_util.h"

namespace ops {
namespace {

using ir::DType;
using tensor_ops::Invalid;
using tensor_ops::One;
using Types = std::vector<ir::TensorType>;

bool IsRandomOp(std::string_view op) {
  return op == "RandomUniform" || op == "RandomNormal" || op == "RandomUniformLike" || op == "RandomNormalLike" ||
         op == "Bernoulli" || op == "Multinomial";
}

// The dtype an op may produce: floats for the generators, any number or bool for Bernoulli, int32
// or int64 for Multinomial.
absl::Status CheckOutputDType(std::string_view op, DType dtype) {
  bool ok = ir::IsFloatingPoint(dtype);
  if (op == "Bernoulli") ok = ir::IsSupportedDType(dtype) && dtype != DType::kBFloat16 && dtype != DType::kString;
  if (op == "Multinomial") ok = dtype == DType::kInt32 || dtype == DType::kInt64;
  if (ok) return absl::OkStatus();
  return Invalid(absl::StrCat(std::string(op), " cannot produce dtype ", ir::DTypeName(dtype)));
}

// The dtype when the node sets none.
DType DefaultDType(std::string_view op, DType input_dtype) {
  if (op == "RandomUniform" || op == "RandomNormal") return DType::kFloat32;
  if (op == "Multinomial") return DType::kInt32;
  return input_dtype;
}

absl::StatusOr<Types> InferGenerator(const InferContext& ctx) {
  absl::StatusOr<RandomAttrs> attrs = ParseRandomAttrs(ctx.node, DType::kFloat32);
  if (!attrs.ok()) return attrs.status();
  return One(attrs->dtype, ir::ShapeFromInts(attrs->shape));
}

// RandomUniformLike, RandomNormalLike: input 0's shape (its dtype any), the parsed dtype.
absl::StatusOr<Types> InferLike(const InferContext& ctx) {
  absl::StatusOr<RandomAttrs> attrs = ParseRandomAttrs(ctx.node, ctx.type(0).dtype);
  if (!attrs.ok()) return attrs.status();
  return One(attrs->dtype, ctx.type(0).shape);
}

absl::StatusOr<Types> InferBernoulli(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64});
      !s.ok())
    return s;
  return InferLike(ctx);
}

// Multinomial(input [batch, classes]) -> [batch, sample_size].
absl::StatusOr<Types> InferMultinomial(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64});
      !s.ok())
    return s;
  absl::StatusOr<RandomAttrs> attrs = ParseRandomAttrs(ctx.node, ctx.type(0).dtype);
  if (!attrs.ok()) return attrs.status();
  const ir::TensorType& in = ctx.type(0);
  if (!in.shape) return One(attrs->dtype, ir::Shape{ir::Dim(), ir::Dim(attrs->sample_size)});
  if (in.shape->size() != 2)
    return Invalid(absl::StrCat("input must be [batch_size, class_size], got rank ", in.rank()));
  return One(attrs->dtype, ir::Shape{(*in.shape)[0], ir::Dim(attrs->sample_size)});
}

}  // namespace

absl::StatusOr<RandomAttrs> ParseRandomAttrs(const ir::Node& node, DType input_dtype) {
  const ir::Attributes& a = node.attrs;
  RandomAttrs out;
  out.dtype = a.Has("dtype") ? static_cast<DType>(a.GetInt("dtype", 0)) : DefaultDType(node.op_type, input_dtype);
  if (absl::Status s = CheckOutputDType(node.op_type, out.dtype); !s.ok()) return s;
  out.low = a.GetFloat("low", 0.0f);
  out.high = a.GetFloat("high", 1.0f);
  out.mean = a.GetFloat("mean", 0.0f);
  out.scale = a.GetFloat("scale", 1.0f);
  if (!std::isfinite(out.low) || !std::isfinite(out.high) || !std::isfinite(out.mean) || !std::isfinite(out.scale)) {
    return Invalid("low, high, mean and scale must be finite");
  }
  out.sample_size = a.GetInt("sample_size", 1);
  if (out.sample_size < 1) return Invalid(absl::StrCat("sample_size must be positive, got ", out.sample_size));
  if (node.op_type == "RandomUniform" || node.op_type == "RandomNormal") {
    if (!a.Has("shape")) return Invalid("the shape attribute is required");
    out.shape = a.GetInts("shape");
    for (int64_t d : out.shape) {
      if (d < 0) return Invalid(absl::StrCat("shape has a negative dim ", d));
    }
  }
  if (a.Has("seed")) {
    const double seed = a.GetFloat("seed", 0.0f);
    if (!std::isfinite(seed)) return Invalid("seed must be finite");
    // numpy's RandomState(int(seed)); the low 32 bits of a seed outside [0, 2^32).
    out.seed = static_cast<uint32_t>(static_cast<uint64_t>(static_cast<int64_t>(std::fmod(seed, 0x1p62))));
  }
  return out;
}

bool DrawsUnseeded(const ir::Graph& graph, const ir::Node& node) {
  if (node.op_type == "Dropout") return DropoutDrawsUnseeded(graph, node);
  return IsRandomOp(node.op_type) && !node.attrs.Has("seed");
}

std::vector<OpDef> RandomOpDefs() {
  return {{"RandomUniform", 0, 0, InferGenerator}, {"RandomNormal", 0, 0, InferGenerator},
          {"RandomUniformLike", 1, 1, InferLike},  {"RandomNormalLike", 1, 1, InferLike},
          {"Bernoulli", 1, 1, InferBernoulli},     {"Multinomial", 1, 1, InferMultinomial}};
}

}  // namespace ops
