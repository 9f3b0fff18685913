// N-d strided copy and fill kernels: one thread per destination element, grid-stride loop.
#include "kernels/cuda/strided_copy.h"

namespace kernels::cuda {
namespace {

template <typename T>
__global__ void StridedCopyKernel(const T* __restrict__ src, T* __restrict__ dst, CopyShape shape,
                                  int64_t total) {
  for (int64_t linear = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; linear < total;
       linear += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = linear, src_offset = 0, dst_offset = 0;
    for (int d = shape.rank - 1; d >= 0; --d) {
      const int64_t i = rest % shape.dims[d];
      rest /= shape.dims[d];
      src_offset += i * shape.src_strides[d];
      dst_offset += i * shape.dst_strides[d];
    }
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

int Blocks(int64_t total) {
  const int64_t blocks = (total + 255) / 256;
  return static_cast<int>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

template <typename T>
cudaError_t LaunchCopy(const void* src, void* dst, const CopyShape& shape, int64_t total, cudaStream_t stream) {
  StridedCopyKernel<T><<<Blocks(total), 256, 0, stream>>>(static_cast<const T*>(src), static_cast<T*>(dst),
                                                          shape, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchFill(void* dst, int64_t count, uint64_t bits, cudaStream_t stream) {
  T value;
  memcpy(&value, &bits, sizeof(T));
  FillKernel<T><<<Blocks(count), 256, 0, stream>>>(static_cast<T*>(dst), count, value);
  return cudaGetLastError();
}

}  // namespace

cudaError_t StridedCopy(const void* src, void* dst, const CopyShape& shape, int element_bytes,
                        cudaStream_t stream) {
  if (shape.rank < 0 || shape.rank > kMaxRank) return cudaErrorInvalidValue;
  int64_t total = 1;
  for (int d = 0; d < shape.rank; ++d) {
    if (shape.dims[d] < 0) return cudaErrorInvalidValue;
    total *= shape.dims[d];
  }
  if (total == 0) return cudaSuccess;
  switch (element_bytes) {
    case 1: return LaunchCopy<uint8_t>(src, dst, shape, total, stream);
    case 2: return LaunchCopy<uint16_t>(src, dst, shape, total, stream);
    case 4: return LaunchCopy<uint32_t>(src, dst, shape, total, stream);
    case 8: return LaunchCopy<uint64_t>(src, dst, shape, total, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t Fill(void* dst, int64_t count, int element_bytes, uint64_t value_bits, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  switch (element_bytes) {
    case 1: return LaunchFill<uint8_t>(dst, count, value_bits, stream);
    case 2: return LaunchFill<uint16_t>(dst, count, value_bits, stream);
    case 4: return LaunchFill<uint32_t>(dst, count, value_bits, stream);
    case 8: return LaunchFill<uint64_t>(dst, count, value_bits, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace kernels::cuda
