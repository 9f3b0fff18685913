// GatherND, ScatterND and ScatterElements kernels: one thread per moved element, grid-stride loop.
// The add reduction uses atomics (repeated indices accumulate in an unspecified order).
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/scatter.h"

namespace kernels::cuda {
namespace {

// The data offset tuple n starts at, or -1 when one of its indices is out of range.
__device__ __forceinline__ int64_t TupleStart(const int64_t* __restrict__ indices, const TupleShape& s, int64_t n) {
  int64_t offset = (n / s.tuples_per_batch) * s.batch_stride;
  for (int t = 0; t < s.tuple_len; ++t) {
    int64_t k = indices[n * s.tuple_len + t];
    if (k < 0) k += s.dims[t];
    if (k < 0 || k >= s.dims[t]) return -1;
    offset += k * s.strides[t];
  }
  return offset;
}

// Writes `value` to *at, or adds it atomically (T of the add's type) when kAdd.
template <typename T, bool kAdd>
__device__ __forceinline__ void Put(T* at, T value) {
  if constexpr (kAdd) {
    if constexpr (sizeof(T) == 8) {
      atomicAdd(reinterpret_cast<unsigned long long*>(at), static_cast<unsigned long long>(value));  // wraps
    } else {
      atomicAdd(at, value);
    }
  } else {
    *at = value;
  }
}

template <typename T>
__global__ void GatherNDKernel(const T* __restrict__ data, const int64_t* __restrict__ indices, T* __restrict__ out,
                               TupleShape shape, int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    const int64_t start = TupleStart(indices, shape, linear / shape.slice);
    out[linear] = start < 0 ? T{} : data[start + linear % shape.slice];
  }
}

template <typename T, bool kAdd>
__global__ void ScatterNDKernel(const int64_t* __restrict__ indices, const T* __restrict__ updates, T* __restrict__ out,
                                TupleShape shape, int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    const int64_t start = TupleStart(indices, shape, linear / shape.slice);
    if (start >= 0) Put<T, kAdd>(out + start + linear % shape.slice, updates[linear]);
  }
}

template <typename T, typename I, bool kAdd>
__global__ void ScatterElementsKernel(const I* __restrict__ indices, const T* __restrict__ updates, T* __restrict__ out,
                                      GatherElementsShape shape, int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    int64_t at = 0;
    const int64_t offset = ElementOffset(shape, indices, linear, at);
    if (offset >= 0) Put<T, kAdd>(out + offset, updates[at]);
  }
}

// Calls fn with a value of the element type `add` sums, or of the unsigned type `element_bytes`
// wide when there is no reduction, and whether it adds.
template <typename Fn>
cudaError_t DispatchScatter(ScatterAdd add, int element_bytes, Fn&& fn) {
  switch (add) {
    case ScatterAdd::kNone:
      return DispatchElementBytes(element_bytes, [&](auto tag) { return fn(tag, std::false_type{}); });
    case ScatterAdd::kFloat32: return fn(float{}, std::true_type{});
    case ScatterAdd::kFloat16: return fn(__half{}, std::true_type{});
    case ScatterAdd::kInt32: return fn(int32_t{}, std::true_type{});
    case ScatterAdd::kInt64: return fn(int64_t{}, std::true_type{});
  }
  return cudaErrorInvalidValue;
}

bool ValidTuples(const TupleShape& s) {
  return s.tuples >= 0 && s.tuple_len >= 0 && s.tuple_len <= kMaxRank && s.tuples_per_batch >= 1 && s.slice >= 0;
}

}  // namespace

cudaError_t GatherND(const void* data, const int64_t* indices, void* out, const TupleShape& shape, int element_bytes,
                     cudaStream_t stream) {
  if (!ValidTuples(shape)) return cudaErrorInvalidValue;
  const int64_t total = shape.tuples * shape.slice;
  if (total == 0) return cudaSuccess;
  return DispatchElementBytes(element_bytes, [&](auto tag) {
    using T = decltype(tag);
    GatherNDKernel<<<GridSize(total), kBlockSize, 0, stream>>>(static_cast<const T*>(data), indices,
                                                               static_cast<T*>(out), shape, total);
    return cudaGetLastError();
  });
}

cudaError_t ScatterND(const int64_t* indices, const void* updates, void* out, const TupleShape& shape,
                      int element_bytes, ScatterAdd add, cudaStream_t stream) {
  if (!ValidTuples(shape)) return cudaErrorInvalidValue;
  const int64_t total = shape.tuples * shape.slice;
  if (total == 0) return cudaSuccess;
  return DispatchScatter(add, element_bytes, [&](auto tag, auto adds) {
    using T = decltype(tag);
    ScatterNDKernel<T, decltype(adds)::value><<<GridSize(total), kBlockSize, 0, stream>>>(
        indices, static_cast<const T*>(updates), static_cast<T*>(out), shape, total);
    return cudaGetLastError();
  });
}

cudaError_t ScatterElements(const void* indices, bool indices_int64, const void* updates, void* out,
                            const GatherElementsShape& shape, int element_bytes, ScatterAdd add, cudaStream_t stream) {
  if (shape.rank < 1 || shape.rank > kMaxRank || shape.axis < 0 || shape.axis >= shape.rank || shape.axis_dim < 0) {
    return cudaErrorInvalidValue;
  }
  const int64_t total = DenseCount(shape.rank, shape.dims);
  if (total < 0) return cudaErrorInvalidValue;
  if (total == 0) return cudaSuccess;
  return DispatchScatter(add, element_bytes, [&](auto tag, auto adds) {
    using T = decltype(tag);
    constexpr bool kAdd = decltype(adds)::value;
    const T* u = static_cast<const T*>(updates);
    T* o = static_cast<T*>(out);
    if (indices_int64) {
      ScatterElementsKernel<T, int64_t, kAdd>
          <<<GridSize(total), kBlockSize, 0, stream>>>(static_cast<const int64_t*>(indices), u, o, shape, total);
    } else {
      ScatterElementsKernel<T, int32_t, kAdd>
          <<<GridSize(total), kBlockSize, 0, stream>>>(static_cast<const int32_t*>(indices), u, o, shape, total);
    }
    return cudaGetLastError();
  });
}

}  // namespace kernels::cuda
