// Row normalisation kernels. LayerNorm rows of up to 4096 16-bit (2048 float) elements in 16-byte
// packs: one warp per row, the row held in registers, statistics in float. Everything else: one
// block per row (grid-stride over rows), the block's threads striding over the row for the sum, the
// squared deviations and the outputs, in double. Both add an optional residual to the row first and
// take no mean for RMSNormalization; GroupNormalization's rows (block kernel) hold several channels.
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/norm.h"

namespace kernels::cuda {
namespace {

__device__ __forceinline__ double LoadParam(const void* p, FloatType type, int64_t i, double absent) {
  return p == nullptr ? absent : LoadAsFloat(p, type, i);
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
    const T* rr = p.residual == nullptr ? nullptr : static_cast<const T*>(p.residual) + r * p.n;
    T* yr = y + r * p.n;
    // x[i] (+ the residual, rounded to T as a separate Add would)
    const auto load = [&](int64_t i) {
      return rr == nullptr ? ToFloat(xr[i]) : ToFloat(FromFloat<T>(ToFloat(xr[i]) + ToFloat(rr[i])));
    };
    double sum = 0;
    for (int64_t i = threadIdx.x; i < p.n; i += blockDim.x) sum += load(i);
    const double block_sum = BlockReduce(sum, add, shared);  // every thread joins the reduction
    const double mean = p.n > 0 && !p.rms ? block_sum / static_cast<double>(p.n) : 0.0;
    double sq = 0;
    for (int64_t i = threadIdx.x; i < p.n; i += blockDim.x) {
      const double d = static_cast<double>(load(i)) - mean;
      sq += d * d;
    }
    const double var = p.n > 0 ? BlockReduce(sq, add, shared) / static_cast<double>(p.n) : 0.0;
    const double std_dev = sqrt(var + p.epsilon);
    const double inv_std = 1.0 / std_dev;
    if (p.per_channel && p.channel_span > 0 && p.channel_span < p.n) {
      const int64_t first_channel = r * (p.n / p.channel_span);
      for (int64_t i = threadIdx.x; i < p.n; i += blockDim.x) {
        const int64_t c = (first_channel + i / p.channel_span) % p.channels;
        const double a = LoadParam(p.scale, p.scale_type, c, 1.0) / std_dev;
        const double b = LoadParam(p.bias, p.bias_type, c, 0.0) - mean * a;
        yr[i] = FromFloat<T>(static_cast<float>(static_cast<double>(ToFloat(xr[i])) * a + b));
      }
    } else if (p.per_channel) {
      const int64_t c = r % p.channels;
      const double a = LoadParam(p.scale, p.scale_type, c, 1.0) / std_dev;
      const double b = LoadParam(p.bias, p.bias_type, c, 0.0) - mean * a;
      const float af = static_cast<float>(a), bf = static_cast<float>(b);
      for (int64_t i = threadIdx.x; i < p.n; i += blockDim.x) yr[i] = FromFloat<T>(ToFloat(xr[i]) * af + bf);
    } else {
      for (int64_t i = threadIdx.x; i < p.n; i += blockDim.x) {
        const double v = (static_cast<double>(load(i)) - mean) * inv_std;
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

// ---- One warp per row ----------------------------------------------------------------------------

constexpr int kWarpRowsPerBlock = 4;
constexpr int kMaxPacksPerLane = 16;

template <typename T>
constexpr FloatType kFloatTypeOf = sizeof(T) == 4              ? FloatType::kFloat32
                                   : std::is_same_v<T, __half> ? FloatType::kFloat16
                                                               : FloatType::kBFloat16;

// Scale or bias elements [pack * V, pack * V + V) as floats: one 16-byte load when they have the
// row's element type and alignment, else one element at a time.
template <typename T, int V>
__device__ __forceinline__ void LoadParamPack(const void* p, FloatType type, int pack, float absent, float (&out)[V]) {
  if (p != nullptr && type == kFloatTypeOf<T> && Aligned16(p)) {
    const Pack<T, V> v = static_cast<const Pack<T, V>*>(p)[pack];
#pragma unroll
    for (int j = 0; j < V; ++j) out[j] = ToFloat(v.v[j]);
    return;
  }
#pragma unroll
  for (int j = 0; j < V; ++j) out[j] = p == nullptr ? absent : LoadAsFloat(p, type, static_cast<int64_t>(pack) * V + j);
}

// Row r is 16-byte packs [lane + 32 k] for k < kPacks (those below the row's pack count); two
// passes over the registers give the mean and the variance, a third writes the outputs.
template <typename T, int kPacks>
__global__ void __launch_bounds__(32 * kWarpRowsPerBlock)
    WarpRowNormKernel(const T* __restrict__ x, T* __restrict__ y, RowNormParams p) {
  constexpr int V = 16 / sizeof(T);
  using P = Pack<T, V>;
  const int lane = threadIdx.x % 32;
  const int packs = static_cast<int>(p.n / V);
  const float inv_n = 1.0f / static_cast<float>(p.n);
  for (int64_t r = blockIdx.x * int64_t{kWarpRowsPerBlock} + threadIdx.x / 32; r < p.rows;
       r += int64_t{gridDim.x} * kWarpRowsPerBlock) {
    const P* xr = reinterpret_cast<const P*>(x + r * p.n);
    const P* rr =
        p.residual == nullptr ? nullptr : reinterpret_cast<const P*>(static_cast<const T*>(p.residual) + r * p.n);
    P row[kPacks];
    float sum = 0;
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      if (lane + 32 * k >= packs) continue;
      row[k] = xr[lane + 32 * k];
      if (p.residual != nullptr) {  // the sum rounded to T, as a separate Add would write it
        const P add = rr[lane + 32 * k];
#pragma unroll
        for (int j = 0; j < V; ++j) row[k].v[j] = FromFloat<T>(ToFloat(row[k].v[j]) + ToFloat(add.v[j]));
      }
#pragma unroll
      for (int j = 0; j < V; ++j) sum += ToFloat(row[k].v[j]);
    }
    const float total = WarpSum(sum);  // every lane joins the shuffle
    const float mean = p.rms ? 0.0f : total * inv_n;
    float sq = 0;
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      if (lane + 32 * k >= packs) continue;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float d = ToFloat(row[k].v[j]) - mean;
        sq += d * d;
      }
    }
    const float inv_std = 1.0f / sqrtf(WarpSum(sq) * inv_n + static_cast<float>(p.epsilon));
    P* yr = reinterpret_cast<P*>(y + r * p.n);
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int i = lane + 32 * k;
      if (i >= packs) continue;
      float scale[V], bias[V];
      LoadParamPack<T>(p.scale, p.scale_type, i, 1.0f, scale);
      LoadParamPack<T>(p.bias, p.bias_type, i, 0.0f, bias);
      P out;
#pragma unroll
      for (int j = 0; j < V; ++j) out.v[j] = FromFloat<T>((ToFloat(row[k].v[j]) - mean) * inv_std * scale[j] + bias[j]);
      yr[i] = out;
    }
    if (lane == 0) {
      StoreStat(p.mean, p.stat_type, r, mean);
      StoreStat(p.inv_std_dev, p.stat_type, r, inv_std);
    }
  }
}

// Packs per lane of the warp kernel for rows of `n` elements (a power of two), or 0 when the
// block kernel serves them: per-channel parameters, rows not whole packs, unaligned data, long rows.
int WarpPacksPerLane(const RowNormParams& p, int element_bytes, const void* x, const void* y) {
  const int v = 16 / element_bytes;
  if (p.per_channel || p.n <= 0 || p.n % v != 0 || !Aligned16(x) || !Aligned16(y)) return 0;
  if (p.residual != nullptr && !Aligned16(p.residual)) return 0;
  const int64_t per_lane = (p.n / v + 31) / 32;
  int packs = 1;
  while (packs < per_lane) packs *= 2;
  return packs <= kMaxPacksPerLane ? packs : 0;
}

template <typename T>
void LaunchWarpRowNorm(int packs, const T* x, T* y, const RowNormParams& p, cudaStream_t stream) {
  const int blocks = GridSize(p.rows, kWarpRowsPerBlock);
  const auto launch = [&](auto kernel) { kernel<<<blocks, 32 * kWarpRowsPerBlock, 0, stream>>>(x, y, p); };
  switch (packs) {
    case 1: return launch(WarpRowNormKernel<T, 1>);
    case 2: return launch(WarpRowNormKernel<T, 2>);
    case 4: return launch(WarpRowNormKernel<T, 4>);
    case 8: return launch(WarpRowNormKernel<T, 8>);
    default: return launch(WarpRowNormKernel<T, 16>);
  }
}

}  // namespace

cudaError_t RowNormalize(FloatType type, const void* x, void* y, const RowNormParams& params, cudaStream_t stream) {
  if (params.rows < 0 || params.n < 0 || params.channels < 1 || params.channel_span < 0) return cudaErrorInvalidValue;
  if (params.channel_span > 0 && params.n % params.channel_span != 0) return cudaErrorInvalidValue;
  if (params.residual != nullptr && params.per_channel) return cudaErrorInvalidValue;
  if (params.rows == 0) return cudaSuccess;
  const int blocks = static_cast<int>(params.rows < kMaxBlocks ? params.rows : kMaxBlocks);
  const int threads = RowBlockSize(params.n);
  DispatchFloatType(type, [&](auto tag) {
    using T = decltype(tag);
    if (const int packs = WarpPacksPerLane(params, sizeof(T), x, y); packs > 0) {
      return LaunchWarpRowNorm(packs, static_cast<const T*>(x), static_cast<T*>(y), params, stream);
    }
    RowNormKernel<T><<<blocks, threads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), params);
  });
  return cudaGetLastError();
}

}  // namespace kernels::cuda
