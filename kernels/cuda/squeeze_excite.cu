// The squeeze-excite kernel (squeeze_excite.h): the sample's C inputs into shared memory, one warp
// per hidden unit for W1 (coalesced rows), one thread per output channel for W2. The output
// channels are split over several blocks per sample (each recomputes the R hidden units) so that
// more SMs read W2. A version taking 8 samples per block (each weight read serving all of them)
// ran slower on the H200 at every batch (efficientnet_b0 fp16 b256 +3%, b1 +14%).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/squeeze_excite.h"

namespace kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr size_t kMaxSharedBytes = 48 * 1024;

__device__ __forceinline__ float Sigmoid(float v) { return 1.f / (1.f + __expf(-v)); }

__device__ __forceinline__ float Activate(const SqueezeExciteParams& p, float v) {
  return p.activation == SqueezeExciteParams::kRelu ? fmaxf(v, 0.f) : v * Sigmoid(v);
}

__device__ __forceinline__ float Gate(const SqueezeExciteParams& p, float v) {
  return p.gate == SqueezeExciteParams::kSigmoid ? Sigmoid(v) : fminf(fmaxf(p.alpha * v + p.beta, 0.f), 1.f);
}

// Block (x, y): sample x, output channels of part y.
template <typename T>
__global__ void SqueezeExciteKernel(SqueezeExciteParams p, const T* __restrict__ x, T* __restrict__ y) {
  extern __shared__ float shared[];
  float* pooled = shared;
  float* hidden = shared + p.channels;
  const int64_t n = blockIdx.x;
  for (int64_t c = threadIdx.x; c < p.channels; c += blockDim.x) pooled[c] = ToFloat(x[n * p.channels + c]);
  __syncthreads();
  const T* w1 = static_cast<const T*>(p.w1);
  const T* b1 = static_cast<const T*>(p.b1);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int64_t r = warp; r < p.reduced; r += warps) {
    float acc = 0.f;
    for (int64_t c = lane; c < p.channels; c += 32) acc += ToFloat(w1[r * p.channels + c]) * pooled[c];
    acc = WarpSum(acc);
    if (lane == 0) hidden[r] = Activate(p, acc + (b1 != nullptr ? ToFloat(b1[r]) : 0.f));
  }
  __syncthreads();
  const T* w2 = static_cast<const T*>(p.w2);
  const T* b2 = static_cast<const T*>(p.b2);
  const int64_t per_part = (p.channels + gridDim.y - 1) / gridDim.y;
  const int64_t first = blockIdx.y * per_part, last = min(p.channels, first + per_part);
  for (int64_t c = first + threadIdx.x; c < last; c += blockDim.x) {
    float acc = b2 != nullptr ? ToFloat(b2[c]) : 0.f;
    const T* row = w2 + c * p.w2_row;
    for (int64_t k = 0; k < p.reduced; ++k) acc += ToFloat(row[k]) * hidden[k];
    y[n * p.channels + c] = FromFloat<T>(Gate(p, acc));
  }
}

}  // namespace

cudaError_t SqueezeExcite(const SqueezeExciteParams& params, const void* x, void* y, cudaStream_t stream) {
  const size_t per_sample = static_cast<size_t>(params.channels + params.reduced) * sizeof(float);
  if (params.batch < 0 || params.channels <= 0 || params.reduced <= 0 || params.w2_row < params.reduced ||
      per_sample > kMaxSharedBytes || params.w1 == nullptr || params.w2 == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (params.batch == 0) return cudaSuccess;
  int sms = 0;
  if (cudaError_t e = DeviceMultiprocessors(&sms); e != cudaSuccess) return e;
  const int64_t parts = std::clamp<int64_t>(sms / params.batch, 1, (params.channels + kThreads - 1) / kThreads);
  if (params.batch > INT32_MAX) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(params.batch), static_cast<unsigned>(parts));
  DispatchFloatType(params.type, [&](auto tag) {
    using T = decltype(tag);
    SqueezeExciteKernel<T>
        <<<grid, kThreads, per_sample, stream>>>(params, static_cast<const T*>(x), static_cast<T*>(y));
  });
  return cudaGetLastError();
}

}  // namespace kernels::cuda
