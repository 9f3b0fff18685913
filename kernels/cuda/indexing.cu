// ArgMax / ArgMin, GatherElements and Trilu kernels: one thread per output element, grid-stride loop.
#include "kernels/cuda/device_math.h"
#include "kernels/cuda/indexing.h"
#include "kernels/cuda/launch.h"

namespace kernels::cuda {
namespace {

// ---- ArgMax / ArgMin ----

// Values compared as the CPU kernel widens them: 16-bit floats as float, integers as int64.
__device__ __forceinline__ float Widen(float v) { return v; }
__device__ __forceinline__ float Widen(__half v) { return __half2float(v); }
__device__ __forceinline__ float Widen(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
__device__ __forceinline__ int64_t Widen(T v) {
  return static_cast<int64_t>(v);
}
__device__ __forceinline__ bool IsNan(float v) { return isnan(v); }
__device__ __forceinline__ bool IsNan(int64_t) { return false; }

template <typename T, bool kMax>
__global__ void ArgExtremeKernel(const T* __restrict__ x, int64_t* __restrict__ out, int64_t n, int64_t inner,
                                 bool last, int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    const int64_t i = linear % inner, o = linear / inner;
    const T* row = x + o * n * inner + i;
    int64_t best = 0;
    auto best_v = Widen(row[0]);
    for (int64_t k = 1; k < n && !IsNan(best_v); ++k) {
      const auto v = Widen(row[k * inner]);
      if (IsNan(v) || (kMax ? v > best_v : v < best_v) || (last && v == best_v)) {
        best = k;
        best_v = v;
      }
    }
    out[linear] = best;
  }
}

template <typename T>
cudaError_t LaunchArg(const void* x, int64_t* out, int64_t n, int64_t inner, bool max, bool last, int64_t total,
                      cudaStream_t stream) {
  const T* in = static_cast<const T*>(x);
  if (max) {
    ArgExtremeKernel<T, true><<<GridSize(total), kBlockSize, 0, stream>>>(in, out, n, inner, last, total);
  } else {
    ArgExtremeKernel<T, false><<<GridSize(total), kBlockSize, 0, stream>>>(in, out, n, inner, last, total);
  }
  return cudaGetLastError();
}

// ---- GatherElements ----

template <typename T, typename I>
__global__ void GatherElementsKernel(const T* __restrict__ data, const I* __restrict__ indices, T* __restrict__ out,
                                     GatherElementsShape shape, int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    int64_t at = 0;
    const int64_t offset = ElementOffset(shape, indices, linear, at);
    out[linear] = offset >= 0 ? data[offset] : T{};
  }
}

template <typename T>
cudaError_t LaunchGatherElements(const void* data, const void* indices, bool indices_int64, void* out,
                                 const GatherElementsShape& shape, int64_t total, cudaStream_t stream) {
  const T* d = static_cast<const T*>(data);
  T* o = static_cast<T*>(out);
  if (indices_int64) {
    GatherElementsKernel<<<GridSize(total), kBlockSize, 0, stream>>>(d, static_cast<const int64_t*>(indices), o, shape,
                                                                     total);
  } else {
    GatherElementsKernel<<<GridSize(total), kBlockSize, 0, stream>>>(d, static_cast<const int32_t*>(indices), o, shape,
                                                                     total);
  }
  return cudaGetLastError();
}

// ---- Trilu ----

template <typename T>
__global__ void TriluKernel(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int64_t cols, int64_t k,
                            bool upper, int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    const int64_t c = linear % cols, r = (linear / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    out[linear] = keep ? in[linear] : T{};
  }
}

template <typename T>
cudaError_t LaunchTrilu(const void* in, void* out, int64_t rows, int64_t cols, int64_t k, bool upper, int64_t total,
                        cudaStream_t stream) {
  TriluKernel<<<GridSize(total), kBlockSize, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), rows, cols,
                                                          k, upper, total);
  return cudaGetLastError();
}

}  // namespace

cudaError_t ArgExtreme(ArgElement type, const void* x, int64_t* out, int64_t outer, int64_t n, int64_t inner, bool max,
                       bool last, cudaStream_t stream) {
  if (outer < 0 || n < 1 || inner < 0) return cudaErrorInvalidValue;
  const int64_t total = outer * inner;
  if (total == 0) return cudaSuccess;
  switch (type) {
    case ArgElement::kFloat32: return LaunchArg<float>(x, out, n, inner, max, last, total, stream);
    case ArgElement::kFloat16: return LaunchArg<__half>(x, out, n, inner, max, last, total, stream);
    case ArgElement::kBFloat16: return LaunchArg<__nv_bfloat16>(x, out, n, inner, max, last, total, stream);
    case ArgElement::kInt8: return LaunchArg<int8_t>(x, out, n, inner, max, last, total, stream);
    case ArgElement::kUint8: return LaunchArg<uint8_t>(x, out, n, inner, max, last, total, stream);
    case ArgElement::kInt32: return LaunchArg<int32_t>(x, out, n, inner, max, last, total, stream);
    case ArgElement::kInt64: return LaunchArg<int64_t>(x, out, n, inner, max, last, total, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t GatherElements(const void* data, const void* indices, bool indices_int64, void* out,
                           const GatherElementsShape& shape, int element_bytes, cudaStream_t stream) {
  if (shape.rank < 1 || shape.rank > kMaxRank || shape.axis < 0 || shape.axis >= shape.rank || shape.axis_dim < 0) {
    return cudaErrorInvalidValue;
  }
  const int64_t total = DenseCount(shape.rank, shape.dims);
  if (total < 0) return cudaErrorInvalidValue;
  if (total == 0) return cudaSuccess;
  return DispatchElementBytes(element_bytes, [&](auto tag) {
    return LaunchGatherElements<decltype(tag)>(data, indices, indices_int64, out, shape, total, stream);
  });
}

cudaError_t Trilu(const void* in, void* out, int64_t matrices, int64_t rows, int64_t cols, int64_t k, bool upper,
                  int element_bytes, cudaStream_t stream) {
  if (matrices < 0 || rows < 0 || cols < 0) return cudaErrorInvalidValue;
  const int64_t total = matrices * rows * cols;
  if (total == 0) return cudaSuccess;
  return DispatchElementBytes(element_bytes, [&](auto tag) {
    return LaunchTrilu<decltype(tag)>(in, out, rows, cols, k, upper, total, stream);
  });
}

}  // namespace kernels::cuda
