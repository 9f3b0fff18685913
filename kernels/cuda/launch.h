// Launch geometry shared by the own CUDA kernels: the device's multiprocessor count, rounded-up
// division, the block size of element-wise kernels, the grid of a grid-stride loop, the block size of one-block-per-row
// kernels, the element count of dims, the dispatch on an element's byte width (the byte-moving
// kernels), and the thread's place in a grid-stride loop. Included by .cu files only (the __device__ helpers need
// nvcc).
#ifndef ONNXRUN_KERNELS_CUDA_LAUNCH_H_
#define ONNXRUN_KERNELS_CUDA_LAUNCH_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kernels::cuda {

// The current device's multiprocessor count (kernels that size their grid to fill the GPU once).
inline cudaError_t DeviceMultiprocessors(int* sms) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  return cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
}

// Threads per block of the one-thread-per-element kernels.
inline constexpr int kBlockSize = 256;
// Grid limit of a grid-stride loop: more work than this many blocks loops.
inline constexpr int64_t kMaxBlocks = 65535;

// a / b rounded up (a >= 0, b > 0).
inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks covering `items` work items of `per_block` each: at least 1, at most kMaxBlocks.
inline int GridSize(int64_t items, int64_t per_block = kBlockSize) {
  const int64_t blocks = CeilDiv(items, per_block);
  return static_cast<int>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

// Threads of a one-block-per-row kernel reducing `row` elements: the smallest power of two >= row,
// clamped to [32, kBlockSize] (a whole warp at least; block reductions need a power of two).
inline int RowBlockSize(int64_t row) {
  int threads = 32;
  while (threads < kBlockSize && threads < row) threads *= 2;
  return threads;
}

// The element count of dims[0, rank), or -1 when a dim is negative.
inline int64_t DenseCount(int rank, const int64_t* dims) {
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] < 0) return -1;
    total *= dims[d];
  }
  return total;
}

// Calls fn with a value of the unsigned type `element_bytes` wide (1, 2, 4 or 8): the kernels that
// move elements without reading them; cudaErrorInvalidValue for another width.
template <typename Fn>
cudaError_t DispatchElementBytes(int element_bytes, Fn&& fn) {
  switch (element_bytes) {
    case 1: return fn(uint8_t{});
    case 2: return fn(uint16_t{});
    case 4: return fn(uint32_t{});
    case 8: return fn(uint64_t{});
    default: return cudaErrorInvalidValue;
  }
}

#ifdef __CUDACC__
// Whether `p` starts a 16-byte vector (what the packed loads and stores need).
__host__ __device__ __forceinline__ bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The first index and the stride of a grid-stride loop over a 1-D index space.
__device__ __forceinline__ int64_t GlobalThreadIndex() {
  return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ int64_t GlobalThreadCount() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Splits the row-major index `linear` over dims[0, rank) into coordinates and calls visit(d, i_d)
// for each, innermost dim first: the one place the kernels turn a linear index into strided
// offsets (each caller accumulates i_d * its operands' strides[d]).
template <typename Index, typename Visit>
__device__ __forceinline__ void ForEachCoordinate(Index linear, int rank, const int64_t* dims, Visit&& visit) {
  for (int d = rank - 1; d >= 0; --d) {
    const Index dim = static_cast<Index>(dims[d]);
    const Index i = linear % dim;
    linear /= dim;
    visit(d, i);
  }
}
#endif  // __CUDACC__

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_LAUNCH_H_
