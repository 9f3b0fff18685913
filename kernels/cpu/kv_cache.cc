// The CPU reference kernel of TensorScatter (opset 24; ops/attention.h): present_cache = past_cache
// with `update` written along `axis` from write_indices[b] on for each batch b (modulo the cache
// length in circular mode; linear writes must fit).
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/kernel.h"
#include "ops/attention.h"

namespace kernels::cpu {
namespace {

absl::Status TensorScatter(KernelContext& ctx) {
  absl::StatusOr<ops::TensorScatterAttrs> attrs = ops::ParseTensorScatterAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const ir::Tensor *past = ctx.input(0), *update = ctx.input(1), *indices = ctx.input(2);
  ir::Tensor* present = ctx.output(0);
  if (past == nullptr || update == nullptr || present == nullptr || present->shape() != past->shape() ||
      update->dtype() != past->dtype() || update->rank() != past->rank() || past->rank() < 2) {
    return absl::InvalidArgumentError("TensorScatter: past_cache and update must have one dtype and rank >= 2");
  }
  const int64_t rank = past->rank();
  const int64_t axis = attrs->axis < 0 ? attrs->axis + rank : attrs->axis;
  if (axis <= 0 || axis >= rank) return absl::InvalidArgumentError("TensorScatter: axis must be in [1, rank)");
  for (int64_t i = 0; i < rank; ++i) {
    if (i == axis ? update->shape()[i] > past->shape()[i] : update->shape()[i] != past->shape()[i]) {
      return absl::InvalidArgumentError(absl::StrCat("TensorScatter: update ", ir::ShapeToString(update->shape()),
                                                     " does not fit past_cache ", ir::ShapeToString(past->shape())));
    }
  }
  const int64_t batch = past->shape()[0];
  if (indices != nullptr && indices->num_elements() != batch) {
    return absl::InvalidArgumentError("TensorScatter: write_indices must hold one index per batch");
  }
  std::memcpy(present->raw_data(), past->raw_data(), past->byte_size());
  int64_t outer = 1, inner = ir::DTypeSize(past->dtype());
  for (int64_t i = 1; i < axis; ++i) outer *= past->shape()[i];
  for (int64_t i = axis + 1; i < rank; ++i) inner *= past->shape()[i];
  const int64_t cache_len = past->shape()[axis], len = update->shape()[axis];
  auto* dst = static_cast<uint8_t*>(present->raw_data());
  const auto* src = static_cast<const uint8_t*>(update->raw_data());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = indices != nullptr ? indices->GetAsInt64(b) : 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t s = 0; s < len; ++s) {
        int64_t at = start + s;
        if (attrs->circular) at = ((at % cache_len) + cache_len) % cache_len;
        if (at < 0 || at >= cache_len) {
          return absl::InvalidArgumentError(absl::StrCat("TensorScatter: write index ", at, " of batch ", b,
                                                         " is outside the cache length ", cache_len));
        }
        std::memcpy(dst + ((b * outer + o) * cache_len + at) * inner, src + ((b * outer + o) * len + s) * inner, inner);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> KvCacheKernels() { return {{"TensorScatter", TensorScatter}}; }

}  // namespace kernels::cpu
