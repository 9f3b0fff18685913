// DeformConv (opset 19; opset 22 adds bfloat16): the attributes it adds to Conv's window and the
// bound on its work, shared by its inference (ops/deform_conv.cc) and its CPU kernel
// (kernels/cpu/deform_conv.cc).
//
// Inputs X [N, C, D1..Dr], W [oC, C / group, k1..kr], offset [N, offset_group * K * r, O1..Or],
// B? [oC], mask? [N, offset_group * K, O1..Or], with K = k1 * ... * kr and O1..Or Conv's output
// dims for the window attributes (kernel_shape, strides, dilations, pads; DeformConv has no auto_pad
// and no ceil_mode). Tap k of output position o samples channel c of X at
//   p_d = o_d * stride_d - pad_begin_d + k_d * dilation_d + offset[n, (g * K + k) * r + d, o]
// (g = c / (C / offset_group)) N-linearly, 0 outside X, scaled by mask[n, g * K + k, o] (1 when
// absent); Y is the grouped convolution of those samples with W, plus B.
#ifndef ONNXRUN_OPS_DEFORM_CONV_H_
#define ONNXRUN_OPS_DEFORM_CONV_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/attribute.h"

namespace ops {

// Bound on one node's work: samples (N * C * K * O, each reading 2^r pixels) times 2^r, plus the
// convolution's multiply-adds (N * oC * (C / group) * K * O). Like RoiAlign's sample bound.
inline constexpr int64_t kMaxDeformConvWork = int64_t{1} << 34;

// Spatial dims past this are refused (each sample reads 2^r pixels).
inline constexpr int64_t kMaxDeformConvSpatialDims = 8;

struct DeformConvGroups {
  int64_t group = 1;
  int64_t offset_group = 1;
};

// group and offset_group (each >= 1); an error for either out of range or for an auto_pad or
// ceil_mode attribute (Conv's, which DeformConv does not have).
absl::StatusOr<DeformConvGroups> ParseDeformConvGroups(const ir::Attributes& attrs);

// An error when the work (above) for these extents passes kMaxDeformConvWork (computed in double:
// no product of extents can overflow).
absl::Status CheckDeformConvWork(int64_t batch, int64_t channels, int64_t out_channels, int64_t group,
                                 int64_t kernel_size, absl::Span<const int64_t> out_spatial);

}  // namespace ops

#endif  // ONNXRUN_OPS_DEFORM_CONV_H_
