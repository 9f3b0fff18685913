// Type and shape inference of the canonical Resize op (X, roi?, scales?, sizes?), part of the
// reduce_resize op family (ops/reduce_resize.cc registers it).
#ifndef ONNXRUN_OPS_REDUCE_RESIZE_RESIZE_H_
#define ONNXRUN_OPS_REDUCE_RESIZE_RESIZE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "ops/op_def.h"

namespace ops {

// Output dims from constant sizes, or floor(in * scale) from constant scales; unknown dims of the
// input's rank otherwise. Errors on bad attributes, wrong-length or non-positive scales/sizes.
absl::StatusOr<std::vector<ir::TensorType>> InferResize(const InferContext& ctx);

}  // namespace ops

#endif  // ONNXRUN_OPS_REDUCE_RESIZE_RESIZE_H_
