// Reduction kernels: one block per output element (grid-stride over outputs) whose threads stride
// over the reduced elements, then a shared-memory tree combines them; or, when few elements are
// reduced into each output, one thread per output element. LogSumExp runs Max first and then the
// sum of exponentials shifted by each output's maximum, read back from the output.
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/reduce.h"

namespace kernels::cuda {
namespace {

// Widened element: double for floating point, int64 for integers.
__device__ __forceinline__ double Widen(float v) { return v; }
__device__ __forceinline__ double Widen(__half v) { return __half2float(v); }
__device__ __forceinline__ double Widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ int64_t Widen(int32_t v) { return v; }
__device__ __forceinline__ int64_t Widen(int64_t v) { return v; }

__device__ __forceinline__ void Narrow(double v, float* out) { *out = static_cast<float>(v); }
__device__ __forceinline__ void Narrow(double v, __half* out) { *out = __float2half_rn(static_cast<float>(v)); }
__device__ __forceinline__ void Narrow(double v, __nv_bfloat16* out) {
  *out = __float2bfloat16_rn(static_cast<float>(v));
}
__device__ __forceinline__ void Narrow(int64_t v, int32_t* out) { *out = static_cast<int32_t>(v); }
__device__ __forceinline__ void Narrow(int64_t v, int64_t* out) { *out = v; }

__device__ double Init(ReduceOp op, double) {
  switch (op) {
    case ReduceOp::kMax: return -INFINITY;
    case ReduceOp::kMin: return INFINITY;
    case ReduceOp::kProd: return 1.0;
    default: return 0.0;
  }
}
__device__ int64_t Init(ReduceOp op, int64_t) {
  switch (op) {
    case ReduceOp::kMax: return INT64_MIN;
    case ReduceOp::kMin: return INT64_MAX;
    case ReduceOp::kProd: return 1;
    default: return 0;
  }
}

__device__ double Combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::kMax: return (isnan(a) || isnan(b)) ? a + b : fmax(a, b);
    case ReduceOp::kMin: return (isnan(a) || isnan(b)) ? a + b : fmin(a, b);
    case ReduceOp::kProd: return a * b;
    default: return a + b;
  }
}
// Integer sums and products wrap modulo 2^64 (never signed overflow).
__device__ int64_t Combine(ReduceOp op, int64_t a, int64_t b) {
  switch (op) {
    case ReduceOp::kMax: return a > b ? a : b;
    case ReduceOp::kMin: return a < b ? a : b;
    case ReduceOp::kProd: return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    default: return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
}

// An element as the reduction accumulates it; `shift` is LogSumExp's maximum of the output.
__device__ double Map(ReduceOp op, double v, double shift) {
  if (op == ReduceOp::kL1) return fabs(v);
  if (op == ReduceOp::kLogSumExp) return exp(v - shift);
  return op == ReduceOp::kL2 || op == ReduceOp::kSumSquare ? v * v : v;
}
__device__ int64_t Map(ReduceOp op, int64_t v, int64_t) {
  if (op == ReduceOp::kL1) return v < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(v)) : v;
  if (op == ReduceOp::kL2 || op == ReduceOp::kSumSquare) {
    return static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(v));
  }
  return v;
}

__device__ double Finish(ReduceOp op, double acc, int64_t count, double shift) {
  if (op == ReduceOp::kMean) return acc / static_cast<double>(count);
  if (op == ReduceOp::kLogSumExp) return isinf(shift) ? shift : shift + log(acc);
  if (op == ReduceOp::kL2) return sqrt(acc);
  if (op == ReduceOp::kLogSum) return log(acc);
  return acc;
}
__device__ int64_t Finish(ReduceOp op, int64_t acc, int64_t count, int64_t) {
  if (op == ReduceOp::kMean) return count == 0 ? 0 : acc / count;  // truncates, like the host
  if (op == ReduceOp::kL2) return static_cast<int64_t>(sqrt(static_cast<double>(acc)));
  return acc;
}

template <typename T, typename Acc>
__global__ void ReduceBlockPerOutput(ReduceOp op, const T* __restrict__ in, T* out, const T* shift, ReduceShape s,
                                     int64_t n_out, int64_t n_reduced) {
  __shared__ Acc shared[kBlockSize];
  const auto combine = [op](Acc a, Acc b) { return Combine(op, a, b); };
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    int64_t base = 0;
    ForEachCoordinate(o, s.kept_rank, s.kept_dims, [&](int d, int64_t i) { base += i * s.kept_strides[d]; });
    const Acc sh = shift != nullptr ? Widen(shift[o]) : Acc{};  // read before the block's write below
    Acc acc = Init(op, Acc{});
    for (int64_t r = threadIdx.x; r < n_reduced; r += blockDim.x) {
      int64_t offset = base;
      ForEachCoordinate(r, s.reduced_rank, s.reduced_dims,
                        [&](int d, int64_t i) { offset += i * s.reduced_strides[d]; });
      acc = Combine(op, acc, Map(op, Widen(in[offset]), sh));
    }
    acc = BlockReduce(acc, combine, shared);
    if (threadIdx.x == 0) Narrow(Finish(op, acc, n_reduced, sh), &out[o]);
  }
}

// Below this many reduced elements per output, a thread per output beats a block per output.
constexpr int64_t kMinReducedForBlockPerOutput = 32;

