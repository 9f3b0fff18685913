// Own CUDA kernels that write indicator tensors: OneHot (`on` where an index names the position
// along the new axis, else `off`) and EyeLike (ones on one diagonal). Elements are moved as 1, 2, 4
// or 8 raw bytes, so every dtype of those sizes is covered. Semantics follow the host kernels in
// kernels/cpu/tensor_gen.cc. Plain C++ interface (no absl) so nvcc compiles it.
#ifndef ONNXRUN_KERNELS_CUDA_INDICATOR_H_
#define ONNXRUN_KERNELS_CUDA_INDICATOR_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kernels::cuda {

enum class OneHotIndexType { kInt32, kInt64, kFloat32, kFloat64 };

// out viewed as [outer, depth, inner] with indices as [outer, inner]: out[o, k, i] = values[1] (on)
// where index(o, i), read as a double, lies in [-depth, depth) and truncates to k (k - depth when
// negative), else values[0] (off). `values` is on the device (2 elements of `element_bytes`).
cudaError_t OneHot(OneHotIndexType type, const void* indices, int64_t outer, int64_t depth, int64_t inner,
                   const void* values, int element_bytes, void* out, cudaStream_t stream);

// out [rows, cols]: `one_bits` (the dtype's 1 as raw bits) where col - row == k, else zero bits.
cudaError_t EyeLike(int64_t rows, int64_t cols, int64_t k, uint64_t one_bits, int element_bytes, void* out,
                    cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_INDICATOR_H_
