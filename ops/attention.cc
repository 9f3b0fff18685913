// Attention and RotaryEmbedding: attribute parsing, the 4-D view of Attention's inputs and the
// type/shape inference of both (see attention.h).
#include "ops/attention.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::Dim;
using ir::DType;
using Types = std::vector<ir::TensorType>;

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

absl::Status ExpectFloat(const InferContext& ctx, size_t i) {
  return ExpectDType(ctx, i, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
}

// a + b, a * b and a / b of dims, unknown unless both are known.
Dim AddDims(const Dim& a, const Dim& b) { return a.known() && b.known() ? Dim(a.value + b.value) : Dim(); }
Dim MulDims(const Dim& a, int64_t b) { return a.known() && b > 0 ? Dim(a.value * b) : Dim(); }
Dim DivDims(const Dim& a, int64_t b) { return a.known() && b > 0 ? Dim(a.value / b) : Dim(); }

// The concrete dims of input i, or empty when absent or not all known.
std::vector<int64_t> ConcreteDims(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i) || !ctx.type(i).shape) return {};
  std::optional<std::vector<int64_t>> dims = ir::ShapeToInts(*ctx.type(i).shape);
  return dims ? *dims : std::vector<int64_t>{};
}

absl::StatusOr<Types> InferAttention(const InferContext& ctx) {
  for (size_t i : {0, 1, 2, 4, 5}) {
    if (ctx.has_input(i)) {
      if (absl::Status s = ExpectFloat(ctx, i); !s.ok()) return s;
    }
  }
  if (ctx.has_input(4) != ctx.has_input(5)) return Invalid("past_key and past_value go together");
  if (ctx.has_input(6)) {
    if (absl::Status s = ExpectDType(ctx, 6, {DType::kInt64}); !s.ok()) return s;
  }
  absl::StatusOr<AttentionAttrs> attrs = ParseAttentionAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const ir::TensorType &q = ctx.type(0), &k = ctx.type(1), &v = ctx.type(2);
  const DType dtype = q.dtype;
  Types out(std::max<size_t>(1, ctx.num_outputs()), ir::TensorType{dtype, std::nullopt});
  std::vector<int64_t> qd = ConcreteDims(ctx, 0), kd = ConcreteDims(ctx, 1), vd = ConcreteDims(ctx, 2);
  if (!qd.empty() && !kd.empty() && !vd.empty() && (!ctx.has_input(4) || !ConcreteDims(ctx, 4).empty())) {
    absl::StatusOr<AttentionDims> d = AttentionDimsOf(*attrs, qd, kd, vd, ConcreteDims(ctx, 4));
    if (!d.ok()) return d.status();
  }
  if (!q.shape || !k.shape || !v.shape) return out;
  const ir::Shape &qs = *q.shape, &ks = *k.shape, &vs = *v.shape;
  if (qs.size() != ks.size() || qs.size() != vs.size() || (qs.size() != 3 && qs.size() != 4)) {
    return Invalid("Q, K and V must all be 3-D or all 4-D");
  }
  const bool three_d = qs.size() == 3;
  const Dim past =
      ctx.has_input(4) ? (ctx.type(4).shape && ctx.type(4).rank() == 4 ? (*ctx.type(4).shape)[2] : Dim()) : Dim(0);
  const Dim total = AddDims(past, ks[three_d ? 1 : 2]);
  const Dim kv_heads = three_d ? Dim(attrs->kv_num_heads) : ks[1];
  const Dim head = three_d ? DivDims(ks[2], attrs->kv_num_heads) : ks[3];
  const Dim v_head = three_d ? DivDims(vs[2], attrs->kv_num_heads) : vs[3];
  out[0].shape =
      three_d ? ir::Shape{qs[0], qs[1], MulDims(v_head, attrs->q_num_heads)} : ir::Shape{qs[0], qs[1], qs[2], vs[3]};
  if (out.size() > 1) out[1].shape = ir::Shape{ks[0], kv_heads, total, head};
  if (out.size() > 2) out[2] = ir::TensorType{v.dtype, ir::Shape{vs[0], kv_heads, total, v_head}};
  if (out.size() > 3) {
    out[3].shape = ir::Shape{qs[0], three_d ? Dim(attrs->q_num_heads) : qs[1], qs[three_d ? 1 : 2], total};
  }
  return out;
}

absl::StatusOr<Types> InferRotary(const InferContext& ctx) {
  for (size_t i : {0, 1, 2}) {
    if (absl::Status s = ExpectFloat(ctx, i); !s.ok()) return s;
  }
  if (ctx.has_input(3)) {
    if (absl::Status s = ExpectDType(ctx, 3, {DType::kInt64}); !s.ok()) return s;
  }
  absl::StatusOr<RotaryAttrs> attrs = ParseRotaryAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const ir::TensorType& x = ctx.type(0);
  if (x.shape && x.rank() != 3 && x.rank() != 4) return Invalid("X must be 3-D or 4-D");
  if (x.rank() == 3 && attrs->num_heads == 0) return Invalid("num_heads is required for a 3-D X");
  return SameAsInput0(ctx);
}

absl::StatusOr<Types> InferTensorScatter(const InferContext& ctx) {
  if (ctx.type(1).dtype != ctx.type(0).dtype) return Invalid("update must have past_cache's dtype");
  if (ctx.has_input(2)) {
    if (absl::Status s = ExpectDType(ctx, 2, {DType::kInt64}); !s.ok()) return s;
  }
  absl::StatusOr<TensorScatterAttrs> attrs = ParseTensorScatterAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  return SameAsInput0(ctx);
}

}  // namespace

