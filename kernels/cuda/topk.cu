// TopK: keys made order-preserving unsigned integers (NaN highest, -0 as +0; complemented for the
// largest first), one stable CUB segmented radix sort of (key, index) pairs per slice, then the
// k first indices and their values gathered from x.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <type_traits>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/topk.h"

namespace kernels::cuda {
namespace {

constexpr size_t kAlign = 256;
size_t Aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Order-preserving keys: unsigned comparison of OrderedKey(a) and OrderedKey(b) is the CPU
// kernel's OrderLess (floats compared in float, NaN above +inf, -0 equal to +0).
__device__ __forceinline__ uint32_t OrderedFloat(float v) {
  if (isnan(v)) return 0xFFFFFFFFu;
  const uint32_t bits = __float_as_uint(v == 0.0f ? 0.0f : v);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}
__device__ __forceinline__ uint32_t OrderedKey(float v) { return OrderedFloat(v); }
__device__ __forceinline__ uint32_t OrderedKey(__half v) { return OrderedFloat(__half2float(v)); }
__device__ __forceinline__ uint32_t OrderedKey(__nv_bfloat16 v) { return OrderedFloat(__bfloat162float(v)); }
__device__ __forceinline__ uint32_t OrderedKey(int8_t v) { return static_cast<uint32_t>(int32_t{v}) ^ 0x80000000u; }
__device__ __forceinline__ uint32_t OrderedKey(uint8_t v) { return static_cast<uint32_t>(v); }
__device__ __forceinline__ uint32_t OrderedKey(int32_t v) { return static_cast<uint32_t>(v) ^ 0x80000000u; }
__device__ __forceinline__ uint64_t OrderedKey(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }

template <typename T>
using KeyOf = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

// The sort's arrays inside the workspace.
template <typename Key>
struct Workspace {
  Key *keys_in = nullptr, *keys_out = nullptr;
  int32_t *index_in = nullptr, *index_out = nullptr;
  int* offsets = nullptr;  // rows + 1 segment bounds
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
};

template <typename Key>
size_t ArraysBytes(int64_t total, int64_t rows) {
  return 2 * Aligned(total * sizeof(Key)) + 2 * Aligned(total * sizeof(int32_t)) + Aligned((rows + 1) * sizeof(int));
}

template <typename Key>
size_t ScratchBytes(int64_t total, int64_t rows) {
  size_t bytes = 0;
  const cudaError_t e = cub::DeviceSegmentedRadixSort::SortPairs(
      nullptr, bytes, static_cast<const Key*>(nullptr), static_cast<Key*>(nullptr),
      static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr), static_cast<int>(total),
      static_cast<int>(rows), static_cast<const int*>(nullptr), static_cast<const int*>(nullptr));
  return e == cudaSuccess ? bytes : 0;
}

template <typename Key>
Workspace<Key> Carve(void* base, int64_t total, int64_t rows, size_t bytes) {
  char* next = static_cast<char*>(base);
  auto take = [&next](size_t size) {
    char* at = next;
    next += Aligned(size);
    return at;
  };
  Workspace<Key> w;
  w.keys_in = reinterpret_cast<Key*>(take(total * sizeof(Key)));
  w.keys_out = reinterpret_cast<Key*>(take(total * sizeof(Key)));
  w.index_in = reinterpret_cast<int32_t*>(take(total * sizeof(int32_t)));
  w.index_out = reinterpret_cast<int32_t*>(take(total * sizeof(int32_t)));
  w.offsets = reinterpret_cast<int*>(take((rows + 1) * sizeof(int)));
  w.scratch = next;
  w.scratch_bytes = bytes - ArraysBytes<Key>(total, rows);
  return w;
}

// Row r = o * inner + i of the sort holds slice x[o, :, i]: keys (complemented for the largest
// first) and positions 0..n-1; offsets[r] = r * n for r in [0, rows].
template <typename T, typename Key>
__global__ void PrepareKernel(const T* __restrict__ x, Workspace<Key> w, TopKShape s, int64_t total, int64_t rows) {
  const int64_t work = total > rows + 1 ? total : rows + 1;
  for (int64_t linear = GlobalThreadIndex(); linear < work; linear += GlobalThreadCount()) {
    if (linear <= rows) w.offsets[linear] = static_cast<int>(linear * s.n);
    if (linear >= total) continue;
    const int64_t r = linear / s.n, j = linear % s.n, o = r / s.inner, i = r % s.inner;
    const Key key = OrderedKey(x[(o * s.n + j) * s.inner + i]);
    w.keys_in[linear] = s.largest ? static_cast<Key>(~key) : key;
    w.index_in[linear] = static_cast<int32_t>(j);
  }
}

// values / indices [outer, k, inner] from the sorted positions.
template <typename T>
__global__ void GatherKernel(const T* __restrict__ x, const int32_t* __restrict__ sorted, T* __restrict__ values,
                             int64_t* __restrict__ indices, TopKShape s, int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    const int64_t i = linear % s.inner, j = (linear / s.inner) % s.k, o = linear / (s.inner * s.k);
    const int64_t at = sorted[(o * s.inner + i) * s.n + j];
    indices[linear] = at;
    values[linear] = x[(o * s.n + at) * s.inner + i];
  }
}

