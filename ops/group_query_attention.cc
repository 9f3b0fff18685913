// GroupQueryAttention's attributes and type/shape inference (see group_query_attention.h).
#include "ops/group_query_attention.h"

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::Dim;
using ir::DType;

// Inputs and attributes of ORT's newer forms that this implementation does not compute.
absl::Status CheckUnsupported(const InferContext& ctx) {
  const char* inputs[] = {"attention_bias", "head_sink",     "k_scale",      "v_scale",
                          "q_norm_weight",  "k_norm_weight", "query_seqlens"};
  for (size_t i = 10; i < 17; ++i) {
    if (ctx.has_input(i)) return absl::UnimplementedError(absl::StrCat("input ", inputs[i - 10], " is not supported"));
  }
  const ir::Attributes& a = ctx.attrs();
  if (a.GetInt("qk_output", 0) != 0 || ctx.num_outputs() > 3) {
    return absl::UnimplementedError("the output_qk output is not supported");
  }
  if (a.GetInt("causal", 1) != 1) return absl::UnimplementedError("causal=0 is not supported");
  if (a.GetInt("kv_cache_bit_width", 0) != 0 || a.GetString("k_quant_type", "NONE") != "NONE" ||
      a.GetString("v_quant_type", "NONE") != "NONE") {
    return absl::UnimplementedError("a quantized KV cache is not supported");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ir::TensorType>> InferGqa(const InferContext& ctx) {
  if (absl::Status s = CheckUnsupported(ctx); !s.ok()) return s;
  absl::StatusOr<GqaAttrs> attrs = ParseGqaAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const DType dtype = ctx.type(kGqaQuery).dtype;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat16)
    return absl::InvalidArgumentError("query must be float or float16");
  for (size_t i : {kGqaKey, kGqaValue, kGqaPastKey, kGqaPastValue, kGqaCosCache, kGqaSinCache}) {
    if (ctx.has_input(i) && ctx.type(i).dtype != dtype) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " must have query's dtype"));
    }
  }
  if (!ctx.has_input(kGqaSeqlensK) || !ctx.has_input(kGqaTotalSequenceLength)) {
    return absl::InvalidArgumentError("seqlens_k and total_sequence_length are required");
  }
  if (absl::Status s = ExpectDType(ctx, kGqaSeqlensK, {DType::kInt32}); !s.ok()) return s;
  if (absl::Status s = ExpectDType(ctx, kGqaTotalSequenceLength, {DType::kInt32}); !s.ok()) return s;
  if (ctx.has_input(kGqaKey) != ctx.has_input(kGqaValue) ||
      ctx.has_input(kGqaPastKey) != ctx.has_input(kGqaPastValue)) {
    return absl::InvalidArgumentError("key and value, and past_key and past_value, go together");
  }
  if (attrs->do_rotary && (!ctx.has_input(kGqaCosCache) || !ctx.has_input(kGqaSinCache))) {
    return absl::InvalidArgumentError("do_rotary needs cos_cache and sin_cache");
  }
  std::vector<ir::TensorType> out(3, ir::TensorType{dtype, std::nullopt});
  const ir::TensorType& q = ctx.type(kGqaQuery);
  if (!q.shape) return out;
  if (q.shape->size() != 3) return absl::InvalidArgumentError("query must be [batch, sequence, hidden]");
  const Dim batch = (*q.shape)[0], seq = (*q.shape)[1], hidden = (*q.shape)[2];
  const int64_t heads = ctx.has_input(kGqaKey) ? attrs->num_heads : attrs->num_heads + 2 * attrs->kv_num_heads;
  if (hidden.known() && hidden.value % heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("query's hidden size ", hidden.value, " is not a multiple of ", heads));
  }
  const Dim head = hidden.known() ? Dim(hidden.value / heads) : Dim();
  out[0].shape = ir::Shape{batch, seq, head.known() ? Dim(head.value * attrs->num_heads) : Dim()};
  out[1].shape = out[2].shape = ir::Shape{batch, attrs->kv_num_heads, Dim(), head};
  return out;
}

}  // namespace

absl::StatusOr<GqaAttrs> ParseGqaAttrs(const ir::Node& node) {
  GqaAttrs a;
  a.num_heads = node.attrs.GetInt("num_heads", 0), a.kv_num_heads = node.attrs.GetInt("kv_num_heads", 0);
  constexpr int64_t kMaxHeads = 1 << 16;
  if (a.num_heads <= 0 || a.kv_num_heads <= 0 || a.num_heads > kMaxHeads || a.kv_num_heads > kMaxHeads ||
      a.num_heads % a.kv_num_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat("num_heads (", a.num_heads, ") must be a multiple of ",
                                                   "kv_num_heads (", a.kv_num_heads, "), both in 1..65536"));
  }
  a.scale = node.attrs.GetFloat("scale", 0), a.softcap = node.attrs.GetFloat("softcap", 0);
  a.local_window_size = node.attrs.GetInt("local_window_size", -1);
  a.do_rotary = node.attrs.GetInt("do_rotary", 0) == 1;
  a.rotary_interleaved = node.attrs.GetInt("rotary_interleaved", 0) == 1;
  a.smooth_softmax = node.attrs.GetInt("smooth_softmax", 0) == 1;
  return a;
}

std::vector<OpDef> GroupQueryAttentionOpDefs() { return {{"com.microsoft.GroupQueryAttention", 1, 17, InferGqa}}; }

}  // namespace ops
