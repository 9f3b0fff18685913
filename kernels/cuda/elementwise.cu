// Unary and broadcasting binary pointwise kernels (float math, float32/float16/bfloat16
// storage), with a fast path for one operand broadcast along the middle of three collapsed dims.
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/shape_collapse.h"

namespace kernels::cuda {
namespace {

template <typename T>
__device__ float Load(const T* p, int64_t i) {
  return ToFloat(p[i]);
}
template <typename T>
__device__ void Store(T* p, int64_t i, float v) {
  p[i] = FromFloat<T>(v);
}

__device__ float ApplyUnary(UnaryOp op, float x, float alpha, float beta) {
  switch (op) {
    case UnaryOp::kRelu: return x > 0.f ? x : 0.f;
    case UnaryOp::kSigmoid: return 1.f / (1.f + expf(-x));
    case UnaryOp::kTanh: return tanhf(x);
    case UnaryOp::kLeakyRelu: return x >= 0.f ? x : alpha * x;
    case UnaryOp::kElu: return x >= 0.f ? x : alpha * (expf(x) - 1.f);
    case UnaryOp::kSelu: return beta * (x > 0.f ? x : alpha * (expf(x) - 1.f));
    case UnaryOp::kHardSigmoid: return fminf(1.f, fmaxf(0.f, alpha * x + beta));
    case UnaryOp::kHardSwish: return x * fminf(1.f, fmaxf(0.f, x / 6.f + 0.5f));
    case UnaryOp::kSoftplus: return x > 20.f ? x : log1pf(expf(x));
    case UnaryOp::kGelu: return GeluErf(x);
    case UnaryOp::kGeluTanh: return GeluTanh(x);
    case UnaryOp::kErf: return erff(x);
    case UnaryOp::kClip: return fminf(beta, fmaxf(alpha, x));
    case UnaryOp::kSqrt: return sqrtf(x);
    case UnaryOp::kExp: return expf(x);
    case UnaryOp::kLog: return logf(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return fabsf(x);
    case UnaryOp::kReciprocal: return 1.f / x;
    case UnaryOp::kSin: return sinf(x);
    case UnaryOp::kCos: return cosf(x);
    case UnaryOp::kTan: return tanf(x);
    case UnaryOp::kAsin: return asinf(x);
    case UnaryOp::kAcos: return acosf(x);
    case UnaryOp::kAtan: return atanf(x);
    case UnaryOp::kSinh: return sinhf(x);
    case UnaryOp::kCosh: return coshf(x);
    case UnaryOp::kAsinh: return asinhf(x);
    case UnaryOp::kAcosh: return acoshf(x);
    case UnaryOp::kAtanh: return atanhf(x);
    case UnaryOp::kFloor: return floorf(x);
    case UnaryOp::kCeil: return ceilf(x);
    case UnaryOp::kRound: return rintf(x);  // the default rounding mode: half to even
    case UnaryOp::kSign: return x > 0.f ? 1.f : (x < 0.f ? -1.f : (x != x ? x : 0.f));
    case UnaryOp::kSoftsign: return x / (1.f + fabsf(x));
    case UnaryOp::kMish: return x * tanhf(x > 20.f ? x : log1pf(expf(x)));
    case UnaryOp::kCelu: return fmaxf(0.f, x) + fminf(0.f, alpha * (expf(x / alpha) - 1.f));
    case UnaryOp::kThresholdedRelu: return x > alpha ? x : 0.f;
    case UnaryOp::kShrink: return x < -alpha ? x + beta : (x > alpha ? x - beta : 0.f);
    case UnaryOp::kSwish: return x / (1.f + expf(-alpha * x));
    case UnaryOp::kIdentity: return x;
  }
  return x;
}

__device__ float ApplyBinary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return powf(a, b);
    case BinaryOp::kMin: return (a != a || b != b) ? a + b : fminf(a, b);  // NaN propagates
    case BinaryOp::kMax: return (a != a || b != b) ? a + b : fmaxf(a, b);
    case BinaryOp::kPRelu: return a >= 0.f ? a : a * b;
  }
  return a;
}

template <typename T>
__global__ void UnaryKernel(UnaryOp op, const T* in, T* out, int64_t count, float alpha, float beta) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Store(out, i, ApplyUnary(op, Load(in, i), alpha, beta));
  }
}

struct Strides {
  int64_t v[kMaxRank];
};

