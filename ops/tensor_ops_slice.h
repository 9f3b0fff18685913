// Slice and Pad parameter normalization shared by the tensor-family inference functions and the
// CPU kernels (kernels/cpu/tensor_ops_index.cc).
#ifndef ONNXRUN_OPS_TENSOR_OPS_SLICE_H_
#define ONNXRUN_OPS_TENSOR_OPS_SLICE_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace ops {

// One sliced axis as given (before clamping against the dim).
struct SliceAxis {
  int64_t axis = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t step = 1;
};

// The clamped first index and element count of a slice along a dim of size dim.
struct SliceRange {
  int64_t start = 0;
  int64_t count = 0;
};

// Validates and normalizes Slice's starts/ends/axes/steps (axes, steps may be null: defaults).
inline absl::StatusOr<std::vector<SliceAxis>> PlanSlice(int64_t rank, const std::vector<int64_t>& starts,
                                                        const std::vector<int64_t>& ends,
                                                        const std::vector<int64_t>* axes,
                                                        const std::vector<int64_t>* steps) {
  const size_t n = starts.size();
  if (ends.size() != n || (axes && axes->size() != n) || (steps && steps->size() != n)) {
    return absl::InvalidArgumentError("Slice starts, ends, axes and steps differ in length");
  }
  std::vector<SliceAxis> plan(n);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    int64_t a = axes ? (*axes)[i] : static_cast<int64_t>(i);
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Slice axis ", a, " out of range for rank ", rank));
    }
    if (a < 0) a += rank;
    if (seen[a]) return absl::InvalidArgumentError(absl::StrCat("Slice axis ", a, " is repeated"));
    seen[a] = true;
    const int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0) return absl::InvalidArgumentError("Slice step must not be 0");
    plan[i] = SliceAxis{a, starts[i], ends[i], step};
  }
  return plan;
}

// Clamps a slice against a dim of known size as ONNX does (negative indices count from the end).
inline SliceRange SliceAxisSize(const SliceAxis& s, int64_t dim) {
  if (dim <= 0) return {};
  int64_t start = s.start < 0 ? s.start + dim : s.start;
  int64_t end = s.end < 0 ? s.end + dim : s.end;
  if (s.step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? (end - start - 1) / s.step + 1 : 0};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  if (start <= end) return {start, 0};
  if (s.step == std::numeric_limits<int64_t>::min()) return {start, 1};
  return {start, (start - end - 1) / -s.step + 1};
}

// True when the slice keeps a dim of any size whole (so a symbolic dim passes through).
inline bool IsFullSlice(const SliceAxis& s) { return s.step == 1 && s.start == 0 && s.end >= (int64_t{1} << 62); }

// Pad's pads input expanded to 2 * rank entries (begins then ends); axes may be null.
inline absl::StatusOr<std::vector<int64_t>> FullPads(int64_t rank, const std::vector<int64_t>& pads,
                                                     const std::vector<int64_t>* axes) {
  if (axes == nullptr) {
    if (static_cast<int64_t>(pads.size()) != 2 * rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Pad has ", pads.size(), " pads for rank ", rank, " (need ", 2 * rank, ")"));
    }
    return pads;
  }
  const int64_t n = static_cast<int64_t>(axes->size());
  if (static_cast<int64_t>(pads.size()) != 2 * n) {
    return absl::InvalidArgumentError(absl::StrCat("Pad has ", pads.size(), " pads for ", n, " axes"));
  }
  std::vector<int64_t> full(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = (*axes)[i];
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Pad axis ", a, " out of range for rank ", rank));
    }
    if (a < 0) a += rank;
    if (seen[a]) return absl::InvalidArgumentError(absl::StrCat("Pad axis ", a, " is repeated"));
    seen[a] = true;
    full[a] = pads[i];
    full[a + rank] = pads[i + n];
  }
  return full;
}

}  // namespace ops

#endif  // ONNXRUN_OPS_TENSOR_OPS_SLICE_H_
