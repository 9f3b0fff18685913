// The CPU kernel of Attention (semantics in ops/attention.h), (batch, head) pairs on ParallelFor's
// threads. The inference form in float32 (no past state or sequence lengths, no softcap, only Y
// asked for) runs on BLAS: per pair, scores = Q K^T and Y = P V as float32 gemms, mask and softmax
// per row. Every other form is the reference: inputs read into doubles in their 4-D view, scores,
// masks and softmax in double, the dot products as vector axpys, outputs converted to their dtypes.
#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/axpy.h"
#include "kernels/cpu/float_values.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/nn_util.h"
#include "kernels/cpu/parallel.h"

namespace kernels::cpu {
namespace {

constexpr double kMasked = -std::numeric_limits<double>::infinity();

std::vector<double> ToDoubles(const ir::Tensor* t) {
  std::vector<double> v(t != nullptr ? t->num_elements() : 0);
  for (size_t i = 0; i < v.size(); ++i) v[i] = t->GetAsDouble(static_cast<int64_t>(i));
  return v;
}

// A [B, heads, seq, head] array in row-major order.
struct Heads {
  std::vector<double> data;
  int64_t heads = 0, seq = 0, size = 0;
  double& at(int64_t b, int64_t h, int64_t s, int64_t e) { return data[((b * heads + h) * seq + s) * size + e]; }
  double at(int64_t b, int64_t h, int64_t s, int64_t e) const { return data[((b * heads + h) * seq + s) * size + e]; }
};

// Input t in its 4-D view; a 3-D [B, seq, heads * size] input is transposed to it.
Heads ViewHeads(const ir::Tensor& t, bool three_d, int64_t batch, int64_t heads, int64_t seq, int64_t size) {
  Heads out{std::vector<double>(batch * heads * seq * size), heads, seq, size};
  const std::vector<double> in = ToDoubles(&t);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t s = 0; s < seq; ++s)
        for (int64_t e = 0; e < size; ++e) {
          out.at(b, h, s, e) =
              three_d ? in[((b * seq + s) * heads + h) * size + e] : in[((b * heads + h) * seq + s) * size + e];
        }
  return out;
}

// past (may be empty) followed by cur along the sequence.
Heads Concat(const ir::Tensor* past, const Heads& cur, int64_t batch, int64_t past_seq) {
  Heads out{std::vector<double>(batch * cur.heads * (past_seq + cur.seq) * cur.size), cur.heads, past_seq + cur.seq,
            cur.size};
  const std::vector<double> p = ToDoubles(past);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < cur.heads; ++h)
      for (int64_t s = 0; s < out.seq; ++s)
        for (int64_t e = 0; e < cur.size; ++e) {
          out.at(b, h, s, e) =
              s < past_seq ? p[((b * cur.heads + h) * past_seq + s) * cur.size + e] : cur.at(b, h, s - past_seq, e);
        }
  return out;
}

// The additive bias of attn_mask at [b, h, i, j], broadcast to [B, Hq, Sq, total] (a last dim
// shorter than total masks the keys past it).
class MaskBias {
 public:
  static absl::StatusOr<MaskBias> Create(const ir::Tensor* mask, const ops::AttentionDims& d) {
    MaskBias m;
    if (mask == nullptr) return m;
    m.values_ = ToDoubles(mask);
    m.is_bool_ = mask->dtype() == ir::DType::kBool;
    const int64_t target[4] = {d.batch, d.q_heads, d.q_seq, d.total_seq()};
    const int64_t rank = mask->rank();
    if (rank < 1 || rank > 4) return absl::InvalidArgumentError("Attention: attn_mask must have rank 1 to 4");
    int64_t stride = 1;
    for (int64_t a = 3; a >= 0; --a) {
      const int64_t md = a - (4 - rank);
      const int64_t size = md >= 0 ? mask->shape()[md] : 1;
      const bool fits = size == 1 || size == target[a] || (a == 3 && size < target[a]);
      if (!fits) {
        return absl::InvalidArgumentError(absl::StrCat("Attention: attn_mask shape ", ir::ShapeToString(mask->shape()),
                                                       " does not broadcast to the scores"));
      }
      m.strides_[a] = size == 1 ? 0 : stride;
      if (a == 3) m.keys_ = size == 1 ? target[3] : size;
      stride *= size;
    }
    return m;
  }
  double at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (values_.empty()) return 0;
    if (j >= keys_) return kMasked;
    const double v = values_[b * strides_[0] + h * strides_[1] + i * strides_[2] + j * strides_[3]];
    return is_bool_ ? (v != 0 ? 0.0 : kMasked) : v;
  }

 private:
  std::vector<double> values_;
  bool is_bool_ = false;
  int64_t strides_[4] = {0, 0, 0, 0};
  int64_t keys_ = 0;
};

