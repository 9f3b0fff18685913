// Own CUDA kernel: normalisation of rows of a dense float32/float16/bfloat16 tensor viewed as
// [rows, n] with per-row mean and biased variance (two passes, like the host reference): in float
// with the row in registers for LayerNorm rows of up to 4096 16-bit / 2048 float elements in whole
// 16-byte packs, else in double. Serves
// LayerNormalization (rows = the dims before `axis`; scale/bias per position in the row; optional
// Mean and InvStdDev outputs), InstanceNormalization (rows = N * C; scale/bias per channel),
// GroupNormalization (rows = N * groups; scale/bias per channel or per group) and
// RMSNormalization (no mean: y = x / sqrt(mean(x^2) + epsilon) * scale).
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
  // per_channel: elements of one channel in a row, 0 for the whole row (InstanceNormalization). A
  // row then holds n / channel_span channels: element i of row r has channel
  // (r * (n / channel_span) + i / channel_span) % channels (GroupNormalization: the spatial size).
  int64_t channel_span = 0;
  // RMSNormalization: no mean is taken off; the statistic is the mean of the squares.
  bool rms = false;
  // Optional outputs of `rows` elements each: the mean and 1 / sqrt(variance + epsilon).
  void* mean = nullptr;
  void* inv_std_dev = nullptr;
  FloatType stat_type = FloatType::kFloat32;
  // Optional [rows, n] of the row type added to x first, the sum rounded to that type (a residual
  // Add joined to the norm; per-position parameters only).
  const void* residual = nullptr;
};

// Per position in the row: y = (x - mean) * inv_std_dev * scale + bias (float or double, above).
// Per channel: y = x * a + b in float with a = scale * inv_std_dev, b = bias - mean * a (double).
// Returns cudaErrorInvalidValue for negative sizes, channels < 1, a channel_span that does not
// divide n, or a residual with per_channel.
cudaError_t RowNormalize(FloatType type, const void* x, void* y, const RowNormParams& params, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_NORM_H_
