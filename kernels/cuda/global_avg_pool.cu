// GlobalAvgPoolNhwc (global_avg_pool.h): a block owns up to 256 channel vectors of one image and one
// slice of its rows (fewer vectors, down to 8, when the grid would leave most multiprocessors idle);
// its threads split the slice's rows into groups, sum along them, and reduce the groups in shared
// memory. Vectors are 16 bytes when c allows (8 16-bit or 4 float32 channels).
#include <algorithm>
#include <cstdint>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/global_avg_pool.h"
#include "kernels/cuda/launch.h"

namespace kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMinRowsPerSlice = 64;
constexpr int kTargetBlocks = 2 * 132;  // about two blocks per multiprocessor of an H100/H200
constexpr int kMinVectorsPerBlock = 8;  // 128 contiguous bytes of a row in float16

// Channel vectors per block: all of them up to kThreads, halved (down to kMinVectorsPerBlock) while
// the grid has fewer than kTargetBlocks blocks, so that more row groups share each image's rows
// (resnet50's pool at batch 1, 2048 channels in one block, read its 49 rows one after another).
int VectorsPerBlock(int vectors, int64_t n, int splits) {
  int per_block = std::min(vectors, kThreads);
  while (per_block > kMinVectorsPerBlock && n * splits * CeilDiv(vectors, per_block) < kTargetBlocks) {
    per_block = std::max(kMinVectorsPerBlock, (per_block + 1) / 2);
  }
  return per_block;
}

// Blocks: x = groups of up to 256 channel vectors, y = image, z = row slice. Writes the mean to y
// (one slice) or the slice's sum to scratch[z][n][c].
template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
    SumRowsKernel(const T* __restrict__ x, T* __restrict__ y, float* __restrict__ scratch, int64_t hw, int c,
                  int64_t rows_per_slice, int per_block, float scale) {
  __shared__ float partial[kThreads * V];
  const int vectors = c / V;
  const int groups = kThreads / per_block;
  const int t = threadIdx.x, cv = blockIdx.x * per_block + t % per_block, group = t / per_block;
  const int64_t n = blockIdx.y;
  const int64_t begin = blockIdx.z * rows_per_slice, end = min(hw, begin + rows_per_slice);
  float acc[V] = {};
  if (group < groups && cv < vectors) {
    const T* base = x + n * hw * c + static_cast<int64_t>(cv) * V;
#pragma unroll 4
    for (int64_t r = begin + group; r < end; r += groups) {
      const Pack<T, V> v = *reinterpret_cast<const Pack<T, V>*>(base + r * c);
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] += ToFloat(v.v[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < V; ++j) partial[t * V + j] = acc[j];
  __syncthreads();
  if (group != 0 || cv >= vectors) return;
  for (int g = 1; g < groups; ++g) {
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] += partial[(g * per_block + t) * V + j];
  }
  if (gridDim.z == 1) {
    Pack<T, V> out;
#pragma unroll
    for (int j = 0; j < V; ++j) out.v[j] = FromFloat<T>(acc[j] * scale);
    *reinterpret_cast<Pack<T, V>*>(y + n * c + static_cast<int64_t>(cv) * V) = out;
  } else {
    float* dst = scratch + (blockIdx.z * gridDim.y + n) * c + static_cast<int64_t>(cv) * V;
#pragma unroll
    for (int j = 0; j < V; ++j) dst[j] = acc[j];
  }
}

// y[i] = scale * sum over slices of scratch[s][i], for i < n * c.
template <typename T>
__global__ void AddSlicesKernel(const float* __restrict__ scratch, T* __restrict__ y, int64_t count, int splits,
                                float scale) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float sum = 0;
    for (int s = 0; s < splits; ++s) sum += scratch[s * count + i];
    y[i] = FromFloat<T>(sum * scale);
  }
}

template <typename T, int V>
cudaError_t LaunchSum(const void* x, void* y, int64_t n, int64_t hw, int64_t c, float* scratch, int splits,
                      cudaStream_t stream) {
  const int vectors = static_cast<int>(c / V);
  const int per_block = VectorsPerBlock(vectors, n, splits);
  const dim3 grid(CeilDiv(vectors, per_block), static_cast<unsigned>(n), splits);
  const int64_t rows_per_slice = (hw + splits - 1) / splits;
  const float scale = 1.0f / static_cast<float>(hw);
  SumRowsKernel<T, V><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), scratch, hw,
                                                     static_cast<int>(c), rows_per_slice, per_block, scale);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess || splits == 1) return e;
  const int64_t count = n * c;
  const int blocks = static_cast<int>(std::min<int64_t>((count + kThreads - 1) / kThreads, 4096));
  AddSlicesKernel<T><<<blocks, kThreads, 0, stream>>>(scratch, static_cast<T*>(y), count, splits, scale);
  return cudaGetLastError();
}

}  // namespace

cudaError_t GlobalAvgPoolFromSums(FloatType type, const float* sums, void* y, int64_t count, int64_t hw,
                                  cudaStream_t stream) {
  if (count < 1 || hw < 1 || sums == nullptr || y == nullptr) return cudaErrorInvalidValue;
  const int blocks = static_cast<int>(std::min<int64_t>((count + kThreads - 1) / kThreads, 4096));
  const float scale = 1.0f / static_cast<float>(hw);
  return DispatchFloatType(type, [&](auto element) {
    using T = decltype(element);
    AddSlicesKernel<T><<<blocks, kThreads, 0, stream>>>(sums, static_cast<T*>(y), count, 1, scale);
    return cudaGetLastError();
  });
}

int GlobalAvgPoolSplits(int64_t n, int64_t hw, int64_t c) {
  const int64_t blocks = n * ((c + kThreads - 1) / kThreads);
  if (blocks >= kTargetBlocks || hw < 2 * kMinRowsPerSlice) return 1;
  const int64_t by_blocks = (kTargetBlocks + blocks - 1) / blocks, by_rows = hw / kMinRowsPerSlice;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({by_blocks, by_rows, 64})));
}

cudaError_t GlobalAvgPoolNhwc(FloatType type, const void* x, void* y, int64_t n, int64_t hw, int64_t c, float* scratch,
                              int splits, cudaStream_t stream) {
  if (n < 1 || hw < 1 || c < 1 || n >= (1 << 16) || splits < 1 || splits > 65535 || c >= (int64_t{1} << 30) ||
      (splits > 1 && scratch == nullptr)) {
    return cudaErrorInvalidValue;
  }
  return DispatchFloatType(type, [&](auto element) {
    using T = decltype(element);
    constexpr int kVector = 16 / sizeof(T);
    const bool vectors = c % kVector == 0 && Aligned16(x) && Aligned16(y);
    return vectors ? LaunchSum<T, kVector>(x, y, n, hw, c, scratch, splits, stream)
                   : LaunchSum<T, 1>(x, y, n, hw, c, scratch, splits, stream);
  });
}

}  // namespace kernels::cuda
