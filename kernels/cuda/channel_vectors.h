// Device helpers of the depthwise kernel (depthwise_conv.cu): V adjacent channels of float32 or
// float16 as one register-sized vector — its aligned load, its unpacking to float, and the store
// of V floats rounded back to the storage type.
#ifndef ONNXRUN_KERNELS_CUDA_CHANNEL_VECTORS_H_
#define ONNXRUN_KERNELS_CUDA_CHANNEL_VECTORS_H_

#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kernels::cuda {

__device__ __forceinline__ float2 Half2BitsToFloat2(uint32_t bits) {
  __half2 h;
  memcpy(&h, &bits, sizeof(h));
  return __half22float2(h);
}
__device__ __forceinline__ uint32_t Float2ToHalf2Bits(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  uint32_t bits;
  memcpy(&bits, &h, sizeof(bits));
  return bits;
}

// V elements of T as one register-sized vector: what one load of V input channels brings.
template <typename T, int V>
struct Packed;
template <>
struct Packed<float, 1> {
  using Type = float;
};
template <>
struct Packed<float, 2> {
  using Type = float2;
};
template <>
struct Packed<__half, 1> {
  using Type = unsigned short;
};
template <>
struct Packed<__half, 2> {
  using Type = unsigned int;
};
template <>
struct Packed<__half, 4> {
  using Type = uint2;
};

// p[0..V) as one aligned vector load (p is aligned to V elements).
template <typename T, int V>
__device__ __forceinline__ typename Packed<T, V>::Type LoadPacked(const T* p) {
  return __ldg(reinterpret_cast<const typename Packed<T, V>::Type*>(p));
}

// v[0..V) = the packed elements as float.
__device__ __forceinline__ void Unpack(float q, float* v) { v[0] = q; }
__device__ __forceinline__ void Unpack(float2 q, float* v) { v[0] = q.x, v[1] = q.y; }
__device__ __forceinline__ void Unpack(unsigned short q, float* v) { v[0] = __half2float(__ushort_as_half(q)); }
__device__ __forceinline__ void Unpack(unsigned int q, float* v) {
  const float2 f = Half2BitsToFloat2(q);
  v[0] = f.x, v[1] = f.y;
}
__device__ __forceinline__ void Unpack(uint2 q, float* v) {
  const float2 lo = Half2BitsToFloat2(q.x), hi = Half2BitsToFloat2(q.y);
  v[0] = lo.x, v[1] = lo.y, v[2] = hi.x, v[3] = hi.y;
}

// p[0..V) = v[0..V) in T (round to nearest even), one aligned vector store.
template <typename T, int V>
__device__ __forceinline__ void StoreVec(T* p, const float* v) {
  if constexpr (std::is_same_v<T, float>) {
    if constexpr (V == 2) {
      *reinterpret_cast<float2*>(p) = make_float2(v[0], v[1]);
    } else {
      *p = v[0];
    }
  } else {
    if constexpr (V == 4) {
      *reinterpret_cast<uint2*>(p) = make_uint2(Float2ToHalf2Bits(v[0], v[1]), Float2ToHalf2Bits(v[2], v[3]));
    } else if constexpr (V == 2) {
      *reinterpret_cast<__half2*>(p) = __floats2half2_rn(v[0], v[1]);
    } else {
      *p = __float2half_rn(v[0]);
    }
  }
}

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_CHANNEL_VECTORS_H_
