// Own CUDA kernel: N-d strided copy (rank <= 8) of elements of 1, 2, 4 or 8 bytes. One kernel
// serves transposes (NCHW <-> NHWC, Transpose), Concat (each input into its slice of the output),
// Slice, and the interior of Pad. Strides are in elements; `dims` is the shape being copied.
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_STRIDED_COPY_H_
#define ONNXRUN_KERNELS_CUDA_STRIDED_COPY_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kernels::cuda {

inline constexpr int kMaxRank = 8;

struct CopyShape {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t src_strides[kMaxRank] = {};
  int64_t dst_strides[kMaxRank] = {};
};

// Copies every index of `shape` from src to dst. Returns cudaErrorInvalidValue for a bad rank or
// element size.
cudaError_t StridedCopy(const void* src, void* dst, const CopyShape& shape, int element_bytes, cudaStream_t stream);

// Fills `count` elements with the bit pattern of one element (`value_bits`).
cudaError_t Fill(void* dst, int64_t count, int element_bytes, uint64_t value_bits, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_STRIDED_COPY_H_
