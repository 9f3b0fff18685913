// N-d strided copy and fill kernels: one thread per destination element,
// grid-stride loop.
#include "kernels/cuda/launch.h"
#include "kernels/cuda/shape_collapse.h"
#include "kernels/cuda/strided_copy.h"

namespace kernels::cuda {
namespace {

// Index: int32_t when every offset fits (integer division is several times
// cheaper), else int64_t.
template <typename T, typename Index>
__global__ void StridedCopyKernel(const T* __restrict__ src, T* __restrict__ dst, CopyShape shape, Index total) {
  for (Index linear = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; linear < total;
       linear += static_cast<Index>(gridDim.x) * blockDim.x) {
    Index src_offset = 0, dst_offset = 0;
    ForEachCoordinate(linear, shape.rank, shape.dims, [&](int d, Index i) {
      src_offset += i * static_cast<Index>(shape.src_strides[d]);
      dst_offset += i * static_cast<Index>(shape.dst_strides[d]);
    });
    dst[dst_offset] = src[src_offset];
  }
}

template <typename T>
__global__ void FillKernel(T* dst, int64_t count, T value) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = value;
  }
}

// Offsets fit in int32 when both extents do (the margin keeps the grid-stride
// increment from overflowing).
bool FitsInt32(const CopyShape& shape, int64_t total) {
  int64_t src_extent = 1, dst_extent = 1;
  for (int d = 0; d < shape.rank; ++d) {
    src_extent += (shape.dims[d] - 1) * (shape.src_strides[d] < 0 ? -shape.src_strides[d] : shape.src_strides[d]);
    dst_extent += (shape.dims[d] - 1) * (shape.dst_strides[d] < 0 ? -shape.dst_strides[d] : shape.dst_strides[d]);
  }
  const int64_t limit = int64_t{1} << 30;
  return total < limit && src_extent < limit && dst_extent < limit;
}

template <typename T>
cudaError_t LaunchCopy(const void* src, void* dst, const CopyShape& shape, int64_t total, cudaStream_t stream) {
  if (FitsInt32(shape, total)) {
    StridedCopyKernel<T, int32_t><<<GridSize(total), kBlockSize, 0, stream>>>(
        static_cast<const T*>(src), static_cast<T*>(dst), shape, static_cast<int32_t>(total));
  } else {
    StridedCopyKernel<T, int64_t>
        <<<GridSize(total), kBlockSize, 0, stream>>>(static_cast<const T*>(src), static_cast<T*>(dst), shape, total);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchFill(void* dst, int64_t count, uint64_t bits, cudaStream_t stream) {
  T value;
  memcpy(&value, &bits, sizeof(T));
  FillKernel<T><<<GridSize(count), kBlockSize, 0, stream>>>(static_cast<T*>(dst), count, value);
  return cudaGetLastError();
}

// The widest element (up to 16 bytes) the copy can move at once: the innermost dim is contiguous
// on both sides, and its length, every other stride and both pointers are multiples of it. The
// shape is rewritten for that element; returns its size in bytes.
int WidenElements(const void* src, void* dst, CopyShape& shape, int element_bytes) {
  const int last = shape.rank - 1;
  if (shape.src_strides[last] != 1 || shape.dst_strides[last] != 1) return element_bytes;
  int k = 16 / element_bytes;
  auto fits = [&](int64_t factor) {
    if (shape.dims[last] % factor != 0) return false;
    if (reinterpret_cast<uintptr_t>(src) % (factor * element_bytes) != 0) return false;
    if (reinterpret_cast<uintptr_t>(dst) % (factor * element_bytes) != 0) return false;
    for (int d = 0; d < last; ++d) {
      if (shape.src_strides[d] % factor != 0 || shape.dst_strides[d] % factor != 0) return false;
    }
    return true;
  };
  while (k > 1 && !fits(k)) k /= 2;
  if (k <= 1) return element_bytes;
  shape.dims[last] /= k;
  for (int d = 0; d < last; ++d) {
    shape.src_strides[d] /= k;
    shape.dst_strides[d] /= k;
  }
  return element_bytes * k;
}

}  // namespace

cudaError_t StridedCopy(const void* src, void* dst, const CopyShape& shape, int element_bytes, cudaStream_t stream) {
  if (shape.rank < 0 || shape.rank > kMaxRank) return cudaErrorInvalidValue;
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 && element_bytes != 8) {
    return cudaErrorInvalidValue;
  }
  int64_t total = DenseCount(shape.rank, shape.dims);
  if (total < 0) return cudaErrorInvalidValue;
  if (total == 0) return cudaSuccess;
  CopyShape collapsed = shape;
  int64_t* strides[] = {collapsed.src_strides, collapsed.dst_strides};
  collapsed.rank = CollapseDims(shape.rank, collapsed.dims, strides, 2);
  const int wide_bytes = WidenElements(src, dst, collapsed, element_bytes);
  total /= wide_bytes / element_bytes;
  switch (wide_bytes) {
    case 1: return LaunchCopy<uint8_t>(src, dst, collapsed, total, stream);
    case 2: return LaunchCopy<uint16_t>(src, dst, collapsed, total, stream);
    case 4: return LaunchCopy<uint32_t>(src, dst, collapsed, total, stream);
    case 8: return LaunchCopy<uint64_t>(src, dst, collapsed, total, stream);
    case 16: return LaunchCopy<uint4>(src, dst, collapsed, total, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t Fill(void* dst, int64_t count, int element_bytes, uint64_t value_bits, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  return DispatchElementBytes(element_bytes,
                              [&](auto tag) { return LaunchFill<decltype(tag)>(dst, count, value_bits, stream); });
}

}  // namespace kernels::cuda
