// RotaryEmbedding kernel (see rotary.h): one thread per output element, a grid-stride loop; each
// rotated element reads its pair partner and its cache entry, the math in float.
#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/rotary.h"

namespace kernels::cuda {
namespace {

// The batch and position of element e's head.
__device__ void HeadOf(const RotaryShape& p, int64_t e, int64_t* b, int64_t* s) {
  const int64_t head_index = e / p.head;
  if (p.heads_first) {
    *s = head_index % p.seq;
    *b = head_index / (p.seq * p.heads);
  } else {
    *s = head_index / p.heads % p.seq;
    *b = head_index / (p.heads * p.seq);
  }
}

template <typename T>
__global__ void RotaryKernel(const T* __restrict__ x, const T* __restrict__ cos, const T* __restrict__ sin,
                             T* __restrict__ y, RotaryShape p) {
  const int64_t total = p.batch * p.seq * p.heads * p.head;
  for (int64_t e = GlobalThreadIndex(); e < total; e += GlobalThreadCount()) {
    const int64_t d = e % p.head;
    int64_t b = 0, s = 0;
    HeadOf(p, e, &b, &s);
    const int64_t row = p.positions != nullptr ? p.positions[b * p.seq + s] : b * p.seq + s;
    if (row < 0 || row >= p.cache_rows) {
      y[e] = FromFloat<T>(0.f);
      continue;
    }
    if (d >= 2 * p.half) {
      y[e] = x[e];
      continue;
    }
    const bool first = p.interleaved ? d % 2 == 0 : d < p.half;
    const int64_t pair = p.interleaved ? d / 2 : d % p.half;
    const int64_t partner = p.interleaved ? e - d + (d ^ 1) : (first ? e + p.half : e - p.half);
    const float c = ToFloat(cos[row * p.half + pair]), sn = ToFloat(sin[row * p.half + pair]);
    const float self = ToFloat(x[e]), other = ToFloat(x[partner]);
    // (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin)
    y[e] = FromFloat<T>(first ? self * c - other * sn : self * c + other * sn);
  }
}

}  // namespace

cudaError_t RotaryEmbedding(FloatType type, const void* x, const void* cos, const void* sin, void* y,
                            const RotaryShape& shape, cudaStream_t stream) {
  const RotaryShape& p = shape;
  if (p.batch < 0 || p.seq < 0 || p.heads < 1 || p.head < 1 || p.half < 0 || 2 * p.half > p.head || p.cache_rows < 0) {
    return cudaErrorInvalidValue;
  }
  const int64_t total = p.batch * p.seq * p.heads * p.head;
  if (total == 0) return cudaSuccess;
  return DispatchFloatType(type, [&](auto tag) {
    using T = decltype(tag);
    RotaryKernel<<<GridSize(total), kBlockSize, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(cos),
                                                             static_cast<const T*>(sin), static_cast<T*>(y), p);
    return cudaGetLastError();
  });
}

}  // namespace kernels::cuda
