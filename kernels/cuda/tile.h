// Own CUDA kernel: Tile (the input repeated along every axis) for elements of 1, 2, 4 or 8 bytes,
// rank <= kMaxRank; the input is read through strides, so any stored layout works.
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_TILE_H_
#define ONNXRUN_KERNELS_CUDA_TILE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/strided_copy.h"

namespace kernels::cuda {

struct TileShape {
  int rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t in_dims[kMaxRank] = {};     // each > 0 where the output dim is
  int64_t in_strides[kMaxRank] = {};  // elements
};

// out[i_0, ..., i_{r-1}] = in[i_0 % in_dims[0], ...]; out is dense row-major over out_dims.
// Returns cudaErrorInvalidValue for a bad rank, dim or element size.
cudaError_t Tile(const void* in, void* out, const TileShape& shape, int element_bytes, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_TILE_H_
