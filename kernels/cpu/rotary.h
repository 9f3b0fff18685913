// The rotation of rotary position embeddings, shared by RotaryEmbedding (rotary_embedding.cc) and
// GroupQueryAttention's do_rotary (group_query_attention.cc).
#ifndef ONNXRUN_KERNELS_CPU_ROTARY_H_
#define ONNXRUN_KERNELS_CPU_ROTARY_H_

#include <cstdint>

namespace kernels::cpu {

// Rotates the first 2 * half values of one head `x` in place by one cache row (`cos`, `sin`, half
// values each): pairs (x[i], x[i + half]), or (x[2i], x[2i + 1]) when interleaved, become
// (x1 cos - x2 sin, x2 cos + x1 sin).
inline void RotateHead(double* x, const double* cos, const double* sin, int64_t half, bool interleaved) {
  for (int64_t i = 0; i < half; ++i) {
    double& x1 = interleaved ? x[2 * i] : x[i];
    double& x2 = interleaved ? x[2 * i + 1] : x[i + half];
    const double a = x1, b = x2;
    x1 = a * cos[i] - b * sin[i], x2 = b * cos[i] + a * sin[i];
  }
}

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_ROTARY_H_
