// The CPU kernel of ONNX Runtime's GroupQueryAttention (semantics in ops/group_query_attention.h):
// per batch the past length from seqlens_k, Q and the new K rotated, the present caches written,
// then per query head and row the causal (windowed) softmax over its keys and the weighted values.
#include "ops/group_query_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/half.h"
#include "kernels/cpu/float_values.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/rotary.h"
#include "kernels/cpu/tensor_select_util.h"

namespace kernels::cpu {
namespace {

absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat("GroupQueryAttention: ", message));
}

// The step's dims, with Q, K and V as [B, S, heads, D] rows of doubles.
struct GqaStep {
  int64_t batch = 0, seq = 0, heads = 0, kv_heads = 0, head = 0, past = 0, present = 0;
  bool first_prompt = false;
  std::vector<double> q, k, v;                // [B, S, Hq or Hkv, D]
  std::vector<int64_t> past_lengths, totals;  // per batch
  double& Q(int64_t b, int64_t s, int64_t h, int64_t d) { return q[((b * seq + s) * heads + h) * head + d]; }
  double& K(int64_t b, int64_t s, int64_t h, int64_t d) { return k[((b * seq + s) * kv_heads + h) * head + d]; }
};

// Q, K, V from query (and key / value, or packed in query: per token Hq, then Hkv, then Hkv heads).
absl::Status ReadQkv(const KernelContext& ctx, GqaStep& step) {
  absl::StatusOr<std::vector<double>> query = ReadDoubles(*ctx.input(ops::kGqaQuery));
  if (!query.ok()) return query.status();
  if (ctx.input(ops::kGqaKey) == nullptr) {
    const int64_t width = (step.heads + 2 * step.kv_heads) * step.head, q_width = step.heads * step.head;
    const int64_t kv_width = step.kv_heads * step.head;
    for (int64_t t = 0; t < step.batch * step.seq; ++t) {
      const double* row = query->data() + t * width;
      step.q.insert(step.q.end(), row, row + q_width);
      step.k.insert(step.k.end(), row + q_width, row + q_width + kv_width);
      step.v.insert(step.v.end(), row + q_width + kv_width, row + width);
    }
    return absl::OkStatus();
  }
  step.q = *std::move(query);
  absl::StatusOr<std::vector<double>> key = ReadDoubles(*ctx.input(ops::kGqaKey));
  absl::StatusOr<std::vector<double>> value = ReadDoubles(*ctx.input(ops::kGqaValue));
  if (!key.ok() || !value.ok()) return key.ok() ? value.status() : key.status();
  const size_t kv_size = static_cast<size_t>(step.batch * step.seq * step.kv_heads * step.head);
  if (key->size() != kv_size || value->size() != kv_size)
    return Invalid("key and value must be [B, S, kv_num_heads * D]");
  step.k = *std::move(key), step.v = *std::move(value);
  return absl::OkStatus();
}

// The dims, the past and total length of every sequence, checked against the caches.
absl::StatusOr<GqaStep> ReadStep(const KernelContext& ctx, const ops::GqaAttrs& attrs) {
  GqaStep step;
  const ir::Tensor& query = *ctx.input(ops::kGqaQuery);
  const bool packed = ctx.input(ops::kGqaKey) == nullptr;
  const int64_t heads_in_query = packed ? attrs.num_heads + 2 * attrs.kv_num_heads : attrs.num_heads;
  if (query.rank() != 3 || query.shape()[2] == 0 || query.shape()[2] % heads_in_query != 0) {
    return Invalid("query must be [B, S, heads * D] with D > 0");
  }
  step.batch = query.shape()[0], step.seq = query.shape()[1], step.heads = attrs.num_heads;
  step.kv_heads = attrs.kv_num_heads, step.head = query.shape()[2] / heads_in_query;
  const ir::Tensor* past_key = ctx.input(ops::kGqaPastKey);
  if (past_key != nullptr) {
    const std::vector<int64_t> want = {step.batch, step.kv_heads, past_key->rank() == 4 ? past_key->shape()[2] : -1,
                                       step.head};
    if (past_key->shape() != want || ctx.input(ops::kGqaPastValue)->shape() != want) {
      return Invalid("past_key and past_value must be [B, kv_num_heads, P, D]");
    }
    step.past = want[2];
  }
  const ir::Tensor &seqlens = *ctx.input(ops::kGqaSeqlensK), &total = *ctx.input(ops::kGqaTotalSequenceLength);
  if (seqlens.num_elements() != step.batch || total.num_elements() != 1) {
    return Invalid("seqlens_k must hold one length per batch and total_sequence_length one value");
  }
  const int64_t total_length = total.GetAsInt64(0);
  if (total_length < 1 || total_length > step.past + step.seq) {  // the cache never grows past them
    return Invalid(absl::StrCat("total_sequence_length ", total_length, " is not in 1..", step.past + step.seq,
                                " (the past cache's ", step.past, " rows plus ", step.seq, " new tokens)"));
  }
  step.present = std::max(total_length, step.past);
  step.first_prompt = step.seq == total_length;
  for (int64_t b = 0; b < step.batch; ++b) {
    const int64_t length = seqlens.GetAsInt64(b) + 1, past = step.first_prompt ? 0 : length - step.seq;
    if (length < 1 || length > step.present || past < 0 || past > step.past || past + step.seq > step.present) {
      return Invalid(absl::StrCat("seqlens_k[", b, "] = ", length - 1, " does not fit ", step.seq,
                                  " new tokens, a cache of ", step.past, " and total_sequence_length ", total_length));
    }
    step.totals.push_back(length), step.past_lengths.push_back(past);
  }
  if (absl::Status read = ReadQkv(ctx, step); !read.ok()) return read;
  return step;
}

