// Shared by the own kernels of one or two operands with numpy broadcasting and an output of any
// element type (compare.cu, mod.cu): the element types they take, the shape of a call (the dense
// output's dims and each operand's strides in the output's index space, 0 on broadcast dims), and
// (nvcc only) the grid-stride kernels and their launch, which merge dims with CollapseDims and
// index in int32 where every offset fits.
#ifndef ONNXRUN_KERNELS_CUDA_BROADCAST_H_
#define ONNXRUN_KERNELS_CUDA_BROADCAST_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/strided_copy.h"

namespace kernels::cuda {

// Element types of these kernels; kBool is one byte, 0 or 1 (any nonzero byte reads as true).
enum class ElementType { kFloat32, kFloat16, kBFloat16, kInt8, kUint8, kInt32, kInt64, kBool };

struct BroadcastShape {
  int rank = 0;
  int64_t dims[kMaxRank] = {};       // the output's; the output is dense row-major
  int64_t a_strides[kMaxRank] = {};  // elements, >= 0; 0 on dims a is broadcast along
  int64_t b_strides[kMaxRank] = {};  // likewise for b (unused by one-operand kernels)
};

}  // namespace kernels::cuda

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/shape_collapse.h"

namespace kernels::cuda {

// The storage of an ElementType::kBool element.
struct Bool8 {
  uint8_t v;
};

// Calls fn(static_cast<T*>(nullptr)) with T the storage type of `type` (float, __half, __nv_bfloat16, int8_t,
// uint8_t, int32_t, int64_t, Bool8) and returns its result; cudaErrorInvalidValue for another type.
template <typename Fn>
cudaError_t VisitElementType(ElementType type, Fn&& fn) {
  switch (type) {
    case ElementType::kFloat32: return fn(static_cast<float*>(nullptr));
    case ElementType::kFloat16: return fn(static_cast<__half*>(nullptr));
    case ElementType::kBFloat16: return fn(static_cast<__nv_bfloat16*>(nullptr));
    case ElementType::kInt8: return fn(static_cast<int8_t*>(nullptr));
    case ElementType::kUint8: return fn(static_cast<uint8_t*>(nullptr));
    case ElementType::kInt32: return fn(static_cast<int32_t*>(nullptr));
    case ElementType::kInt64: return fn(static_cast<int64_t*>(nullptr));
    case ElementType::kBool: return fn(static_cast<Bool8*>(nullptr));
  }
  return cudaErrorInvalidValue;
}

// The value an element computes as: float for float16 and bfloat16, bool for Bool8, itself otherwise.
template <typename T>
__device__ __forceinline__ T ValueOf(T v) {
  return v;
}
__device__ __forceinline__ float ValueOf(__half v) { return __half2float(v); }
__device__ __forceinline__ float ValueOf(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ bool ValueOf(Bool8 v) { return v.v != 0; }

// out[i] = f(a[i . a_strides], b[i . b_strides]) over the output's dims.
template <typename Index, typename A, typename B, typename Out, typename F>
__global__ void BroadcastBinaryKernel(const A* __restrict__ a, const B* __restrict__ b, Out* __restrict__ out,
                                      BroadcastShape shape, Index total, F f) {
  for (Index linear = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; linear < total;
       linear += static_cast<Index>(gridDim.x) * blockDim.x) {
    Index ia = 0, ib = 0;
    ForEachCoordinate(linear, shape.rank, shape.dims, [&](int d, Index i) {
      ia += i * static_cast<Index>(shape.a_strides[d]);
      ib += i * static_cast<Index>(shape.b_strides[d]);
    });
    out[linear] = f(a[ia], b[ib]);
  }
}

// out[i] = f(a[i . a_strides]) over the output's dims.
template <typename Index, typename A, typename Out, typename F>
__global__ void BroadcastUnaryKernel(const A* __restrict__ a, Out* __restrict__ out, BroadcastShape shape, Index total,
                                     F f) {
  for (Index linear = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; linear < total;
       linear += static_cast<Index>(gridDim.x) * blockDim.x) {
    Index ia = 0;
    ForEachCoordinate(linear, shape.rank, shape.dims,
                      [&](int d, Index i) { ia += i * static_cast<Index>(shape.a_strides[d]); });
    out[linear] = f(a[ia]);
  }
}

// The shape with merged dims; `total` = its element count, `small` = whether the count and every
// operand offset stay below 2^30 (int32 indexing; the margin keeps the grid-stride step from
// overflowing). False for a bad rank, a negative dim or a negative stride.
inline bool PrepareBroadcast(const BroadcastShape& in, BroadcastShape& out, int64_t& total, bool& small) {
  if (in.rank < 0 || in.rank > kMaxRank) return false;
  out = in;
  int64_t dense[kMaxRank] = {};
  int64_t max_a = 0, max_b = 0;
  total = 1;
  for (int d = in.rank - 1; d >= 0; --d) {
    if (in.dims[d] < 0 || in.a_strides[d] < 0 || in.b_strides[d] < 0) return false;
    dense[d] = total;
    total *= in.dims[d];
    if (in.dims[d] > 0) {
      max_a += (in.dims[d] - 1) * in.a_strides[d];
      max_b += (in.dims[d] - 1) * in.b_strides[d];
    }
  }
  int64_t* strides[] = {out.a_strides, out.b_strides, dense};
  out.rank = CollapseDims(in.rank, out.dims, strides, 3);
  constexpr int64_t kLimit = int64_t{1} << 30;
  small = total < kLimit && max_a < kLimit && max_b < kLimit;
  return true;
}

// out[i] = f(a[i . a_strides], b[i . b_strides]); cudaErrorInvalidValue for a bad shape.
template <typename A, typename B, typename Out, typename F>
cudaError_t LaunchBroadcastBinary(const void* a, const void* b, void* out, const BroadcastShape& shape, F f,
                                  cudaStream_t stream) {
  BroadcastShape s;
  int64_t total = 0;
  bool small = false;
  if (!PrepareBroadcast(shape, s, total, small)) return cudaErrorInvalidValue;
  if (total == 0) return cudaSuccess;
  const A* pa = static_cast<const A*>(a);
  const B* pb = static_cast<const B*>(b);
  Out* po = static_cast<Out*>(out);
  if (small) {
    BroadcastBinaryKernel<int32_t>
        <<<GridSize(total), kBlockSize, 0, stream>>>(pa, pb, po, s, static_cast<int32_t>(total), f);
  } else {
    BroadcastBinaryKernel<int64_t><<<GridSize(total), kBlockSize, 0, stream>>>(pa, pb, po, s, total, f);
  }
  return cudaGetLastError();
}

// out[i] = f(a[i . a_strides]) (shape.b_strides unused); cudaErrorInvalidValue for a bad shape.
template <typename A, typename Out, typename F>
cudaError_t LaunchBroadcastUnary(const void* a, void* out, const BroadcastShape& shape, F f, cudaStream_t stream) {
  BroadcastShape in = shape, s;
  for (int64_t& stride : in.b_strides) stride = 0;  // not read: they must not stop dims merging
  int64_t total = 0;
  bool small = false;
  if (!PrepareBroadcast(in, s, total, small)) return cudaErrorInvalidValue;
  if (total == 0) return cudaSuccess;
  const A* pa = static_cast<const A*>(a);
  Out* po = static_cast<Out*>(out);
  if (small) {
    BroadcastUnaryKernel<int32_t>
        <<<GridSize(total), kBlockSize, 0, stream>>>(pa, po, s, static_cast<int32_t>(total), f);
  } else {
    BroadcastUnaryKernel<int64_t><<<GridSize(total), kBlockSize, 0, stream>>>(pa, po, s, total, f);
  }
  return cudaGetLastError();
}

}  // namespace kernels::cuda
#endif  // __CUDACC__

#endif  // ONNXRUN_KERNELS_CUDA_BROADCAST_H_