template <typename T>
cudaError_t LaunchTopK(const void* x_raw, void* values, int64_t* indices, const TopKShape& s, void* workspace,
                       size_t bytes, cudaStream_t stream) {
  using Key = KeyOf<T>;
  const T* x = static_cast<const T*>(x_raw);
  const int64_t rows = s.outer * s.inner, total = rows * s.n;
  Workspace<Key> w = Carve<Key>(workspace, total, rows, bytes);
  PrepareKernel<<<GridSize(total > rows + 1 ? total : rows + 1), kBlockSize, 0, stream>>>(x, w, s, total, rows);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (cudaError_t e = cub::DeviceSegmentedRadixSort::SortPairs(
          w.scratch, w.scratch_bytes, w.keys_in, w.keys_out, w.index_in, w.index_out, static_cast<int>(total),
          static_cast<int>(rows), w.offsets, w.offsets + 1, 0, static_cast<int>(sizeof(Key) * 8), stream);
      e != cudaSuccess) {
    return e;
  }
  const int64_t out_total = s.outer * s.k * s.inner;
  GatherKernel<<<GridSize(out_total), kBlockSize, 0, stream>>>(x, w.index_out, static_cast<T*>(values), indices, s,
                                                               out_total);
  return cudaGetLastError();
}

template <typename Fn>
cudaError_t DispatchElement(ArgElement type, Fn&& fn) {
  switch (type) {
    case ArgElement::kFloat32: return fn(float{});
    case ArgElement::kFloat16: return fn(__half{});
    case ArgElement::kBFloat16: return fn(__nv_bfloat16{});
    case ArgElement::kInt8: return fn(int8_t{});
    case ArgElement::kUint8: return fn(uint8_t{});
    case ArgElement::kInt32: return fn(int32_t{});
    case ArgElement::kInt64: return fn(int64_t{});
  }
  return cudaErrorInvalidValue;
}

bool ValidShape(const TopKShape& s) {
  if (s.outer < 0 || s.n < 0 || s.inner < 0 || s.k < 0 || s.k > s.n) return false;
  const int64_t rows = s.inner == 0 ? 0 : s.outer * s.inner;
  return s.inner == 0 || (s.outer <= INT_MAX / s.inner && (s.n == 0 || rows < INT_MAX / s.n));
}

}  // namespace

size_t TopKWorkspaceBytes(ArgElement type, const TopKShape& shape) {
  if (!ValidShape(shape)) return 0;
  const int64_t rows = shape.outer * shape.inner, total = rows * shape.n;
  size_t bytes = 0;
  DispatchElement(type, [&](auto tag) {
    using Key = KeyOf<decltype(tag)>;
    const size_t scratch = ScratchBytes<Key>(total, rows);
    bytes = scratch == 0 && total > 0 ? 0 : ArraysBytes<Key>(total, rows) + scratch;
    return cudaSuccess;
  });
  return bytes;
}

cudaError_t TopK(ArgElement type, const void* x, void* values, int64_t* indices, const TopKShape& shape,
                 void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  if (!ValidShape(shape)) return cudaErrorInvalidValue;
  if (shape.outer * shape.k * shape.inner == 0) return cudaSuccess;
  if (workspace_bytes < TopKWorkspaceBytes(type, shape)) return cudaErrorInvalidValue;
  return DispatchElement(type, [&](auto tag) {
    return LaunchTopK<decltype(tag)>(x, values, indices, shape, workspace, workspace_bytes, stream);
  });
}

}  // namespace kernels::cuda
