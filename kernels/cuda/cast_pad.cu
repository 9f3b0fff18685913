// CastPadToNhwc (cast_pad.h): one thread per output pixel reads its c channels (coalesced across
// the threads of a warp, which hold neighbouring pixels) and writes its c_out converted values as one
// packed store when c_out is 2, 4 or 8 (the stems' padded channel counts), else one at a time.
// Indices are 32-bit when every offset fits (a 64-bit division per pixel cost more than the copy).
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/cast_pad.h"
#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"

namespace kernels::cuda {
namespace {

// kCOut values of one pixel, stored with one (or, for 32 bytes, two) vector stores.
template <typename Out, int kCOut>
struct alignas(kCOut * sizeof(Out)) PackedPixel {
  Out v[kCOut];
};

// I: the index type (uint32_t or int64_t). kCOut: c_out when packed, 0 for the per-channel loop.
template <typename In, typename Out, typename I, int kCOut>
__global__ void CastPadKernel(const In* __restrict__ x, Out* __restrict__ y, I pixels, I c, I hw, I c_out) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < pixels; i += stride) {
    const I n = i / hw, p = i - n * hw;
    const In* src = x + static_cast<int64_t>(n) * c * hw + p;
    if constexpr (kCOut > 0) {
      PackedPixel<Out, kCOut> out;
#pragma unroll
      for (int ch = 0; ch < kCOut; ++ch) out.v[ch] = FromFloat<Out>(ch < c ? ToFloat(src[ch * hw]) : 0.0f);
      reinterpret_cast<PackedPixel<Out, kCOut>*>(y)[i] = out;
    } else {
      Out* dst = y + static_cast<int64_t>(i) * c_out;
      for (I ch = 0; ch < c_out; ++ch) dst[ch] = FromFloat<Out>(ch < c ? ToFloat(src[ch * hw]) : 0.0f);
    }
  }
}

template <typename In, typename Out, typename I>
cudaError_t LaunchIndexed(const In* x, Out* y, int64_t n, int64_t c, int64_t hw, int64_t c_out, cudaStream_t stream) {
  const int64_t pixels = n * hw;
  const int grid = GridSize(pixels);
  const I args[] = {static_cast<I>(pixels), static_cast<I>(c), static_cast<I>(hw), static_cast<I>(c_out)};
  switch (c_out) {
    case 2:
      CastPadKernel<In, Out, I, 2><<<grid, kBlockSize, 0, stream>>>(x, y, args[0], args[1], args[2], args[3]);
      break;
    case 4:
      CastPadKernel<In, Out, I, 4><<<grid, kBlockSize, 0, stream>>>(x, y, args[0], args[1], args[2], args[3]);
      break;
    case 8:
      CastPadKernel<In, Out, I, 8><<<grid, kBlockSize, 0, stream>>>(x, y, args[0], args[1], args[2], args[3]);
      break;
    default: CastPadKernel<In, Out, I, 0><<<grid, kBlockSize, 0, stream>>>(x, y, args[0], args[1], args[2], args[3]);
  }
  return cudaGetLastError();
}

template <typename In, typename Out>
cudaError_t Launch(const void* x, void* y, int64_t n, int64_t c, int64_t hw, int64_t c_out, cudaStream_t stream) {
  const int64_t pixels = n * hw;
  if (pixels == 0) return cudaSuccess;
  const auto* in = static_cast<const In*>(x);
  auto* out = static_cast<Out*>(y);
  // 32-bit when the largest index (and the loop's index plus its stride) stays below 2^31.
  const bool fits = pixels * c_out < (int64_t{1} << 31) && n * c * hw < (int64_t{1} << 31);
  if (fits) return LaunchIndexed<In, Out, uint32_t>(in, out, n, c, hw, c_out, stream);
  return LaunchIndexed<In, Out, int64_t>(in, out, n, c, hw, c_out, stream);
}

}  // namespace

cudaError_t CastPadToNhwc(FloatType in, FloatType out, const void* x, void* y, int64_t n, int64_t c, int64_t hw,
                          int64_t c_out, cudaStream_t stream) {
  return DispatchFloatType(in, [&](auto in_tag) {
    return DispatchFloatType(
        out, [&](auto out_tag) { return Launch<decltype(in_tag), decltype(out_tag)>(x, y, n, c, hw, c_out, stream); });
  });
}

}  // namespace kernels::cuda
