// Type and shape inference of the stateful sequence ops of opset 27: CausalConvWithState (a
// causal depthwise 1-D convolution carrying its last k - 1 inputs) and LinearAttention (linear,
// gated, delta and gated-delta recurrences over a [d_k, d_v] state per key/value head). Their CPU
// kernels are in kernels/cpu/recurrent_state.cc.
#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"

namespace ops {
namespace {

using ir::Dim;
using ir::DType;
using ir::Shape;

absl::Status ExpectRank(const InferContext& ctx, size_t i, int64_t rank, const char* name) {
  if (ctx.type(i).shape && ctx.type(i).rank() != rank) {
    return absl::InvalidArgumentError(absl::StrCat(name, " must have rank ", rank, ", not ", ctx.type(i).rank()));
  }
  return absl::OkStatus();
}

Dim DimOf(const InferContext& ctx, size_t i, size_t axis) {
  const ir::TensorType& t = ctx.type(i);
  return t.shape && axis < t.shape->size() ? (*t.shape)[axis] : Dim();
}

absl::StatusOr<std::vector<ir::TensorType>> InferCausalConvWithState(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
      !s.ok()) {
    return s;
  }
  for (auto [i, name] : {std::pair{size_t{0}, "input"}, std::pair{size_t{1}, "weight"}}) {
    if (absl::Status s = ExpectRank(ctx, i, 3, name); !s.ok()) return s;
  }
  const std::string activation = ctx.attrs().GetString("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish") {
    return absl::InvalidArgumentError(absl::StrCat("unknown activation '", activation, "'"));
  }
  const Dim k = DimOf(ctx, 1, 2);
  const Dim state = k.known() ? Dim(k.value - 1) : Dim();
  const ir::TensorType& x = ctx.type(0);
  const std::optional<Shape> present =
      x.shape ? std::optional<Shape>(Shape{(*x.shape)[0], (*x.shape)[1], state}) : std::nullopt;
  return std::vector<ir::TensorType>{x, {x.dtype, present}};
}

absl::StatusOr<std::vector<ir::TensorType>> InferLinearAttention(const InferContext& ctx) {
  const int64_t q_heads = ctx.attrs().GetInt("q_num_heads", 0), kv_heads = ctx.attrs().GetInt("kv_num_heads", 0);
  if (q_heads <= 0 || kv_heads <= 0 || q_heads % kv_heads != 0) {
    return absl::InvalidArgumentError("q_num_heads must be a positive multiple of kv_num_heads");
  }
  const std::string rule = ctx.attrs().GetString("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta") {
    return absl::InvalidArgumentError(absl::StrCat("unknown update_rule '", rule, "'"));
  }
  const bool gated = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
  if (gated != ctx.has_input(4) || delta != ctx.has_input(5)) {
    return absl::InvalidArgumentError(absl::StrCat("update_rule '", rule, "' ", gated ? "needs" : "takes no",
                                                   " decay and ", delta ? "needs" : "takes no", " beta"));
  }
  for (size_t i = 0; i < 3; ++i) {
    if (absl::Status s = ExpectDType(ctx, i, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
        !s.ok()) {
      return s;
    }
    if (absl::Status s = ExpectRank(ctx, i, 3, "query, key and value"); !s.ok()) return s;
  }
  const Dim width_k = DimOf(ctx, 1, 2), width_v = DimOf(ctx, 2, 2);
  const Dim d_k = width_k.known() ? Dim(width_k.value / kv_heads) : Dim();
  const Dim d_v = width_v.known() ? Dim(width_v.value / kv_heads) : Dim();
  const DType dtype = ctx.type(0).dtype;
  const DType state_dtype = ctx.has_input(3) ? ctx.type(3).dtype : dtype;
  return std::vector<ir::TensorType>{
      {dtype, Shape{DimOf(ctx, 0, 0), DimOf(ctx, 0, 1), d_v.known() ? Dim(d_v.value * q_heads) : Dim()}},
      {state_dtype, Shape{DimOf(ctx, 0, 0), Dim(kv_heads), d_k, d_v}}};
}

}  // namespace

std::vector<OpDef> RecurrentStateOpDefs() {
  return {{"CausalConvWithState", 2, 4, InferCausalConvWithState}, {"LinearAttention", 3, 6, InferLinearAttention}};
}

}  // namespace ops
