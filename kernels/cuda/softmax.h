// Own CUDA kernel: Softmax and LogSoftmax along one axis of a dense row-major float32 or float16
// tensor viewed as [outer, n, inner] (opset < 13 flattens to 2-D: inner = 1). Computed in double
// like the host reference: max, then the sum of exp(x - max), then the outputs.
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_SOFTMAX_H_
#define ONNXRUN_KERNELS_CUDA_SOFTMAX_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"

namespace kernels::cuda {

// out[o, k, i] = exp(x[o, k, i] - max_k) / sum_k exp(...)   (log: x - max - log(sum)).
// NaN inputs make their row NaN. Returns cudaErrorInvalidValue for negative sizes.
cudaError_t Softmax(FloatType type, bool log, const void* in, void* out, int64_t outer, int64_t n, int64_t inner,
                    cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_SOFTMAX_H_
