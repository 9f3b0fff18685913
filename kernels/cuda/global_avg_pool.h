// Own CUDA kernel: GlobalAveragePool over an NHWC tensor (y[n, c] = mean over h, w of x[n, h, w, c]),
// float32 / float16 / bfloat16 storage with float sums. cuDNN's legacy pooling reads EfficientNet's
// large NHWC maps at under 1 TB/s; this reads them along C in 16-byte vectors. When the batch alone
// gives too few blocks to fill the GPU, the rows are split into slices summed into float partials
// (a caller-provided scratch) and a second pass adds the slices, so the result does not depend on
// timing (no atomics). Plain C++ interface (no absl) so nvcc compiles it.
//
// Usage:
//   const int splits = GlobalAvgPoolSplits(n, hw, c);
//   // scratch: splits > 1 ? splits * n * c floats : none
//   ONNXRUN_CUDA_RETURN_IF_ERROR(GlobalAvgPoolNhwc(FloatType::kFloat16, x, y, n, hw, c, scratch, splits, stream));
#ifndef ONNXRUN_KERNELS_CUDA_GLOBAL_AVG_POOL_H_
#define ONNXRUN_KERNELS_CUDA_GLOBAL_AVG_POOL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"  // FloatType

namespace kernels::cuda {

// How many row slices GlobalAvgPoolNhwc should sum separately for these sizes (1: no scratch).
int GlobalAvgPoolSplits(int64_t n, int64_t hw, int64_t c);

// x [n, hw, c] dense, y [n, c]; `scratch` holds splits * n * c floats when splits > 1 (else unused).
// Returns cudaErrorInvalidValue for n or c < 1, hw < 1, n >= 2^16 or splits < 1, else the launch's error.
cudaError_t GlobalAvgPoolNhwc(FloatType type, const void* x, void* y, int64_t n, int64_t hw, int64_t c, float* scratch,
                              int splits, cudaStream_t stream);

// y[i] = sums[i] / hw for i < count: the pool's mean from channel sums its producer computed while
// writing x (DepthwiseConvNhwc's channel_sums), so x is not read again. cudaErrorInvalidValue for
// count or hw < 1.
cudaError_t GlobalAvgPoolFromSums(FloatType type, const float* sums, void* y, int64_t count, int64_t hw,
                                  cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_GLOBAL_AVG_POOL_H_