// Index: int32_t when every offset fits (integer division is several times
// cheaper), else int64_t.
template <typename T, typename Index>
__global__ void BinaryKernel(BinaryOp op, const T* a, const T* b, T* out, CopyShape shape, Strides b_strides,
                             Index total) {
  for (Index linear = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; linear < total;
       linear += static_cast<Index>(gridDim.x) * blockDim.x) {
    Index ia = 0, ib = 0;
    ForEachCoordinate(linear, shape.rank, shape.dims, [&](int d, Index i) {
      ia += i * static_cast<Index>(shape.src_strides[d]);
      ib += i * static_cast<Index>(b_strides.v[d]);
    });
    Store(out, linear, ApplyBinary(op, Load(a, ia), Load(b, ib)));
  }
}

template <typename T, typename Index>
void LaunchBinary(BinaryOp op, const void* a, const void* b, void* out, const CopyShape& shape, const Strides& bs,
                  int64_t total, cudaStream_t stream);

// BinaryKernel for shapes whose innermost dim is contiguous in a, b and out and a multiple of V
// (every operand offset then is too): one thread per V outputs, index math once per V.
template <typename T, typename Index, int V>
__global__ void BinaryPackedKernel(BinaryOp op, const T* a, const T* b, T* out, CopyShape shape, Strides b_strides,
                                   Index packs) {
  for (Index p = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; p < packs;
       p += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Index linear = p * V;
    Index ia = 0, ib = 0;
    ForEachCoordinate(linear, shape.rank, shape.dims, [&](int d, Index i) {
      ia += i * static_cast<Index>(shape.src_strides[d]);
      ib += i * static_cast<Index>(b_strides.v[d]);
    });
    const Pack<T, V> x = *reinterpret_cast<const Pack<T, V>*>(a + ia);
    const Pack<T, V> y = *reinterpret_cast<const Pack<T, V>*>(b + ib);
    Pack<T, V> z;
#pragma unroll
    for (int k = 0; k < V; ++k) Store(z.v, k, ApplyBinary(op, Load(x.v, k), Load(y.v, k)));
    *reinterpret_cast<Pack<T, V>*>(out + linear) = z;
  }
}

template <typename T, int V>
__global__ void UnaryPackedKernel(UnaryOp op, const T* in, T* out, int64_t packs, float alpha, float beta) {
  for (int64_t p = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; p < packs;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Pack<T, V> x = reinterpret_cast<const Pack<T, V>*>(in)[p];
    Pack<T, V> z;
#pragma unroll
    for (int k = 0; k < V; ++k) Store(z.v, k, ApplyUnary(op, Load(x.v, k), alpha, beta));
    reinterpret_cast<Pack<T, V>*>(out)[p] = z;
  }
}

// The row-broadcast form [d0, d1, d2] with one operand [d0, 1, d2] (strides d2, 0, 1) and the other
// and out dense: a channel scale or bias over an NHWC map (squeeze-excite's Mul). A thread keeps
// its V elements of the small operand in registers and walks kRows rows of the large one, so its
// loads are independent (no index math per element). Blocks: x = row chunks, y = d0.
constexpr int kRowBroadcastRows = 4;

template <typename T, int V, bool kSmallIsA>
__global__ void RowBroadcastKernel(BinaryOp op, const T* __restrict__ large, const T* __restrict__ small,
                                   T* __restrict__ out, int64_t d1, int vectors) {
  const int per_block = min(vectors, static_cast<int>(blockDim.x));
  const int groups = blockDim.x / per_block;
  const int v = threadIdx.x % per_block, group = threadIdx.x / per_block;
  if (group >= groups) return;
  const int64_t i0 = blockIdx.y, d2 = static_cast<int64_t>(vectors) * V;
  const Pack<T, V> s = reinterpret_cast<const Pack<T, V>*>(small + i0 * d2)[v];
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * groups + group) * kRowBroadcastRows;
#pragma unroll
  for (int r = 0; r < kRowBroadcastRows; ++r) {
    const int64_t j = first + r;
    if (j >= d1) break;
    const int64_t at = (i0 * d1 + j) * d2;
    const Pack<T, V> x = reinterpret_cast<const Pack<T, V>*>(large + at)[v];
    Pack<T, V> z;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float l = Load(x.v, k), m = Load(s.v, k);
      Store(z.v, k, kSmallIsA ? ApplyBinary(op, m, l) : ApplyBinary(op, l, m));
    }
    reinterpret_cast<Pack<T, V>*>(out + at)[v] = z;
  }
}

