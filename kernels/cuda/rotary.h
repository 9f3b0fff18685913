// Own CUDA kernel of RotaryEmbedding (ONNX opset 23; ORT's com.microsoft form is rewritten into it
// at import): the first 2 * half values of each head rotated pairwise by its position's cos/sin
// cache row, the rest copied. Semantics follow the host kernel (kernels/cpu/rotary_embedding.cc).
// Plain C++ interface (no absl) so nvcc compiles it.
#ifndef ONNXRUN_KERNELS_CUDA_ROTARY_H_
#define ONNXRUN_KERNELS_CUDA_ROTARY_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"  // FloatType

namespace kernels::cuda {

struct RotaryShape {
  int64_t batch = 0, seq = 0, heads = 0, head = 0;
  int64_t half = 0;                    // rotated pairs per head (rotary_embedding_dim / 2)
  bool heads_first = true;             // X [B, heads, seq, head]; else [B, seq, heads * head]
  bool interleaved = false;            // pairs (2i, 2i + 1); else (i, i + half)
  const int64_t* positions = nullptr;  // [B, seq] rows of the caches (device), or null: row b * seq + s
  int64_t cache_rows = 0;              // rows of cos/sin ([cache_rows, half])
};

// y = rotary(x); x, cos, sin and y of one float type, all dense. A position id outside
// [0, cache_rows) cannot be reported without synchronising: that position's heads are zeros.
// cudaErrorInvalidValue for an inconsistent shape.
cudaError_t RotaryEmbedding(FloatType type, const void* x, const void* cos, const void* sin, void* y,
                            const RotaryShape& shape, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_ROTARY_H_
