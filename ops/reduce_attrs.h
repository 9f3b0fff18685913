// Attributes of the reduce_resize family's index reductions ArgMax and ArgMin, parsed once for
// inference (ops/reduce_resize.cc) and the CPU kernel (kernels/cpu/reduce_resize.cc).
#ifndef ONNXRUN_OPS_REDUCE_ATTRS_H_
#define ONNXRUN_OPS_REDUCE_ATTRS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace ops {

struct ArgReduceAttrs {
  int64_t axis = 0;  // normalised to [0, rank)
  bool keepdims = true;
  bool select_last_index = false;  // the last of equal extremes instead of the first
};

// `axis` (default 0) normalised against `rank`; keepdims and select_last_index must be 0 or 1.
absl::StatusOr<ArgReduceAttrs> ParseArgReduceAttrs(const ir::Node& node, int64_t rank);

}  // namespace ops

#endif  // ONNXRUN_OPS_REDUCE_ATTRS_H_
