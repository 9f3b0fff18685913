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

// The output length of an axis of `in` elements resized by `scale`: floor(in * scale), the product
// taken in float32 as ONNX Runtime and PyTorch take it (torch's exporter writes size 13 of 9 as the
// float32 scale 1.4444444, whose product with 9 is 12.99999976 in double but 13 in float32). A
// double, for the caller's range check (inf when the float32 product overflows).
double ResizedLength(int64_t in, double scale);

// The axes scales/sizes/roi speak of (opset 18's `axes`): normalised to [0, rank), each once;
// every axis in order when the attribute is absent.
absl::StatusOr<std::vector<int64_t>> ResizeAxes(const ir::Attributes& attrs, int64_t rank);

// keep_aspect_ratio_policy (opset 18) with sizes: "stretch" (each listed axis gets its size),
// "not_larger" / "not_smaller" (one scale for every listed axis: the smallest / largest of
// size / in; each length becomes round-half-up(scale * in)).
struct AspectFit {
  std::vector<double> scales;    // per listed axis
  std::vector<int64_t> lengths;  // per listed axis
};
absl::StatusOr<AspectFit> FitSizes(const ir::Attributes& attrs, const std::vector<int64_t>& in_lengths,
                                   const std::vector<int64_t>& sizes);

}  // namespace ops

#endif  // ONNXRUN_OPS_REDUCE_RESIZE_RESIZE_H_