// Launches RowBroadcastKernel when `shape` (collapsed) has that form with d2 a multiple of V up to
// kBlockSize * V and aligned buffers; false otherwise.
template <typename T>
bool TryRowBroadcast(BinaryOp op, const void* a, const void* b, void* out, const CopyShape& shape, const Strides& bs,
                     cudaStream_t stream) {
  constexpr int kV = 16 / sizeof(T);
  if (shape.rank == 2) {  // [d1, d2]: one image (collapsing dropped d0 = 1)
    CopyShape three = shape;
    Strides bs3 = bs;
    three.rank = 3;
    three.dims[0] = 1, three.dims[1] = shape.dims[0], three.dims[2] = shape.dims[1];
    three.src_strides[0] = shape.src_strides[0] == 0 ? shape.dims[1] : shape.dims[0] * shape.dims[1];
    three.src_strides[1] = shape.src_strides[0], three.src_strides[2] = shape.src_strides[1];
    bs3.v[0] = bs.v[0] == 0 ? shape.dims[1] : shape.dims[0] * shape.dims[1];
    bs3.v[1] = bs.v[0], bs3.v[2] = bs.v[1];
    return TryRowBroadcast<T>(op, a, b, out, three, bs3, stream);
  }
  if (shape.rank != 3 || shape.dims[0] >= 65536 || shape.dims[2] % kV != 0 || shape.dims[2] > kBlockSize * kV ||
      !Aligned16(a) || !Aligned16(b) || !Aligned16(out)) {
    return false;
  }
  const int64_t d1 = shape.dims[1], d2 = shape.dims[2];
  const bool a_dense = shape.src_strides[0] == d1 * d2 && shape.src_strides[1] == d2 && shape.src_strides[2] == 1;
  const bool b_dense = bs.v[0] == d1 * d2 && bs.v[1] == d2 && bs.v[2] == 1;
  const bool a_small = shape.src_strides[0] == d2 && shape.src_strides[1] == 0 && shape.src_strides[2] == 1;
  const bool b_small = bs.v[0] == d2 && bs.v[1] == 0 && bs.v[2] == 1;
  if (!((a_dense && b_small) || (a_small && b_dense))) return false;
  const int vectors = static_cast<int>(d2 / kV);
  const int per_block = std::min(vectors, kBlockSize), groups = kBlockSize / per_block;
  const int64_t rows_per_block = static_cast<int64_t>(groups) * kRowBroadcastRows;
  const int64_t row_blocks = (d1 + rows_per_block - 1) / rows_per_block;
  if (row_blocks > 2147483647) return false;
  const dim3 grid(static_cast<unsigned>(row_blocks), static_cast<unsigned>(shape.dims[0]));
  const T* ta = static_cast<const T*>(a);
  const T* tb = static_cast<const T*>(b);
  if (a_small) {
    RowBroadcastKernel<T, kV, true><<<grid, kBlockSize, 0, stream>>>(op, tb, ta, static_cast<T*>(out), d1, vectors);
  } else {
    RowBroadcastKernel<T, kV, false><<<grid, kBlockSize, 0, stream>>>(op, ta, tb, static_cast<T*>(out), d1, vectors);
  }
  return true;
}

// Whether the packed kernel applies: innermost dim contiguous everywhere and a multiple of `v`,
// every outer stride a multiple of `v`, 16-byte aligned buffers.
bool Packable(const CopyShape& shape, const Strides& bs, int v, const void* a, const void* b, const void* out) {
  const int last = shape.rank - 1;
  if (shape.dims[last] % v != 0 || shape.src_strides[last] != 1 || bs.v[last] != 1) return false;
  for (int d = 0; d < last; ++d) {
    if (shape.src_strides[d] % v != 0 || bs.v[d] % v != 0) return false;
  }
  return Aligned16(a) && Aligned16(b) && Aligned16(out);
}

template <typename T, typename Index>
void LaunchBinary(BinaryOp op, const void* a, const void* b, void* out, const CopyShape& shape, const Strides& bs,
                  int64_t total, cudaStream_t stream) {
  constexpr int kPack = 16 / sizeof(T);
  if (Packable(shape, bs, kPack, a, b, out)) {
    const int64_t packs = total / kPack;
    BinaryPackedKernel<T, Index, kPack>
        <<<GridSize(packs), kBlockSize, 0, stream>>>(op, static_cast<const T*>(a), static_cast<const T*>(b),
                                                     static_cast<T*>(out), shape, bs, static_cast<Index>(packs));
    return;
  }
  BinaryKernel<T, Index><<<GridSize(total), kBlockSize, 0, stream>>>(op, static_cast<const T*>(a),
                                                                     static_cast<const T*>(b), static_cast<T*>(out),
                                                                     shape, bs, static_cast<Index>(total));
}

template <typename From, typename To>
__global__ void ConvertKernel(const From* in, To* out, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Store(out, i, Load(in, i));
  }
}

