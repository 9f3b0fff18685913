// Own CUDA kernel: the squeeze-excite MLP on pooled values, one block per sample —
//   y[n, :] = gate(W2 * act(W1 * x[n, :] + b1) + b2)
// with x, y [N, C] (a [N, C, 1, 1] tensor in either layout), W1 [R, C], W2 [C, R'] (only its first
// R columns are read: channel padding may have widened it with zeros), act Relu or SiLU, gate
// Sigmoid or HardSigmoid; everything in between stays in float in shared memory. It replaces a
// cuDNN graph, a Pad, a legacy conv and a Sigmoid per block (partitioner/squeeze_excite.h).
// With channel_sums set, x is not read: x[n, c] = channel_sums[n * C + c] * sums_scale (the
// depthwise conv's float channel sums times 1 / HW: the global average pool joined to the MLP).
// With scale_map set, the gate is not written: y = scale_map * gate over an NHWC map [N, HW, C] (the
// Mul the gate feeds joined to the MLP: one kernel fewer per block at small batches; each block
// multiplies its channels over a chunk of the pixels, recomputing the hidden units for them).
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
//
// Usage:
//   SqueezeExciteParams p;
//   p.batch = n; p.channels = c; p.reduced = r; p.w2_row = r; p.type = FloatType::kFloat16;
//   p.w1 = w1; p.b1 = b1; p.w2 = w2; p.b2 = b2;
//   ONNXRUN_CUDA_RETURN_IF_ERROR(SqueezeExcite(p, x, y, stream));
#ifndef ONNXRUN_KERNELS_CUDA_SQUEEZE_EXCITE_H_
#define ONNXRUN_KERNELS_CUDA_SQUEEZE_EXCITE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"  // FloatType

namespace kernels::cuda {

struct SqueezeExciteParams {
  enum Activation { kRelu, kSilu };
  enum Gate { kSigmoid, kHardSigmoid };
  int64_t batch = 0, channels = 0, reduced = 0, w2_row = 0;  // N, C, R, R' (>= R)
  FloatType type = FloatType::kFloat16;                      // of x, y, the weights and biases
  const void* w1 = nullptr;                                  // [R, C]
  const void* b1 = nullptr;                                  // [R] or null
  const void* w2 = nullptr;                                  // [C, R']
  const void* b2 = nullptr;                                  // [C] or null
  Activation activation = kSilu;
  Gate gate = kSigmoid;
  float alpha = 0.2f, beta = 0.5f;      // HardSigmoid
  const float* channel_sums = nullptr;  // [N, C] in place of x, or null
  float sums_scale = 1.f;               // what channel_sums are multiplied by
  const void* scale_map = nullptr;      // [N, map_pixels, C] to multiply by the gate, or null
  int64_t map_pixels = 0;               // H * W of scale_map
};

// Shared memory needs (C + R) floats, with a map to scale 2C + R: SqueezeExciteFits says whether
// they fit the kernel's 48 KiB (a block's channel counts as such). SqueezeExcite runs `with_map`
// when params.scale_map is set.
size_t SqueezeExciteSharedBytes(const SqueezeExciteParams& params, bool with_map);
bool SqueezeExciteFits(const SqueezeExciteParams& params, bool with_map);

// cudaErrorInvalidValue when !SqueezeExciteFits, for R' < R, empty weights, or a scale_map with
// map_pixels < 1. x may be null when params.channel_sums is set. y is [N, C] (the gate), or with
// scale_map [N, map_pixels, C] (the product; it must not overlap scale_map).
cudaError_t SqueezeExcite(const SqueezeExciteParams& params, const void* x, void* y, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_SQUEEZE_EXCITE_H_
