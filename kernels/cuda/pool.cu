// Pool (pool.h): one thread per output element, consecutive threads on consecutive outputs of the
// layout (channels for channels last, so its loads are coalesced). The unused spatial dims are
// extent 1, so every launch loops over three.
#include <cfloat>
#include <cstdint>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/pool.h"

namespace kernels::cuda {
namespace {

// Taps t in [lo, hi) of a window starting at `start` (kernel k, dilation d) that fall in [0, n).
__device__ __forceinline__ void TapRange(int64_t start, int64_t k, int64_t d, int64_t n, int64_t& lo, int64_t& hi) {
  lo = start >= 0 ? 0 : (-start + d - 1) / d;
  hi = n - start <= 0 ? 0 : min(k, (n - start - 1) / d + 1);
  if (hi < lo) hi = lo;
}

template <typename T>
__global__ void PoolKernel(PoolParams p, const T* __restrict__ x, T* __restrict__ y, int64_t total) {
  for (int64_t out = GlobalThreadIndex(); out < total; out += GlobalThreadCount()) {
    int64_t rest = out, c = 0, o[kMaxPoolSpatial];
    if (p.channels_last) {
      c = rest % p.c;
      rest /= p.c;
    }
    for (int d = kMaxPoolSpatial - 1; d >= 0; --d) {
      o[d] = rest % p.grid[d];
      rest /= p.grid[d];
    }
    if (!p.channels_last) {
      c = rest % p.c;
      rest /= p.c;
    }
    const int64_t n = rest;
    // Per dim: the first in-image position, the tap count and the taps inside the padded extent.
    int64_t first[kMaxPoolSpatial], count[kMaxPoolSpatial], divisor = 1;
    for (int d = 0; d < kMaxPoolSpatial; ++d) {
      const int64_t start = o[d] * p.stride[d] - p.pad_begin[d];
      int64_t lo, hi, padded_lo, padded_hi;
      TapRange(start, p.kernel[d], p.dilation[d], p.image[d], lo, hi);
      TapRange(start + p.pad_begin[d], p.kernel[d], p.dilation[d], p.image[d] + p.pad_begin[d] + p.pad_end[d],
               padded_lo, padded_hi);
      first[d] = start + lo * p.dilation[d];
      count[d] = hi - lo;
      divisor *= p.kind == PoolKind::kAverageIncludePad ? padded_hi - padded_lo : hi - lo;
    }
    // Element strides of the three spatial dims and the base of (n, c).
    const int64_t plane = p.image[0] * p.image[1] * p.image[2];
    const int64_t step = p.channels_last ? p.c : 1;
    const int64_t s2 = step, s1 = p.image[2] * s2, s0 = p.image[1] * s1;
    const int64_t base = p.channels_last ? n * plane * p.c + c : (n * p.c + c) * plane;
    const bool max = p.kind == PoolKind::kMax;
    float acc = max ? -FLT_MAX : 0.f;
    bool seen = false;
    for (int64_t t0 = 0; t0 < count[0]; ++t0) {
      const int64_t a0 = base + (first[0] + t0 * p.dilation[0]) * s0;
      for (int64_t t1 = 0; t1 < count[1]; ++t1) {
        const int64_t a1 = a0 + (first[1] + t1 * p.dilation[1]) * s1;
        for (int64_t t2 = 0; t2 < count[2]; ++t2) {
          const float v = ToFloat(x[a1 + (first[2] + t2 * p.dilation[2]) * s2]);
          if (!max) {
            acc += v;
          } else if (!seen || v > acc) {
            acc = v;
          }
          seen = true;
        }
      }
    }
    if (!max) acc = divisor > 0 ? acc / static_cast<float>(divisor) : 0.f;
    y[out] = FromFloat<T>(acc);
  }
}

template <typename T>
cudaError_t Launch(const PoolParams& p, const void* x, void* y, int64_t total, cudaStream_t stream) {
  PoolKernel<T><<<GridSize(total), kBlockSize, 0, stream>>>(p, static_cast<const T*>(x), static_cast<T*>(y), total);
  return cudaGetLastError();
}

}  // namespace

cudaError_t Pool(FloatType type, const PoolParams& p, const void* x, void* y, cudaStream_t stream) {
  if (p.spatial < 1 || p.spatial > kMaxPoolSpatial || p.n < 0 || p.c < 0) return cudaErrorInvalidValue;
  PoolParams q = p;
  int64_t total = p.n * p.c;
  for (int d = 0; d < kMaxPoolSpatial; ++d) {
    if (d >= p.spatial) {  // an unused dim: one position, one tap
      q.image[d] = q.grid[d] = q.kernel[d] = q.stride[d] = q.dilation[d] = 1;
      q.pad_begin[d] = q.pad_end[d] = 0;
    }
    if (q.image[d] < 0 || q.grid[d] < 0 || q.kernel[d] < 1 || q.stride[d] < 1 || q.dilation[d] < 1 ||
        q.pad_begin[d] < 0 || q.pad_end[d] < 0) {
      return cudaErrorInvalidValue;
    }
    total *= q.grid[d];
  }
  if (total == 0) return cudaSuccess;
  switch (type) {
    case FloatType::kFloat16: return Launch<__half>(q, x, y, total, stream);
    case FloatType::kBFloat16: return Launch<__nv_bfloat16>(q, x, y, total, stream);
    default: return Launch<float>(q, x, y, total, stream);
  }
}

}  // namespace kernels::cuda
