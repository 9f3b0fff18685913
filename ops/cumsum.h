// CumSum (opsets 11 and 14) and CumProd (opset 26, the same with products): its attributes and
// axis, parsed once for inference, the CPU kernel and the CUDA runner (CumSum only). y[..., i, ...] = sum of x along
// `axis` up to i (excluding x[i] when `exclusive`, from the end when `reverse`).
#ifndef ONNXRUN_OPS_CUMSUM_H_
#define ONNXRUN_OPS_CUMSUM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "ops/op_def.h"

namespace ops {

struct CumSumAttrs {
  bool exclusive = false;
  bool reverse = false;
};

// The attributes; an error unless each is 0 or 1.
absl::StatusOr<CumSumAttrs> ParseCumSumAttrs(const ir::Node& node);

// The axis input (an int32/int64 scalar or one-element tensor) normalised against `rank`.
absl::StatusOr<int64_t> CumSumAxis(const ir::Tensor& axis, int64_t rank);

// The scan as three extents: `outer` independent blocks of `length` steps along the axis, each step
// `inner` elements apart (row-major dims split at the axis).
struct ScanExtents {
  int64_t outer = 1, length = 1, inner = 1;
};
ScanExtents ScanExtentsOf(const std::vector<int64_t>& dims, int64_t axis);

std::vector<OpDef> CumSumOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_CUMSUM_H_