template <typename T, typename Acc>
__global__ void ReduceThreadPerOutput(ReduceOp op, const T* __restrict__ in, T* out, const T* shift, ReduceShape s,
                                      int64_t n_out, int64_t n_reduced) {
  for (int64_t o = GlobalThreadIndex(); o < n_out; o += GlobalThreadCount()) {
    int64_t base = 0;
    ForEachCoordinate(o, s.kept_rank, s.kept_dims, [&](int d, int64_t i) { base += i * s.kept_strides[d]; });
    const Acc sh = shift != nullptr ? Widen(shift[o]) : Acc{};
    Acc acc = Init(op, Acc{});
    for (int64_t r = 0; r < n_reduced; ++r) {
      int64_t offset = base;
      ForEachCoordinate(r, s.reduced_rank, s.reduced_dims,
                        [&](int d, int64_t i) { offset += i * s.reduced_strides[d]; });
      acc = Combine(op, acc, Map(op, Widen(in[offset]), sh));
    }
    Narrow(Finish(op, acc, n_reduced, sh), &out[o]);
  }
}

// One reduction pass; `shift` (LogSumExp's maxima, per output) may be the output itself.
template <typename T, typename Acc>
cudaError_t LaunchPass(ReduceOp op, const T* in, T* out, const T* shift, const ReduceShape& shape, int64_t n_out,
                       int64_t n_reduced, cudaStream_t stream) {
  if (n_reduced < kMinReducedForBlockPerOutput) {
    ReduceThreadPerOutput<T, Acc>
        <<<GridSize(n_out), kBlockSize, 0, stream>>>(op, in, out, shift, shape, n_out, n_reduced);
    return cudaGetLastError();
  }
  const int blocks = static_cast<int>(n_out < kMaxBlocks ? n_out : kMaxBlocks);
  ReduceBlockPerOutput<T, Acc>
      <<<blocks, RowBlockSize(n_reduced), 0, stream>>>(op, in, out, shift, shape, n_out, n_reduced);
  return cudaGetLastError();
}

template <typename T, typename Acc>
cudaError_t Launch(ReduceOp op, const void* in_raw, void* out_raw, const ReduceShape& shape, int64_t n_out,
                   int64_t n_reduced, cudaStream_t stream) {
  const T* in = static_cast<const T*>(in_raw);
  T* out = static_cast<T*>(out_raw);
  if (op != ReduceOp::kLogSumExp) return LaunchPass<T, Acc>(op, in, out, nullptr, shape, n_out, n_reduced, stream);
  if (cudaError_t e = LaunchPass<T, Acc>(ReduceOp::kMax, in, out, nullptr, shape, n_out, n_reduced, stream);
      e != cudaSuccess) {
    return e;
  }
  return LaunchPass<T, Acc>(op, in, out, out, shape, n_out, n_reduced, stream);
}

// One thread per slice x[o, :, i]: its norm, then every element divided by it.
template <typename T>
__global__ void LpNormalizeKernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t n, int64_t inner,
                                  int p) {
  for (int64_t slice = GlobalThreadIndex(); slice < outer * inner; slice += GlobalThreadCount()) {
    const int64_t base = slice / inner * n * inner + slice % inner;
    double norm = 0;
    for (int64_t k = 0; k < n; ++k) {
      const double v = Widen(x[base + k * inner]);
      norm += p == 1 ? fabs(v) : v * v;
    }
    if (p == 2) norm = sqrt(norm);
    for (int64_t k = 0; k < n; ++k) Narrow(norm == 0 ? 0.0 : Widen(x[base + k * inner]) / norm, &y[base + k * inner]);
  }
}

}  // namespace

cudaError_t LpNormalize(ReduceType type, const void* x, void* y, int64_t outer, int64_t n, int64_t inner, int p,
                        cudaStream_t stream) {
  if (outer < 0 || n < 0 || inner < 0 || (p != 1 && p != 2)) return cudaErrorInvalidValue;
  const int64_t slices = outer * inner;
  if (slices == 0 || n == 0) return cudaSuccess;
  auto launch = [&](auto tag) {
    using T = decltype(tag);
    LpNormalizeKernel<<<GridSize(slices), kBlockSize, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), outer,
                                                                   n, inner, p);
    return cudaGetLastError();
  };
  switch (type) {
    case ReduceType::kFloat32: return launch(float{});
    case ReduceType::kFloat16: return launch(__half{});
    case ReduceType::kBFloat16: return launch(__nv_bfloat16{});
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t Reduce(ReduceOp op, ReduceType type, const void* in, void* out, const ReduceShape& shape,
                   cudaStream_t stream) {
  if (shape.kept_rank < 0 || shape.kept_rank > kMaxRank || shape.reduced_rank < 0 || shape.reduced_rank > kMaxRank) {
    return cudaErrorInvalidValue;
  }
  int64_t n_out = 1, n_reduced = 1;
  for (int d = 0; d < shape.kept_rank; ++d) n_out *= shape.kept_dims[d];
  for (int d = 0; d < shape.reduced_rank; ++d) n_reduced *= shape.reduced_dims[d];
  if (n_out < 0 || n_reduced < 0) return cudaErrorInvalidValue;
  const bool integer = type == ReduceType::kInt32 || type == ReduceType::kInt64;
  if (integer && (op == ReduceOp::kLogSum || op == ReduceOp::kLogSumExp)) return cudaErrorInvalidValue;
  if (n_out == 0) return cudaSuccess;
  switch (type) {
    case ReduceType::kFloat32: return Launch<float, double>(op, in, out, shape, n_out, n_reduced, stream);
    case ReduceType::kFloat16: return Launch<__half, double>(op, in, out, shape, n_out, n_reduced, stream);
    case ReduceType::kBFloat16: return Launch<__nv_bfloat16, double>(op, in, out, shape, n_out, n_reduced, stream);
    case ReduceType::kInt32: return Launch<int32_t, int64_t>(op, in, out, shape, n_out, n_reduced, stream);
    case ReduceType::kInt64: return Launch<int64_t, int64_t>(op, in, out, shape, n_out, n_reduced, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace kernels::cuda
