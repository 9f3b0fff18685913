// The matmul epilogue kernel (matmul_epilogue.h): 16-byte packs of a row when n is a whole number of
// packs and every pointer is 16-byte aligned, else one element per thread; a grid-stride loop.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/matmul_epilogue.h"

namespace kernels::cuda {
namespace {

__device__ __forceinline__ float BiasAt(const MatmulEpilogueParams& p, int64_t column) {
  return p.bias == nullptr ? 0.f : LoadAsFloat(p.bias, p.bias_type, column);
}

__device__ __forceinline__ float Activate(MatmulEpilogueParams::Activation act, float v) {
  switch (act) {
    case MatmulEpilogueParams::kRelu: return v > 0.f ? v : 0.f;
    case MatmulEpilogueParams::kGelu: return GeluErf(v);
    case MatmulEpilogueParams::kGeluTanh: return GeluTanh(v);
    default: return v;
  }
}

// V elements per thread step starting at element V * i (V = 1: one element).
template <typename T, int V>
__global__ void EpilogueKernel(MatmulEpilogueParams p, T* __restrict__ y, int64_t steps) {
  using P = Pack<T, V>;
  const T* residual = static_cast<const T*>(p.residual);
  for (int64_t i = GlobalThreadIndex(); i < steps; i += GlobalThreadCount()) {
    const int64_t first = i * V, column = first % p.n;
    P v = *reinterpret_cast<const P*>(y + first);
    P r;
    if (residual != nullptr) r = *reinterpret_cast<const P*>(residual + first);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float x = Activate(p.activation, ToFloat(v.v[j]) + BiasAt(p, column + j));
      if (residual != nullptr) x += ToFloat(r.v[j]);
      v.v[j] = FromFloat<T>(x);
    }
    *reinterpret_cast<P*>(y + first) = v;
  }
}

}  // namespace

cudaError_t MatmulEpilogue(const MatmulEpilogueParams& params, void* y, cudaStream_t stream) {
  if (params.rows < 0 || params.n < 0) return cudaErrorInvalidValue;
  const int64_t total = params.rows * params.n;
  if (total == 0) return cudaSuccess;
  DispatchFloatType(params.type, [&](auto tag) {
    using T = decltype(tag);
    constexpr int V = 16 / sizeof(T);
    T* out = static_cast<T*>(y);
    if (params.n % V == 0 && Aligned16(y) && (params.residual == nullptr || Aligned16(params.residual))) {
      EpilogueKernel<T, V><<<GridSize(total / V), kBlockSize, 0, stream>>>(params, out, total / V);
    } else {
      EpilogueKernel<T, 1><<<GridSize(total), kBlockSize, 0, stream>>>(params, out, total);
    }
  });
  return cudaGetLastError();
}

}  // namespace kernels::cuda
