// Own CUDA kernel: MaxPool (without Indices) and AveragePool over 1 to 3 spatial dims, in the forms
// cuDNN's pooling descriptor cannot state — ceil_mode, asymmetric pads (auto_pad SAME_*, what
// tf2onnx writes), dilations — and for the ranks the legacy path does not take. Channels first
// ([n, c, spatial...]) or, for the NHWC activations of fused convs, channels last ([n, spatial...,
// c]). float32 / float16 / bfloat16 storage; sums in float. The semantics are the host kernels'
// (kernels/cpu/nn_pool.cc): a window's taps are the in-image positions start + t * dilation;
// max keeps the first tap unless a later one is greater (so a NaN first tap stays, later NaNs are
// ignored) and writes the lowest float for a window with no tap; average divides by the taps in
// the image (exclude pad) or in the padded extent (include pad), 0 for none. Plain C++ interface
// (no absl) so nvcc compiles it.
//
// Usage:
//   PoolParams p;  // kind, spatial, n, c, and per spatial dim image / grid / kernel / stride / ...
//   ONNXRUN_CUDA_RETURN_IF_ERROR(Pool(FloatType::kFloat16, p, x, y, stream));
#ifndef ONNXRUN_KERNELS_CUDA_POOL_H_
#define ONNXRUN_KERNELS_CUDA_POOL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"  // FloatType

namespace kernels::cuda {

enum class PoolKind { kMax, kAverageIncludePad, kAverageExcludePad };

inline constexpr int kMaxPoolSpatial = 3;

struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  int spatial = 2;  // 1 .. kMaxPoolSpatial
  int64_t n = 0, c = 0;
  bool channels_last = false;
  // Per spatial dim (the first `spatial` entries): input extent, output extent, window.
  int64_t image[kMaxPoolSpatial] = {1, 1, 1}, grid[kMaxPoolSpatial] = {1, 1, 1};
  int64_t kernel[kMaxPoolSpatial] = {1, 1, 1}, stride[kMaxPoolSpatial] = {1, 1, 1};
  int64_t dilation[kMaxPoolSpatial] = {1, 1, 1};
  int64_t pad_begin[kMaxPoolSpatial] = {0, 0, 0}, pad_end[kMaxPoolSpatial] = {0, 0, 0};
};

// y = pool(x) as the header comment says. cudaErrorInvalidValue for spatial outside [1, 3],
// negative extents, or kernel / stride / dilation below 1; nothing to do for no outputs.
cudaError_t Pool(FloatType type, const PoolParams& p, const void* x, void* y, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_POOL_H_
