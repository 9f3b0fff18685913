// Owns the construction of broadcast plans for the elementwise CPU kernels (see the header).
#include "kernels/cpu/elementwise_broadcast.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/tensor.h"

namespace kernels::cpu::elementwise {
namespace {

// Element strides of input `in` aligned to the output dims: 0 where the input is broadcast.
absl::StatusOr<std::vector<int64_t>> AlignedStrides(absl::Span<const int64_t> out_shape, absl::Span<const int64_t> in,
                                                    size_t k) {
  const size_t rank = out_shape.size();
  if (in.size() > rank) {
    return absl::InvalidArgumentError(absl::StrCat("input ", k, " shape ", ir::ShapeToString(in),
                                                   " has a higher rank than the output shape ",
                                                   ir::ShapeToString(out_shape)));
  }
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t j = in.size(); j-- > 0;) {
    const size_t d = j + rank - in.size();
    if (in[j] == out_shape[d]) {
      strides[d] = in[j] == 1 ? 0 : stride;
    } else if (in[j] != 1) {
      return absl::InvalidArgumentError(absl::StrCat("input ", k, " shape ", ir::ShapeToString(in),
                                                     " does not broadcast to output shape ",
                                                     ir::ShapeToString(out_shape)));
    }
    stride *= in[j];
  }
  return strides;
}

}  // namespace

absl::StatusOr<BroadcastPlan> MakeBroadcastPlan(absl::Span<const int64_t> out_shape,
                                                const std::vector<absl::Span<const int64_t>>& inputs) {
  const size_t n = inputs.size();
  std::vector<std::vector<int64_t>> aligned(n);
  for (size_t k = 0; k < n; ++k) {
    absl::StatusOr<std::vector<int64_t>> s = AlignedStrides(out_shape, inputs[k], k);
    if (!s.ok()) return s.status();
    aligned[k] = *std::move(s);
  }
  BroadcastPlan plan;
  plan.strides.resize(n);
  plan.num_elements = 1;
  for (int64_t d : out_shape) plan.num_elements *= d;
  // Walk from the innermost dim outwards, dropping size-1 dims and merging a dim into the one
  // inside it when every input is laid out contiguously across the pair.
  std::vector<int64_t> rev_dims;
  std::vector<std::vector<int64_t>> rev_strides(n);
  for (size_t d = out_shape.size(); d-- > 0;) {
    if (out_shape[d] == 1) continue;
    bool merge = !rev_dims.empty();
    for (size_t k = 0; merge && k < n; ++k) {
      merge = aligned[k][d] == rev_strides[k].back() * rev_dims.back();
    }
    if (merge) {
      rev_dims.back() *= out_shape[d];
      continue;
    }
    rev_dims.push_back(out_shape[d]);
    for (size_t k = 0; k < n; ++k) rev_strides[k].push_back(aligned[k][d]);
  }
  if (rev_dims.empty()) {
    rev_dims.push_back(1);
    for (size_t k = 0; k < n; ++k) rev_strides[k].push_back(0);
  }
  plan.dims.assign(rev_dims.rbegin(), rev_dims.rend());
  for (size_t k = 0; k < n; ++k) plan.strides[k].assign(rev_strides[k].rbegin(), rev_strides[k].rend());
  return plan;
}

}  // namespace kernels::cpu::elementwise
