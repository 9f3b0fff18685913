// Own CUDA kernel: normalisation of rows of a dense float32 or float16 tensor viewed as [rows, n]
// with per-row mean and biased variance in double (two passes, like the host reference). Serves
// LayerNormalization (rows = the dims before `axis`; scale/bias per position in the row; optional
// Mean and InvStdDev outputs) and InstanceNormalization (rows = N * C; scale/bias per channel).
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_NORM_H_
#define ONNXRUN_KERNELS_CUDA_NORM_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"

namespace kernels::cuda {

struct RowNormParams {
  int64_t rows = 0;
  int64_t n = 0;  // elements per row
  double epsilon = 1e-5;
  // Either may be null (scale 1, bias 0). Per position in the row (n elements), or with
  // `per_channel` per row: row r uses element r % channels.
  const void* scale = nullptr;
  FloatType scale_type = FloatType::kFloat32;
  const void* bias = nullptr;
  FloatType bias_type = FloatType::kFloat32;
  bool per_channel = false;
  int64_t channels = 1;
  // Optional outputs of `rows` elements each: the mean and 1 / sqrt(variance + epsilon).
  void* mean = nullptr;
  void* inv_std_dev = nullptr;
  FloatType stat_type = FloatType::kFloat32;
};

// Per position in the row: y = (x - mean) * inv_std_dev * scale + bias, in double.
// Per channel: y = x * a + b in float with a = scale * inv_std_dev, b = bias - mean * a (double).
// Returns cudaErrorInvalidValue for negative sizes or channels < 1.
cudaError_t RowNormalize(FloatType type, const void* x, void* y, const RowNormParams& params, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_NORM_H_