absl::Status ApplyRotary(const KernelContext& ctx, const ops::GqaAttrs& attrs, GqaStep& step) {
  absl::StatusOr<std::vector<double>> cos = ReadDoubles(*ctx.input(ops::kGqaCosCache));
  absl::StatusOr<std::vector<double>> sin = ReadDoubles(*ctx.input(ops::kGqaSinCache));
  if (!cos.ok() || !sin.ok()) return cos.ok() ? sin.status() : cos.status();
  const ir::Tensor& cache = *ctx.input(ops::kGqaCosCache);
  const int64_t half = cache.rank() == 2 ? cache.shape()[1] : 0, rows = cache.rank() == 2 ? cache.shape()[0] : 0;
  if (half == 0 || 2 * half > step.head || ctx.input(ops::kGqaSinCache)->shape() != cache.shape()) {
    return Invalid("cos_cache and sin_cache must be [max_position, rotary_dim / 2] with rotary_dim <= head size");
  }
  const ir::Tensor* positions = ctx.input(ops::kGqaPositionIds);
  if (positions != nullptr && positions->num_elements() != step.batch * step.seq) {
    return Invalid("position_ids must be [B, S]");
  }
  for (int64_t b = 0; b < step.batch; ++b) {
    for (int64_t s = 0; s < step.seq; ++s) {
      const int64_t row = positions != nullptr ? positions->GetAsInt64(b * step.seq + s) : step.past_lengths[b] + s;
      if (row < 0 || row >= rows) return Invalid(absl::StrCat("position ", row, " is outside the rotary caches"));
      const double *c = cos->data() + row * half, *sn = sin->data() + row * half;
      for (int64_t h = 0; h < step.heads; ++h) RotateHead(&step.Q(b, s, h, 0), c, sn, half, attrs.rotary_interleaved);
      for (int64_t h = 0; h < step.kv_heads; ++h)
        RotateHead(&step.K(b, s, h, 0), c, sn, half, attrs.rotary_interleaved);
    }
  }
  return absl::OkStatus();
}

// Rounds `values` to float16 where the op computes in float16 (ORT stores rotated Q and K so).
void RoundLike(ir::DType dtype, std::vector<double>& values) {
  if (dtype != ir::DType::kFloat16) return;
  for (double& x : values) x = static_cast<float>(ir::Half(static_cast<float>(x)));
}

// The past rows of a cache, then the new ones, zeros after: [B, Hkv, present, D].
absl::StatusOr<std::vector<double>> PresentCache(const ir::Tensor* past, const std::vector<double>& fresh,
                                                 const GqaStep& step) {
  std::vector<double> present(static_cast<size_t>(step.batch * step.kv_heads * step.present * step.head), 0.0);
  std::vector<double> old;
  if (past != nullptr) {
    absl::StatusOr<std::vector<double>> read = ReadDoubles(*past);
    if (!read.ok()) return read.status();
    old = *std::move(read);
  }
  for (int64_t b = 0; b < step.batch; ++b) {
    for (int64_t h = 0; h < step.kv_heads; ++h) {
      double* out = present.data() + (b * step.kv_heads + h) * step.present * step.head;
      const double* past_rows = old.data() + (b * step.kv_heads + h) * step.past * step.head;
      std::copy(past_rows, past_rows + step.past_lengths[b] * step.head, out);
      for (int64_t s = 0; s < step.seq; ++s) {
        const double* row = fresh.data() + ((b * step.seq + s) * step.kv_heads + h) * step.head;
        std::copy(row, row + step.head, out + (step.past_lengths[b] + s) * step.head);
      }
    }
  }
  return present;
}