// Writes v (in the 4-D order, or the 3-D one for Y of 3-D inputs) into t when it is requested.
absl::Status Store(ir::Tensor* t, const std::vector<double>& v) {
  return t == nullptr ? absl::OkStatus() : WriteDoubles(v, *t);
}

// Softmax of one row in place; a row with every key masked becomes zeros.
void SoftmaxRow(double* row, int64_t n) {
  if (n == 0) return;
  const double top = *std::max_element(row, row + n);
  if (top == kMasked) {
    std::fill(row, row + n, 0.0);
    return;
  }
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += (row[j] = std::exp(row[j] - top));
  for (int64_t j = 0; j < n; ++j) row[j] /= sum;
}

// True for the form the float32 path runs: Q, K, V and Y float32, no past state, no
// nonpad_kv_seqlen, no softcap, no present or scores outputs.
bool RunsOnFloat32Path(KernelContext& ctx, const ops::AttentionAttrs& attrs) {
  for (int i : {0, 1, 2}) {
    if (ctx.input(i)->dtype() != ir::DType::kFloat32) return false;
  }
  for (int i : {4, 5, 6}) {
    if (ctx.input(i) != nullptr) return false;
  }
  for (int o : {1, 2, 3}) {
    if (ctx.output(o) != nullptr) return false;
  }
  return ctx.output(0) != nullptr && ctx.output(0)->dtype() == ir::DType::kFloat32 && attrs.softcap == 0;
}

// Rows [seq, size] of head h of batch b of t, laid out [B, heads, seq, size] or (three_d) [B, seq,
// heads * size], copied into `rows`.
void GatherHead(const float* t, bool three_d, int64_t heads, int64_t seq, int64_t size, int64_t b, int64_t h,
                float* rows) {
  for (int64_t s = 0; s < seq; ++s) {
    const float* src = t + (three_d ? ((b * seq + s) * heads + h) * size : ((b * heads + h) * seq + s) * size);
    std::copy(src, src + size, rows + s * size);
  }
}

// Softmax of one float row in place (the sum in double); a row with every key masked becomes zeros.
void SoftmaxRowFloat(float* row, int64_t n) {
  const float top = *std::max_element(row, row + n);
  if (top == -std::numeric_limits<float>::infinity()) {
    std::fill(row, row + n, 0.0f);
    return;
  }
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += (row[j] = std::exp(row[j] - top));
  const float inverse = static_cast<float>(1.0 / sum);
  for (int64_t j = 0; j < n; ++j) row[j] *= inverse;
}

