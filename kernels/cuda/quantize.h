// Own CUDA kernels of QuantizeLinear (float32 / float16 / bfloat16 to int8 / uint8) and
// DequantizeLinear (int8 / uint8 / int32 to a float type), per tensor or per axis (no blocks),
// with the CPU kernel's arithmetic (kernels/cpu/quantize.cc): x / scale in float, rounded half to
// even, plus the zero point, saturated (NaN gives the zero point); (q - zero_point) * scale in
// float. Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_QUANTIZE_H_
#define ONNXRUN_KERNELS_CUDA_QUANTIZE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"  // FloatType

namespace kernels::cuda {

enum class QuantType { kInt8, kUint8, kInt32 };

// Element i of the dense data uses scale[(i / inner) % channels] and the zero point of that index
// (channels = 1: per tensor). The zero point has the quantized type, or is null (0).
struct QuantParams {
  int64_t count = 0;
  int64_t inner = 1;
  int64_t channels = 1;
  const void* scale = nullptr;
  FloatType scale_type = FloatType::kFloat32;
  const void* zero_point = nullptr;
};

// y (q_type: int8 or uint8) = saturate(round_half_even(x / scale) + zero_point).
cudaError_t Quantize(FloatType x_type, const void* x, QuantType q_type, void* y, const QuantParams& params,
                     cudaStream_t stream);
// y (y_type) = (x - zero_point) * scale.
cudaError_t Dequantize(QuantType q_type, const void* x, FloatType y_type, void* y, const QuantParams& params,
                       cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_QUANTIZE_H_
