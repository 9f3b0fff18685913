// CastPadToNhwc: the network input's first pass in one kernel — a float32 or float16 NCHW tensor
// converted to float32 or float16, stored channels-last (NHWC) with the channels zero-padded from c
// to c_out (an input Cast followed by the channel Pad the partitioner adds before the stem conv).
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_CAST_PAD_H_
#define ONNXRUN_KERNELS_CUDA_CAST_PAD_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"

namespace kernels::cuda {

// x: [n, c, hw] of `in`; y: [n, hw, c_out] of `out` (c_out >= c; channels c..c_out-1 are 0).
cudaError_t CastPadToNhwc(FloatType in, FloatType out, const void* x, void* y, int64_t n, int64_t c, int64_t hw,
                          int64_t c_out, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_CAST_PAD_H_