absl::Status AttentionFloat32(KernelContext& ctx, const ops::AttentionAttrs& attrs, const ops::AttentionDims& d,
                              const MaskBias& mask) {
  const float *q = ctx.input(0)->data<float>(), *k = ctx.input(1)->data<float>(), *v = ctx.input(2)->data<float>();
  float* y = ctx.output(0)->data<float>();
  const int64_t keys = d.kv_seq, group = d.q_heads / d.kv_heads;
  const float scale =
      static_cast<float>(attrs.scale ? *attrs.scale : 1.0 / std::sqrt(static_cast<double>(d.head_size)));
  const int64_t pairs = d.batch * d.q_heads;
  std::vector<absl::Status> statuses(pairs);
  ParallelFor(pairs, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> qh(d.q_seq * d.head_size), kh(keys * d.head_size), vh(keys * d.v_head_size),
        scores(d.q_seq * keys), out(d.q_seq * d.v_head_size);
    for (int64_t pair = begin; pair < end; ++pair) {
      const int64_t b = pair / d.q_heads, h = pair % d.q_heads, kv = h / group;
      GatherHead(q, d.three_d, d.q_heads, d.q_seq, d.head_size, b, h, qh.data());
      GatherHead(k, d.three_d, d.kv_heads, keys, d.head_size, b, kv, kh.data());
      GatherHead(v, d.three_d, d.kv_heads, keys, d.v_head_size, b, kv, vh.data());
      statuses[pair] =
          nn::Gemm(false, true, d.q_seq, keys, d.head_size, scale, qh.data(), kh.data(), 0.0f, scores.data());
      for (int64_t i = 0; i < d.q_seq; ++i) {
        float* row = scores.data() + i * keys;
        for (int64_t j = 0; j < keys; ++j) {
          row[j] = (attrs.is_causal && j > i) || attrs.OutsideWindow(i, j)
                       ? -std::numeric_limits<float>::infinity()
                       : static_cast<float>(row[j] + mask.at(b, h, i, j));
        }
        SoftmaxRowFloat(row, keys);
      }
      if (statuses[pair].ok()) {
        statuses[pair] =
            nn::Gemm(false, false, d.q_seq, d.v_head_size, keys, 1.0f, scores.data(), vh.data(), 0.0f, out.data());
      }
      for (int64_t i = 0; i < d.q_seq; ++i) {  // Y is [B, Sq, Hq * Dv] for 3-D inputs, [B, Hq, Sq, Dv] otherwise
        const int64_t at = d.three_d ? ((b * d.q_seq + i) * d.q_heads + h) * d.v_head_size
                                     : ((b * d.q_heads + h) * d.q_seq + i) * d.v_head_size;
        std::copy(out.begin() + i * d.v_head_size, out.begin() + (i + 1) * d.v_head_size, y + at);
      }
    }
  });
  for (const absl::Status& s : statuses) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Attention(KernelContext& ctx) {
  absl::StatusOr<ops::AttentionAttrs> attrs = ops::ParseAttentionAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const ir::Tensor *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2), *past_k = ctx.input(4),
                   *past_v = ctx.input(5), *nonpad = ctx.input(6);
  if (q == nullptr || k == nullptr || v == nullptr) return absl::InvalidArgumentError("Attention: Q, K, V required");
  absl::StatusOr<ops::AttentionDims> dims = ops::AttentionDimsOf(*attrs, q->shape(), k->shape(), v->shape(),
                                                                 past_k ? past_k->shape() : std::vector<int64_t>{});
  if (!dims.ok()) return dims.status();
  const ops::AttentionDims& d = *dims;
  if ((past_k == nullptr) != (past_v == nullptr)) {
    return absl::InvalidArgumentError("Attention: past_key and past_value go together");
  }
  if (past_v != nullptr && past_v->shape() != std::vector<int64_t>{d.batch, d.kv_heads, d.past_seq, d.v_head_size}) {
    return absl::InvalidArgumentError(absl::StrCat("Attention: past_value ", ir::ShapeToString(past_v->shape()),
                                                   " is not [batch, kv_heads, past, v_head_size]"));
  }
  if (nonpad != nullptr && nonpad->num_elements() != d.batch) {
    return absl::InvalidArgumentError("Attention: nonpad_kv_seqlen must hold one length per batch");
  }
  absl::StatusOr<MaskBias> mask = MaskBias::Create(ctx.input(3), d);
  if (!mask.ok()) return mask.status();
  if (RunsOnFloat32Path(ctx, *attrs)) return AttentionFloat32(ctx, *attrs, d, *mask);
  Heads qh = ViewHeads(*q, d.three_d, d.batch, d.q_heads, d.q_seq, d.head_size);
  Heads kh = Concat(past_k, ViewHeads(*k, d.three_d, d.batch, d.kv_heads, d.kv_seq, d.head_size), d.batch, d.past_seq);
  Heads vh =
      Concat(past_v, ViewHeads(*v, d.three_d, d.batch, d.kv_heads, d.kv_seq, d.v_head_size), d.batch, d.past_seq);
  const int64_t total = d.total_seq(), group = d.q_heads / d.kv_heads;
  const double scale = attrs->scale ? *attrs->scale : 1.0 / std::sqrt(static_cast<double>(d.head_size));
  // The scores are kept only when qk_matmul_output is requested (its size was checked against the
  // tensor limits when it was allocated); otherwise one row at a time.
  const bool keep_qk = ctx.output(3) != nullptr;
  if (keep_qk && ctx.output(3)->num_elements() != d.batch * d.q_heads * d.q_seq * total) {
    return absl::InvalidArgumentError("Attention: qk_matmul_output does not have [batch, q_heads, q_seq, keys]");
  }
  std::vector<double> y(d.batch * d.q_heads * d.q_seq * d.v_head_size), qk(keep_qk ? ctx.output(3)->num_elements() : 0);
  // One (batch, head) pair per chunk on ParallelFor's threads; each writes its own rows of y and qk.
  ParallelFor(d.batch * d.q_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> keys_t(d.head_size * total), row(total), scratch_qk(total), acc(d.v_head_size);
    for (int64_t pair = begin; pair < end; ++pair) {
      const int64_t b = pair / d.q_heads, h = pair % d.q_heads, kv = h / group;
      const int64_t valid = nonpad != nullptr ? nonpad->GetAsInt64(b) : total;
      const int64_t causal_offset = past_k != nullptr || nonpad == nullptr ? d.past_seq : valid - d.q_seq;
      for (int64_t j = 0; j < total; ++j) {  // K transposed: the scores of a query row are one axpy per e
        for (int64_t e = 0; e < d.head_size; ++e) keys_t[e * total + j] = kh.at(b, kv, j, e);
      }
      for (int64_t i = 0; i < d.q_seq; ++i) {
        double* out_qk = keep_qk ? &qk[((b * d.q_heads + h) * d.q_seq + i) * total] : scratch_qk.data();
        std::fill(row.begin(), row.end(), 0.0);
        for (int64_t e = 0; e < d.head_size; ++e) Axpy(row.data(), keys_t.data() + e * total, qh.at(b, h, i, e), total);
        for (int64_t j = 0; j < total; ++j) {
          double s = row[j] * scale;
          if (attrs->qk_matmul_output_mode == 0) out_qk[j] = s;
          if (attrs->softcap > 0) s = attrs->softcap * std::tanh(s / attrs->softcap);
          if (attrs->qk_matmul_output_mode == 1) out_qk[j] = s;
          s += mask->at(b, h, i, j);
          if (attrs->is_causal && j > i + causal_offset) s = kMasked;
          if (attrs->OutsideWindow(i + causal_offset, j)) s = kMasked;
          if (j >= valid) s = kMasked;
          if (attrs->qk_matmul_output_mode == 2) out_qk[j] = s;
          row[j] = s;
        }
        SoftmaxRow(row.data(), total);
        if (attrs->qk_matmul_output_mode == 3) std::copy(row.begin(), row.end(), out_qk);
        std::fill(acc.begin(), acc.end(), 0.0);
        const double* values = vh.data.data() + (b * vh.heads + kv) * vh.seq * vh.size;
        for (int64_t j = 0; j < total; ++j) Axpy(acc.data(), values + j * vh.size, row[j], d.v_head_size);
        // Y is [B, Sq, Hq * Dv] for 3-D inputs, [B, Hq, Sq, Dv] otherwise.
        const int64_t at = d.three_d ? ((b * d.q_seq + i) * d.q_heads + h) * d.v_head_size
                                     : ((b * d.q_heads + h) * d.q_seq + i) * d.v_head_size;
        std::copy(acc.begin(), acc.end(), y.begin() + at);
      }
    }
  });
  for (absl::Status s : {Store(ctx.output(0), y), Store(ctx.output(1), kh.data), Store(ctx.output(2), vh.data),
                         Store(ctx.output(3), qk)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> AttentionKernels() { return {{"Attention", Attention}}; }

}  // namespace kernels::cpu
