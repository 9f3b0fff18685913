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

template <MatmulEpilogueParams::Activation A>
__device__ __forceinline__ float Activate(float v) {
  if constexpr (A == MatmulEpilogueParams::kRelu) return v > 0.f ? v : 0.f;
  if constexpr (A == MatmulEpilogueParams::kGelu) return GeluErf(v);
  if constexpr (A == MatmulEpilogueParams::kGeluTanh) return GeluTanh(v);
  return v;
}

// V elements per thread step starting at element V * i (V = 1: one element). The activation is a
// template argument and the column (a 64-bit remainder) is computed only when there is a bias.
template <typename T, int V, MatmulEpilogueParams::Activation A>
__global__ void EpilogueKernel(MatmulEpilogueParams p, T* __restrict__ y, int64_t steps) {
  using P = Pack<T, V>;
  const T* residual = static_cast<const T*>(p.residual);
  for (int64_t i = GlobalThreadIndex(); i < steps; i += GlobalThreadCount()) {
    const int64_t first = i * V;
    P v = *reinterpret_cast<const P*>(y + first);
    float bias[V];
#pragma unroll
    for (int j = 0; j < V; ++j) bias[j] = 0.f;
    if (p.bias != nullptr) {
      const int64_t column = first % p.n;
#pragma unroll
      for (int j = 0; j < V; ++j) bias[j] = LoadAsFloat(p.bias, p.bias_type, column + j);
    }
    P r;
    if (residual != nullptr) r = *reinterpret_cast<const P*>(residual + first);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float x = Activate<A>(ToFloat(v.v[j]) + bias[j]);
      if (residual != nullptr) x += ToFloat(r.v[j]);
      v.v[j] = FromFloat<T>(x);
    }
    *reinterpret_cast<P*>(y + first) = v;
  }
}

template <typename T, int V>
void Launch(const MatmulEpilogueParams& p, T* y, int64_t steps, cudaStream_t stream) {
  const int grid = GridSize(steps);
  switch (p.activation) {
    case MatmulEpilogueParams::kRelu:
      EpilogueKernel<T, V, MatmulEpilogueParams::kRelu><<<grid, kBlockSize, 0, stream>>>(p, y, steps);
      break;
    case MatmulEpilogueParams::kGelu:
      EpilogueKernel<T, V, MatmulEpilogueParams::kGelu><<<grid, kBlockSize, 0, stream>>>(p, y, steps);
      break;
    case MatmulEpilogueParams::kGeluTanh:
      EpilogueKernel<T, V, MatmulEpilogueParams::kGeluTanh><<<grid, kBlockSize, 0, stream>>>(p, y, steps);
      break;
    default: EpilogueKernel<T, V, MatmulEpilogueParams::kNone><<<grid, kBlockSize, 0, stream>>>(p, y, steps);
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
      Launch<T, V>(params, out, total / V, stream);
    } else {
      Launch<T, 1>(params, out, total, stream);
    }
  });
  return cudaGetLastError();
}

}  // namespace kernels::cuda
