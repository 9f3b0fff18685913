// Own CUDA kernel: CumSum or CumProd along one axis of a dense row-major tensor viewed as [outer, length,
// inner] (float32, float16 accumulated in float, float64, int32 and int64 wrapping like the host).
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_CUMSUM_H_
#define ONNXRUN_KERNELS_CUDA_CUMSUM_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kernels::cuda {

enum class ScanType { kFloat32, kFloat16, kFloat64, kInt32, kInt64 };

// out[o, k, i] = sum (product when `product`) of in[o, j, i] over j <= k (j < k when exclusive;
// j >= k / j > k when reverse). One thread per (o, i) line. Returns cudaErrorInvalidValue for
// negative sizes.
cudaError_t CumSum(ScanType type, const void* in, void* out, int64_t outer, int64_t length, int64_t inner,
                   bool exclusive, bool reverse, bool product, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_CUMSUM_H_
