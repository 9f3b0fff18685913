// The float32 CPU depthwise conv: a 2-D Conv whose groups each read one input channel (group ==
// input channels), any kernel size, stride, dilation and padding, on ParallelFor's threads.
#ifndef ONNXRUN_KERNELS_CPU_DEPTHWISE_CONV_H_
#define ONNXRUN_KERNELS_CPU_DEPTHWISE_CONV_H_

#include <cstdint>

#include "kernels/cpu/nn_util.h"

namespace kernels::cpu::nn {

// x [batch, channels, image...], w [channels * multiplier, 1, kernel...], bias (may be null)
// [channels * multiplier], y [batch, channels * multiplier, grid...]: output channel oc reads
// input channel oc / multiplier.
void DepthwiseConv2dFloat(const float* x, const float* w, const float* bias, int64_t batch, int64_t channels,
                          int64_t multiplier, const WindowGeometry& geo, float* y);

}  // namespace kernels::cpu::nn

#endif  // ONNXRUN_KERNELS_CPU_DEPTHWISE_CONV_H_