absl::StatusOr<TensorScatterAttrs> ParseTensorScatterAttrs(const ir::Node& node) {
  TensorScatterAttrs attrs;
  attrs.axis = node.attrs.GetInt("axis", -2);
  const std::string mode = node.attrs.GetString("mode", "linear");
  if (mode != "linear" && mode != "circular") return Invalid("mode must be linear or circular, not " + mode);
  attrs.circular = mode == "circular";
  if (attrs.axis == 0) return Invalid("axis must not be 0 (the batch)");
  return attrs;
}

absl::StatusOr<AttentionAttrs> ParseAttentionAttrs(const ir::Node& node) {
  const ir::Attributes& a = node.attrs;
  AttentionAttrs attrs;
  attrs.is_causal = a.GetInt("is_causal", 0) != 0;
  if (a.Has("scale")) attrs.scale = a.GetFloat("scale", 1.0f);
  attrs.q_num_heads = a.GetInt("q_num_heads", 0);
  attrs.kv_num_heads = a.GetInt("kv_num_heads", 0);
  attrs.softcap = a.GetFloat("softcap", 0.0f);
  attrs.qk_matmul_output_mode = a.GetInt("qk_matmul_output_mode", 0);
  attrs.left_window = a.GetInt("left_window_size", -1);
  attrs.right_window = a.GetInt("right_window_size", -1);
  if (attrs.left_window < -1 || attrs.right_window < -1) {
    return Invalid("left_window_size and right_window_size must be -1 or >= 0");
  }
  if (attrs.q_num_heads < 0 || attrs.kv_num_heads < 0) return Invalid("q_num_heads and kv_num_heads must be >= 0");
  if (attrs.qk_matmul_output_mode < 0 || attrs.qk_matmul_output_mode > 3) {
    return Invalid(absl::StrCat("qk_matmul_output_mode ", attrs.qk_matmul_output_mode, " is not 0 to 3"));
  }
  if (!std::isfinite(attrs.softcap) || attrs.softcap < 0) return Invalid("softcap must be finite and >= 0");
  if (attrs.scale && !std::isfinite(*attrs.scale)) return Invalid("scale must be finite");
  return attrs;
}

absl::StatusOr<AttentionDims> AttentionDimsOf(const AttentionAttrs& attrs, const std::vector<int64_t>& q,
                                              const std::vector<int64_t>& k, const std::vector<int64_t>& v,
                                              const std::vector<int64_t>& past_key) {
  AttentionDims d;
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4)) {
    return Invalid("Q, K and V must all be 3-D or all 4-D");
  }
  d.three_d = q.size() == 3;
  if (d.three_d) {
    if (attrs.q_num_heads == 0 || attrs.kv_num_heads == 0) {
      return Invalid("3-D inputs need the q_num_heads and kv_num_heads attributes");
    }
    if (q[2] % attrs.q_num_heads != 0 || k[2] % attrs.kv_num_heads != 0 || v[2] % attrs.kv_num_heads != 0) {
      return Invalid("the hidden sizes of Q, K and V must divide by their head counts");
    }
    d = {q[0], attrs.q_num_heads,        attrs.kv_num_heads,        q[1], k[1],
         0,    q[2] / attrs.q_num_heads, v[2] / attrs.kv_num_heads, true};
    if (k[2] / attrs.kv_num_heads != d.head_size) return Invalid("Q and K head sizes differ");
  } else {
    d = {q[0], q[1], k[1], q[2], k[2], 0, q[3], v[3], false};
    if (k[3] != q[3]) return Invalid("Q and K head sizes differ");
    if (v[1] != k[1] || v[2] != k[2]) return Invalid("K and V must have the same heads and length");
  }
  if (k[0] != d.batch || v[0] != d.batch) return Invalid("Q, K and V must have one batch size");
  if (d.three_d && v[1] != k[1]) return Invalid("K and V must have one length");
  if (d.kv_heads == 0 || d.q_heads % d.kv_heads != 0) {
    return Invalid(absl::StrCat("q heads ", d.q_heads, " are not a multiple of kv heads ", d.kv_heads));
  }
  if (!past_key.empty()) {
    if (past_key.size() != 4 || past_key[0] != d.batch || past_key[1] != d.kv_heads || past_key[3] != d.head_size) {
      return Invalid("past_key must be [batch, kv_heads, past, head_size]");
    }
    d.past_seq = past_key[2];
  }
  return d;
}

absl::StatusOr<RotaryAttrs> ParseRotaryAttrs(const ir::Node& node) {
  RotaryAttrs attrs;
  attrs.interleaved = node.attrs.GetInt("interleaved", 0) != 0;
  attrs.num_heads = node.attrs.GetInt("num_heads", 0);
  attrs.rotary_dim = node.attrs.GetInt("rotary_embedding_dim", 0);
  if (attrs.num_heads < 0 || attrs.rotary_dim < 0) return Invalid("num_heads and rotary_embedding_dim must be >= 0");
  return attrs;
}

std::vector<OpDef> AttentionOpDefs() {
  return {{"Attention", 3, 7, InferAttention},
          {"RotaryEmbedding", 3, 4, InferRotary},
          {"TensorScatter", 2, 3, InferTensorScatter}};
}

}  // namespace ops
