// Own CUDA kernel: per-sample weights of a 1x1 convolution whose input is scaled per sample and
// channel (the squeeze-excite gate of EfficientNet / MobileNetV3 blocks: conv(x * s)). Since
// conv(x * s)[n] = x[n] * (W * s[n])^T, the runtime folds the gate into a copy of the weights per
// sample and runs one batched matmul instead of a full pass over x for the product
// (runtime/cuda_steps_scaled_conv.cc). Plain C++ interface (no absl) so nvcc compiles it.
//
// Usage:
//   ScaledWeightsParams p{.samples = n, .cin = 144, .cout = 24, .type = FloatType::kFloat16};
//   ScaledWeights(p, w /*[cout, cin]*/, s /*[n, cin]*/, out /*[n, cin, cout]*/, stream);
#ifndef ONNXRUN_KERNELS_CUDA_SCALED_WEIGHTS_H_
#define ONNXRUN_KERNELS_CUDA_SCALED_WEIGHTS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"  // FloatType

namespace kernels::cuda {

struct ScaledWeightsParams {
  int64_t samples = 0;                   // n
  int64_t cin = 0, cout = 0;             // the conv's input and output channels
  FloatType type = FloatType::kFloat16;  // of w, s and out
};

// out[n, ci, co] = w[co, ci] * s[n, ci] (rounded once from float) on `stream`: w is ONNX's
// [Cout, Cin, 1, 1] weights as given, s the gate [N, Cin, 1, 1], out row-major [N, Cin, Cout] (each
// sample's weights as the [K, N] operand of a row-major matmul). Device memory, out not
// overlapping the others. Returns cudaErrorInvalidValue for empty or negative sizes, else the
// launch's error.
cudaError_t ScaledWeights(const ScaledWeightsParams& p, const void* w, const void* s, void* out, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_SCALED_WEIGHTS_H_