// Softmax of `scores` in place (smooth: with an extra logit 0 in the denominator).
void Softmax(std::vector<double>& scores, bool smooth) {
  double max = *std::max_element(scores.begin(), scores.end());
  if (smooth) max = std::max(max, 0.0);
  double sum = smooth ? std::exp(-max) : 0.0;
  for (double& x : scores) sum += (x = std::exp(x - max));
  for (double& x : scores) x /= sum;
}

// Output [B, S, Hq * D] from the present caches.
std::vector<double> Attend(const ops::GqaAttrs& attrs, GqaStep& step, const std::vector<double>& keys,
                           const std::vector<double>& values) {
  const double alpha = attrs.scale != 0 ? attrs.scale : 1.0 / std::sqrt(static_cast<double>(step.head));
  const int64_t group = step.heads / step.kv_heads;
  std::vector<double> out(static_cast<size_t>(step.batch * step.seq * step.heads * step.head), 0.0);
  for (int64_t b = 0; b < step.batch; ++b) {
    for (int64_t h = 0; h < step.heads; ++h) {
      const int64_t cache = (b * step.kv_heads + h / group) * step.present * step.head;
      for (int64_t s = 0; s < step.seq; ++s) {
        const int64_t causal = step.past_lengths[b] + s + 1, end = std::min(causal, step.totals[b]);
        const int64_t window = attrs.local_window_size;
        const int64_t start = window > 0 && causal > window ? causal - window : 0;  // window keys up to p
        if (start >= end) continue;
        std::vector<double> p(static_cast<size_t>(end - start));
        for (int64_t j = start; j < end; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < step.head; ++d) dot += step.Q(b, s, h, d) * keys[cache + j * step.head + d];
          dot *= alpha;
          p[j - start] = attrs.softcap > 0 ? attrs.softcap * std::tanh(dot / attrs.softcap) : dot;
        }
        Softmax(p, attrs.smooth_softmax);
        double* y = out.data() + ((b * step.seq + s) * step.heads + h) * step.head;
        for (int64_t j = start; j < end; ++j) {
          for (int64_t d = 0; d < step.head; ++d) y[d] += p[j - start] * values[cache + j * step.head + d];
        }
      }
    }
  }
  return out;
}

absl::Status WriteOutput(KernelContext& ctx, size_t i, ir::DType dtype, std::vector<int64_t> shape,
                         const std::vector<double>& values) {
  if (ctx.output(i) == nullptr) return absl::OkStatus();
  absl::StatusOr<ir::Tensor> t = ir::Tensor::Create(dtype, std::move(shape));
  if (!t.ok()) return t.status();
  if (absl::Status written = WriteDoubles(values, *t); !written.ok()) return written;
  return SetCreatedOutput(ctx, i, *std::move(t));
}

absl::Status GroupQueryAttention(KernelContext& ctx) {
  absl::StatusOr<ops::GqaAttrs> attrs = ops::ParseGqaAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<GqaStep> step = ReadStep(ctx, *attrs);
  if (!step.ok()) return step.status();
  const ir::DType dtype = ctx.input(ops::kGqaQuery)->dtype();
  if (attrs->do_rotary) {
    if (absl::Status rotated = ApplyRotary(ctx, *attrs, *step); !rotated.ok()) return rotated;
    RoundLike(dtype, step->q), RoundLike(dtype, step->k);
  }
  absl::StatusOr<std::vector<double>> keys = PresentCache(ctx.input(ops::kGqaPastKey), step->k, *step);
  absl::StatusOr<std::vector<double>> values = PresentCache(ctx.input(ops::kGqaPastValue), step->v, *step);
  if (!keys.ok() || !values.ok()) return keys.ok() ? values.status() : keys.status();
  const std::vector<double> out = Attend(*attrs, *step, *keys, *values);
  const std::vector<int64_t> cache_shape = {step->batch, step->kv_heads, step->present, step->head};
  if (absl::Status s = WriteOutput(ctx, 0, dtype, {step->batch, step->seq, step->heads * step->head}, out); !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteOutput(ctx, 1, dtype, cache_shape, *keys); !s.ok()) return s;
  return WriteOutput(ctx, 2, dtype, cache_shape, *values);
}

}  // namespace

std::vector<KernelDef> GroupQueryAttentionKernels() {
  return {{"com.microsoft.GroupQueryAttention", GroupQueryAttention}};
}

}  // namespace kernels::cpu
