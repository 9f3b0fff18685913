// Own CUDA kernel: Where (cond ? x : y) with numpy broadcasting of all three operands, for elements
// of 1, 2, 4 or 8 bytes (the select moves bytes, so every dtype works); cond is bool (one byte).
// Operands are read through strides in the output's index space (0 on broadcast dims), so stored
// layouts and broadcasting need no copies. Plain C++ interface (no absl) so nvcc compiles it.
#ifndef ONNXRUN_KERNELS_CUDA_WHERE_H_
#define ONNXRUN_KERNELS_CUDA_WHERE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/strided_copy.h"

namespace kernels::cuda {

struct WhereShape {
  int rank = 0;
  int64_t dims[kMaxRank] = {};  // the output's
  int64_t cond_strides[kMaxRank] = {};
  int64_t x_strides[kMaxRank] = {};
  int64_t y_strides[kMaxRank] = {};
};

// out[i] = cond[i . cond_strides] != 0 ? x[i . x_strides] : y[i . y_strides]; out is dense
// row-major over `dims`. Returns cudaErrorInvalidValue for a bad rank or element size.
cudaError_t Where(const void* cond, const void* x, const void* y, void* out, const WhereShape& shape, int element_bytes,
                  cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_WHERE_H_
