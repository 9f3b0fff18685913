// Own CUDA kernel: Gather along one axis of a dense row-major tensor, for elements of 1, 2, 4 or 8
// bytes and int32 or int64 indices read on the device (negative indices count from the end).
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_GATHER_H_
#define ONNXRUN_KERNELS_CUDA_GATHER_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kernels::cuda {

// data is viewed as [outer, dim, inner]; out as [outer, count, inner]:
//   out[o, j, i] = data[o, k, i] with k = indices[j] (+ dim when negative).
// An index outside [-dim, dim) cannot be reported without synchronising: its slice is zero bytes.
// Returns cudaErrorInvalidValue for a bad element size.
cudaError_t Gather(const void* data, const void* indices, bool indices_int64, void* out, int64_t outer, int64_t dim,
                   int64_t inner, int64_t count, int element_bytes, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_GATHER_H_