// kBoolean: any nonzero byte is true (1.0), whatever wrote it.
template <typename From, typename To, bool kBoolean>
__global__ void IntegerToFloatKernel(const From* in, To* out, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Store(out, i, kBoolean ? (in[i] != 0 ? 1.f : 0.f) : static_cast<float>(in[i]));
  }
}

// Calls fn with a value of the element type of `type`.
template <typename Fn>
void DispatchIntegerType(IntegerType type, Fn&& fn) {
  switch (type) {
    case IntegerType::kBool: return fn(bool{});  // read as bytes (IntegerToFloat)
    case IntegerType::kUint8: return fn(uint8_t{});
    case IntegerType::kInt8: return fn(int8_t{});
    case IntegerType::kInt32: return fn(int32_t{});
    case IntegerType::kInt64: return fn(int64_t{});
  }
}

}  // namespace

cudaError_t IntegerToFloat(IntegerType from, FloatType to, const void* in, void* out, int64_t count,
                           cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  DispatchIntegerType(from, [&](auto from_tag) {
    DispatchFloatType(to, [&](auto to_tag) {
      using Tag = decltype(from_tag);
      constexpr bool kBoolean = std::is_same_v<Tag, bool>;
      using From = std::conditional_t<kBoolean, uint8_t, Tag>;
      using To = decltype(to_tag);
      IntegerToFloatKernel<From, To, kBoolean>
          <<<GridSize(count), kBlockSize, 0, stream>>>(static_cast<const From*>(in), static_cast<To*>(out), count);
    });
  });
  return cudaGetLastError();
}

cudaError_t ConvertFloat(FloatType from, FloatType to, const void* in, void* out, int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  if (from == to) {
    return cudaMemcpyAsync(out, in, count * (from == FloatType::kFloat32 ? 4 : 2), cudaMemcpyDeviceToDevice, stream);
  }
  DispatchFloatType(from, [&](auto from_tag) {
    DispatchFloatType(to, [&](auto to_tag) {
      using From = decltype(from_tag);
      using To = decltype(to_tag);
      ConvertKernel<<<GridSize(count), kBlockSize, 0, stream>>>(static_cast<const From*>(in), static_cast<To*>(out),
                                                                count);
    });
  });
  return cudaGetLastError();
}

cudaError_t Unary(UnaryOp op, FloatType type, const void* in, void* out, int64_t count, float alpha, float beta,
                  cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  DispatchFloatType(type, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kPack = 16 / sizeof(T);
    if (count % kPack == 0 && Aligned16(in) && Aligned16(out)) {
      UnaryPackedKernel<T, kPack><<<GridSize(count / kPack), kBlockSize, 0, stream>>>(
          op, static_cast<const T*>(in), static_cast<T*>(out), count / kPack, alpha, beta);
    } else {
      UnaryKernel<T><<<GridSize(count), kBlockSize, 0, stream>>>(op, static_cast<const T*>(in), static_cast<T*>(out),
                                                                 count, alpha, beta);
    }
  });
  return cudaGetLastError();
}

cudaError_t Binary(BinaryOp op, FloatType type, const void* a, const void* b, void* out, const CopyShape& shape,
                   const int64_t* b_strides, cudaStream_t stream) {
  if (shape.rank < 0 || shape.rank > kMaxRank) return cudaErrorInvalidValue;
  CopyShape collapsed = shape;
  Strides bs{};
  int64_t total = 1;
  for (int d = shape.rank - 1; d >= 0; --d) {
    collapsed.dst_strides[d] = total;  // the output is dense in iteration order
    total *= shape.dims[d];
    bs.v[d] = b_strides[d];
  }
  if (total <= 0) return cudaSuccess;
  int64_t* strides[] = {collapsed.src_strides, bs.v, collapsed.dst_strides};
  collapsed.rank = CollapseDims(shape.rank, collapsed.dims, strides, 3);
  // Offsets stay below the element count of the largest operand, itself at most
  // `total`; the margin keeps the grid-stride increment from overflowing.
  const bool small = total < (int64_t{1} << 30);
  DispatchFloatType(type, [&](auto tag) {
    using T = decltype(tag);
    if (TryRowBroadcast<T>(op, a, b, out, collapsed, bs, stream)) return;
    if (small) {
      LaunchBinary<T, int32_t>(op, a, b, out, collapsed, bs, total, stream);
    } else {
      LaunchBinary<T, int64_t>(op, a, b, out, collapsed, bs, total, stream);
    }
  });
  return cudaGetLastError();
}

}  // namespace kernels::cuda
