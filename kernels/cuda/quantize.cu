// QuantizeLinear / DequantizeLinear kernels: one thread per element (grid-stride loop), the scale
// and zero point read per element from their (tiny, cached) arrays.
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/quantize.h"

namespace kernels::cuda {
namespace {

__device__ __forceinline__ int64_t ParamIndex(const QuantParams& p, int64_t i) { return (i / p.inner) % p.channels; }

template <typename Q>
__device__ __forceinline__ double ZeroPoint(const QuantParams& p, int64_t c) {
  return p.zero_point == nullptr ? 0.0 : static_cast<double>(static_cast<const Q*>(p.zero_point)[c]);
}

template <typename T, typename Q>
__global__ void QuantizeKernel(const T* __restrict__ x, Q* __restrict__ y, QuantParams p, double lo, double hi) {
  for (int64_t i = GlobalThreadIndex(); i < p.count; i += GlobalThreadCount()) {
    const int64_t c = ParamIndex(p, i);
    // IEEE division whatever the fast-math flags, rounded half to even: the CPU kernel's value
    float r = rintf(__fdiv_rn(ToFloat(x[i]), LoadAsFloat(p.scale, p.scale_type, c)));
    if (isnan(r)) r = 0.f;
    const double q = fmin(fmax(static_cast<double>(r) + ZeroPoint<Q>(p, c), lo), hi);
    y[i] = static_cast<Q>(q);
  }
}

template <typename Q, typename T>
__global__ void DequantizeKernel(const Q* __restrict__ x, T* __restrict__ y, QuantParams p) {
  for (int64_t i = GlobalThreadIndex(); i < p.count; i += GlobalThreadCount()) {
    const int64_t c = ParamIndex(p, i);
    const float v = static_cast<float>(static_cast<double>(x[i]) - ZeroPoint<Q>(p, c));
    y[i] = FromFloat<T>(__fmul_rn(v, LoadAsFloat(p.scale, p.scale_type, c)));
  }
}

bool Valid(const QuantParams& p) { return p.count >= 0 && p.inner >= 1 && p.channels >= 1 && p.scale != nullptr; }

}  // namespace

cudaError_t Quantize(FloatType x_type, const void* x, QuantType q_type, void* y, const QuantParams& params,
                     cudaStream_t stream) {
  if (!Valid(params) || q_type == QuantType::kInt32) return cudaErrorInvalidValue;
  if (params.count == 0) return cudaSuccess;
  DispatchFloatType(x_type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(x);
    if (q_type == QuantType::kInt8) {
      QuantizeKernel<<<GridSize(params.count), kBlockSize, 0, stream>>>(in, static_cast<int8_t*>(y), params, -128.0,
                                                                        127.0);
    } else {
      QuantizeKernel<<<GridSize(params.count), kBlockSize, 0, stream>>>(in, static_cast<uint8_t*>(y), params, 0.0,
                                                                        255.0);
    }
  });
  return cudaGetLastError();
}

cudaError_t Dequantize(QuantType q_type, const void* x, FloatType y_type, void* y, const QuantParams& params,
                       cudaStream_t stream) {
  if (!Valid(params)) return cudaErrorInvalidValue;
  if (params.count == 0) return cudaSuccess;
  DispatchFloatType(y_type, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(y);
    const int grid = GridSize(params.count);
    switch (q_type) {
      case QuantType::kInt8:
        DequantizeKernel<<<grid, kBlockSize, 0, stream>>>(static_cast<const int8_t*>(x), out, params);
        break;
      case QuantType::kUint8:
        DequantizeKernel<<<grid, kBlockSize, 0, stream>>>(static_cast<const uint8_t*>(x), out, params);
        break;
      case QuantType::kInt32:
        DequantizeKernel<<<grid, kBlockSize, 0, stream>>>(static_cast<const int32_t*>(x), out, params);
        break;
    }
  });
  return cudaGetLastError();
}

}  // namespace kernels::cuda
