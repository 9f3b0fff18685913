// CastPadToNhwc (cast_pad.h): one thread per output pixel reads its c channels (coalesced across
// the threads of a warp, which hold neighbouring pixels) and writes c_out converted values.
#include <cuda_fp16.h>

#include "kernels/cuda/cast_pad.h"
#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"

namespace kernels::cuda {
namespace {

template <typename T>
__device__ __forceinline__ float Load(const T* p) {
  return ToFloat(*p);
}

template <typename In, typename Out>
__global__ void CastPadKernel(const In* x, Out* y, int64_t pixels, int64_t c, int64_t hw, int64_t c_out) {
  for (int64_t i = GlobalThreadIndex(); i < pixels; i += GlobalThreadCount()) {
    const int64_t n = i / hw, p = i % hw;
    const In* src = x + n * c * hw + p;
    Out* dst = y + i * c_out;
    for (int64_t ch = 0; ch < c_out; ++ch) dst[ch] = FromFloat<Out>(ch < c ? Load(src + ch * hw) : 0.0f);
  }
}

template <typename In, typename Out>
cudaError_t Launch(const void* x, void* y, int64_t n, int64_t c, int64_t hw, int64_t c_out, cudaStream_t stream) {
  const int64_t pixels = n * hw;
  if (pixels == 0) return cudaSuccess;
  CastPadKernel<In, Out><<<GridSize(pixels), kBlockSize, 0, stream>>>(static_cast<const In*>(x), static_cast<Out*>(y),
                                                                      pixels, c, hw, c_out);
  return cudaGetLastError();
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
