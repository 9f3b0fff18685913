// The squeeze-excite kernel (squeeze_excite.h): the sample's C inputs into shared memory, then
// both matrix-vector products as warp-per-row dot products (coalesced rows, 16-byte loads where the
// row length allows, four rows at a time so that their loads overlap), W1's into shared hidden
// units, W2's into the block's share of the output channels. The output channels are split over
// several blocks per sample (each recomputes the R hidden units) so that more SMs read the weights.
// The first form (one warp per hidden unit with 2-byte loads, one thread per output channel, 256
// threads) took 62 us per MobileNetV3-Large block (C 960, R 240) at batch 16, slower than cuDNN.
// A version taking 8 samples per block (each weight read serving all of them) ran slower on the
// H200 at every batch (efficientnet_b0 fp16 b256 +3%, b1 +14%).
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

constexpr int kThreads = 1024;
constexpr int kMinChannelsPerBlock = 64;  // output channels a block computes, at least
constexpr int kRowsPerPass = 4;           // rows a warp sums at once
constexpr size_t kMaxSharedBytes = 48 * 1024;

__device__ __forceinline__ float Sigmoid(float v) { return 1.f / (1.f + __expf(-v)); }

__device__ __forceinline__ float Activate(const SqueezeExciteParams& p, float v) {
  return p.activation == SqueezeExciteParams::kRelu ? fmaxf(v, 0.f) : v * Sigmoid(v);
}

__device__ __forceinline__ float Gate(const SqueezeExciteParams& p, float v) {
  return p.gate == SqueezeExciteParams::kSigmoid ? Sigmoid(v) : fminf(fmaxf(p.alpha * v + p.beta, 0.f), 1.f);
}

// For rows r in [first, last) of w (row r at w + r * ld): store(r, sum over k < len of w[r][k] * v[k]).
// One warp per row, its lanes reading V elements each (len a multiple of V, rows 16-byte aligned
// when V > 1); kRowsPerPass rows per pass.
template <typename T, int V, typename Store>
__device__ __forceinline__ void WarpRowDots(const T* __restrict__ w, int64_t ld, int64_t len, int64_t first,
                                            int64_t last, const float* v, Store store) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int64_t r0 = first + warp * kRowsPerPass; r0 < last; r0 += int64_t{warps} * kRowsPerPass) {
    float acc[kRowsPerPass] = {};
    for (int64_t k = lane * V; k < len; k += 32 * V) {
#pragma unroll
      for (int i = 0; i < kRowsPerPass; ++i) {
        if (r0 + i < last) {
          const Pack<T, V> pack = *reinterpret_cast<const Pack<T, V>*>(w + (r0 + i) * ld + k);
#pragma unroll
          for (int j = 0; j < V; ++j) acc[i] += ToFloat(pack.v[j]) * v[k + j];
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kRowsPerPass; ++i) {
      const float sum = WarpSum(acc[i]);
      if (lane == 0 && r0 + i < last) store(r0 + i, sum);
    }
  }
}

// Block (x, y): sample x, output channels of part y. V1 / V2: elements per load of W1 / W2 rows.
template <typename T, int V1, int V2>
__global__ void __launch_bounds__(kThreads)
    SqueezeExciteKernel(SqueezeExciteParams p, const T* __restrict__ x, T* __restrict__ y) {
  extern __shared__ float shared[];
  float* pooled = shared;
  float* hidden = shared + p.channels;
  const int64_t n = blockIdx.x;
  for (int64_t c = threadIdx.x; c < p.channels; c += blockDim.x) {
    pooled[c] =
        p.channel_sums != nullptr ? p.channel_sums[n * p.channels + c] * p.sums_scale : ToFloat(x[n * p.channels + c]);
  }
  __syncthreads();
  const T* b1 = static_cast<const T*>(p.b1);
  WarpRowDots<T, V1>(
      static_cast<const T*>(p.w1), p.channels, p.channels, 0, p.reduced, pooled,
      [&](int64_t r, float sum) { hidden[r] = Activate(p, sum + (b1 != nullptr ? ToFloat(b1[r]) : 0.f)); });
  __syncthreads();
  const T* b2 = static_cast<const T*>(p.b2);
  const int64_t per_part = (p.channels + gridDim.y - 1) / gridDim.y;
  const int64_t first = blockIdx.y * per_part, last = min(p.channels, first + per_part);
  WarpRowDots<T, V2>(static_cast<const T*>(p.w2), p.w2_row, p.reduced, first, last, hidden, [&](int64_t c, float sum) {
    y[n * p.channels + c] = FromFloat<T>(Gate(p, sum + (b2 != nullptr ? ToFloat(b2[c]) : 0.f)));
  });
}

// 16 / sizeof(T) when rows of `len` elements `ld` apart can be read in 16-byte loads from `w`, else 1.
template <typename T>
int VectorFor(const void* w, int64_t ld, int64_t len) {
  constexpr int kWide = 16 / sizeof(T);
  return Aligned16(w) && ld % kWide == 0 && len % kWide == 0 ? kWide : 1;
}

template <typename T, int V1>
void LaunchWithW2Vector(const SqueezeExciteParams& p, dim3 grid, size_t shared, const T* x, T* y, cudaStream_t stream) {
  constexpr int kWide = 16 / sizeof(T);
  if (VectorFor<T>(p.w2, p.w2_row, p.reduced) == kWide) {
    SqueezeExciteKernel<T, V1, kWide><<<grid, kThreads, shared, stream>>>(p, x, y);
  } else {
    SqueezeExciteKernel<T, V1, 1><<<grid, kThreads, shared, stream>>>(p, x, y);
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
  const int64_t parts = std::clamp<int64_t>(sms / params.batch, 1, CeilDiv(params.channels, kMinChannelsPerBlock));
  if (params.batch > INT32_MAX) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(params.batch), static_cast<unsigned>(parts));
  DispatchFloatType(params.type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(x);
    T* out = static_cast<T*>(y);
    if (VectorFor<T>(params.w1, params.channels, params.channels) > 1) {
      LaunchWithW2Vector<T, 16 / sizeof(T)>(params, grid, per_sample, in, out, stream);
    } else {
      LaunchWithW2Vector<T, 1>(params, grid, per_sample, in, out, stream);
    }
  });
  return cudaGetLastError();
}

}  // namespace kernels::cuda
