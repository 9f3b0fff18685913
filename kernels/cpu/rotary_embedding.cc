// The CPU reference kernel of RotaryEmbedding (semantics in ops/attention.h): per batch, position
// and head, the first rotary_dim elements rotated pairwise by that position's cos/sin cache row
// (the row of position_ids[b, s] when given, else row [b, s] of a [B, seq, rotary_dim / 2] cache).
#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/float_values.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/rotary.h"
#include "ops/attention.h"

namespace kernels::cpu {
namespace {

absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat("RotaryEmbedding: ", message));
}

// The cache row for batch b, position s; -1 (with an error set) when out of range.
int64_t CacheRow(const ir::Tensor& cache, const ir::Tensor* positions, int64_t b, int64_t s, int64_t seq) {
  if (positions == nullptr) return b * seq + s;
  const int64_t p = positions->GetAsInt64(b * seq + s);
  return p >= 0 && p < cache.shape()[0] ? p : -1;
}

absl::Status RotaryEmbedding(KernelContext& ctx) {
  absl::StatusOr<ops::RotaryAttrs> attrs = ops::ParseRotaryAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const ir::Tensor *x = ctx.input(0), *cos = ctx.input(1), *sin = ctx.input(2), *positions = ctx.input(3);
  ir::Tensor* y = ctx.output(0);
  if (x == nullptr || cos == nullptr || sin == nullptr || y == nullptr || y->shape() != x->shape()) {
    return Invalid("X, cos_cache and sin_cache are required and Y has X's shape");
  }
  const bool four_d = x->rank() == 4;
  if (!four_d && (x->rank() != 3 || attrs->num_heads == 0 || x->shape()[2] % attrs->num_heads != 0)) {
    return Invalid("X must be [B, heads, seq, head], or [B, seq, hidden] with num_heads dividing hidden");
  }
  const int64_t batch = x->shape()[0], heads = four_d ? x->shape()[1] : attrs->num_heads;
  const int64_t seq = four_d ? x->shape()[2] : x->shape()[1];
  const int64_t head = four_d ? x->shape()[3] : x->shape()[2] / heads;
  const int64_t rot = attrs->rotary_dim == 0 ? head : attrs->rotary_dim, half = rot / 2;
  if (rot > head || rot % 2 != 0)
    return Invalid(absl::StrCat("rotary_embedding_dim ", rot, " must be even and <= ", head));
  if (cos->shape() != sin->shape() || cos->rank() < 2 || cos->shape().back() != half) {
    return Invalid(absl::StrCat("cos_cache and sin_cache must have one shape ending in rotary_dim / 2 = ", half));
  }
  if (positions != nullptr ? (positions->num_elements() != batch * seq || cos->rank() != 2)
                           : (cos->num_elements() != batch * seq * half)) {
    return Invalid(
        "the caches must be [max_position, rotary_dim / 2] with position_ids [B, seq], else [B, seq, rotary_dim / 2]");
  }
  absl::StatusOr<std::vector<double>> in = ReadDoubles(*x);
  absl::StatusOr<std::vector<double>> cos_values = ReadDoubles(*cos), sin_values = ReadDoubles(*sin);
  for (const auto* values : {&in, &cos_values, &sin_values}) {
    if (!values->ok()) return values->status();
  }
  std::vector<double> out = *in;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t row = CacheRow(*cos, positions, b, s, seq);
      if (row < 0) return Invalid(absl::StrCat("position id at [", b, ", ", s, "] is outside the cache"));
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t base = four_d ? ((b * heads + h) * seq + s) * head : ((b * seq + s) * heads + h) * head;
        RotateHead(out.data() + base, cos_values->data() + row * half, sin_values->data() + row * half, half,
                   attrs->interleaved);
      }
    }
  }
  return WriteDoubles(out, *y);
}

}  // namespace

std::vector<KernelDef> RotaryEmbeddingKernels() { return {{"RotaryEmbedding", RotaryEmbedding}}; }

}  // namespace kernels::cpu
