// Row normalisation kernel: one block per row (grid-stride over rows); the block's threads stride
// over the row for the sum, the squared deviations and the outputs.
#include <cuda_fp16.h>

#include <cmath>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/norm.h"

namespace kernels::cuda {
namespace {

__device__ __forceinline__ double LoadParam(const void* p, FloatType type, int64_t i, double absent) {
  if (p == nullptr) return absent;
  if (type == FloatType::kFloat16) return ToFloat(static_cast<const __half*>(p)[i]);
  if (type == FloatType::kBFloat16) return ToFloat(static_cast<const __nv_bfloat16*>(p)[i]);
  return static_cast<const float*>(p)[i];
}

__device__ __forceinline__ void StoreStat(void* p, FloatType type, int64_t i, double v) {
  if (p == nullptr) return;
  const float f = static_cast<float>(v);
  if (type == FloatType::kFloat16) {
    static_cast<__half*>(p)[i] = FromFloat<__half>(f);
  } else if (type == FloatType::kBFloat16) {
    static_cast<__nv_bfloat16*>(p)[i] = FromFloat<__nv_bfloat16>(f);
  } else {
    static_cast<float*>(p)[i] = f;
  }
}

template <typename T>
__global__ void RowNormKernel(const T* __restrict__ x, T* __restrict__ y, RowNormParams p) {
  __shared__ double shared[kBlockSize];
  const auto add = [](double a, double b) { return a + b; };
  for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
    const T* xr = x + r * p.n;
    T* yr = y + r * p.n;
    double sum = 0;
    for (int64_t i = threadIdx.x; i < p.n; i += blockDim.x) sum += ToFloat(xr[i]);
    const double mean = p.n > 0 ? BlockReduce(sum, add, shared) / static_cast<double>(p.n) : 0.0;
    double sq = 0;
    for (int64_t i = threadIdx.x; i < p.n; i += blockDim.x) {
      const double d = static_cast<double>(ToFloat(xr[i])) - mean;
      sq += d * d;
    }
    const double var = p.n > 0 ? BlockReduce(sq, add, shared) / static_cast<double>(p.n) : 0.0;
    const double std_dev = sqrt(var + p.epsilon);
    const double inv_std = 1.0 / std_dev;
    if (p.per_channel) {
      const int64_t c = r % p.channels;
      const double a = LoadParam(p.scale, p.scale_type, c, 1.0) / std_dev;
      const double b = LoadParam(p.bias, p.bias_type, c, 0.0) - mean * a;
      const float af = static_cast<float>(a), bf = static_cast<float>(b);
      for (int64_t i = threadIdx.x; i < p.n; i += blockDim.x) yr[i] = FromFloat<T>(ToFloat(xr[i]) * af + bf);
    } else {
      for (int64_t i = threadIdx.x; i < p.n; i += blockDim.x) {
        const double v = (static_cast<double>(ToFloat(xr[i])) - mean) * inv_std;
        const double out = v * LoadParam(p.scale, p.scale_type, i, 1.0) + LoadParam(p.bias, p.bias_type, i, 0.0);
        yr[i] = FromFloat<T>(static_cast<float>(out));
      }
    }
    if (threadIdx.x == 0) {
      StoreStat(p.mean, p.stat_type, r, mean);
      StoreStat(p.inv_std_dev, p.stat_type, r, inv_std);
    }
  }
}

}  // namespace

cudaError_t RowNormalize(FloatType type, const void* x, void* y, const RowNormParams& params, cudaStream_t stream) {
  if (params.rows < 0 || params.n < 0 || params.channels < 1) return cudaErrorInvalidValue;
  if (params.rows == 0) return cudaSuccess;
  const int blocks = static_cast<int>(params.rows < kMaxBlocks ? params.rows : kMaxBlocks);
  const int threads = RowBlockSize(params.n);
  DispatchFloatType(type, [&](auto tag) {
    using T = decltype(tag);
    RowNormKernel<T><<<blocks, threads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), params);
  });
  return cudaGetLastError();
}

}  // namespace kernels::cuda
