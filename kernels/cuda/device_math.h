// Device helpers shared by the own CUDA kernels' .cu files (nvcc only): float32/float16/bfloat16
// element loads and stores with the math in float, the host dispatch from FloatType to the element
// type, 16-byte packs of elements, and the shared-memory tree reduction of one block and the
// shuffle reduction of one warp.
#ifndef ONNXRUN_KERNELS_CUDA_DEVICE_MATH_H_
#define ONNXRUN_KERNELS_CUDA_DEVICE_MATH_H_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"  // FloatType

namespace kernels::cuda {

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T FromFloat(float v);
template <>
__device__ __forceinline__ float FromFloat<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half FromFloat<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// The activations the own conv kernels fuse after their bias (DepthwiseConvParams::Activation and
// PointwiseConvParams::Activation share these values): none, ReLU, ReLU6 = min(max(v, 0), 6), and
// SiLU = v * sigmoid(v) (0 once exp(-v) > 2^126; exp as ex2.approx of v * log2(e), about |v| * 6e-8
// relative error, against expf's ~10 instructions: the 3x3 depthwise kernel spends as much on it as
// on its 9 taps). GELU stays out of this switch, which those kernels take as a runtime argument: its
// erf path would cost them registers.
constexpr int kConvActNone = 0, kConvActRelu = 1, kConvActRelu6 = 2, kConvActSilu = 3;
__device__ __forceinline__ float ApplyConvActivation(int act, float v) {
  switch (act) {
    case kConvActRelu: return v > 0.f ? v : 0.f;
    case kConvActRelu6: return fminf(fmaxf(v, 0.f), 6.f);
    case kConvActSilu: return __fdividef(v, 1.f + __expf(-v));
  }
  return v;
}

// Element i of a float32 / float16 / bfloat16 array as float.
__device__ __forceinline__ float LoadAsFloat(const void* p, FloatType type, int64_t i) {
  if (type == FloatType::kFloat16) return ToFloat(static_cast<const __half*>(p)[i]);
  if (type == FloatType::kBFloat16) return ToFloat(static_cast<const __nv_bfloat16*>(p)[i]);
  return static_cast<const float*>(p)[i];
}

// GELU with erf, and its tanh approximation.
__device__ __forceinline__ float GeluErf(float v) { return 0.5f * v * (1.f + erff(v * 0.70710678118654752f)); }
__device__ __forceinline__ float GeluTanh(float v) {
  return 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

// V consecutive elements moved as one load or store of V * sizeof(T) bytes (16 in the packed kernels).
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// Calls fn with a value of the element type of `type` (float, __half or __nv_bfloat16).
template <typename Fn>
auto DispatchFloatType(FloatType type, Fn&& fn) {
  switch (type) {
    case FloatType::kFloat16: return fn(__half{});
    case FloatType::kBFloat16: return fn(__nv_bfloat16{});
    default: return fn(float{});
  }
}

// Reduces one value per thread with `op` across the block; every thread gets the result.
// Preconditions: blockDim.x is a power of two; `shared` has blockDim.x entries; every thread of the
// block calls it (it synchronises).
template <typename T, typename Op>
__device__ T BlockReduce(T value, Op op, T* shared) {
  const unsigned tid = threadIdx.x;
  shared[tid] = value;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) shared[tid] = op(shared[tid], shared[tid + s]);
    __syncthreads();
  }
  const T result = shared[0];
  __syncthreads();  // `shared` may be reused right after
  return result;
}

// The sum of one value per lane across a full warp; every lane gets the result.
__device__ __forceinline__ float WarpSum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_DEVICE_MATH_H_
