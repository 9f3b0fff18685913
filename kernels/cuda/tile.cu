// Tile kernel: one thread per output element, grid-stride loop.
#include "kernels/cuda/launch.h"
#include "kernels/cuda/tile.h"

namespace kernels::cuda {
namespace {

template <typename T>
__global__ void TileKernel(const T* __restrict__ in, T* __restrict__ out, TileShape shape, int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    int64_t offset = 0;
    ForEachCoordinate(linear, shape.rank, shape.out_dims,
                      [&](int d, int64_t i) { offset += (i % shape.in_dims[d]) * shape.in_strides[d]; });
    out[linear] = in[offset];
  }
}

template <typename T>
cudaError_t Launch(const void* in, void* out, const TileShape& shape, int64_t total, cudaStream_t stream) {
  TileKernel<T>
      <<<GridSize(total), kBlockSize, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), shape, total);
  return cudaGetLastError();
}

}  // namespace

cudaError_t Tile(const void* in, void* out, const TileShape& shape, int element_bytes, cudaStream_t stream) {
  if (shape.rank < 0 || shape.rank > kMaxRank) return cudaErrorInvalidValue;
  int64_t total = 1;
  for (int d = 0; d < shape.rank; ++d) {
    if (shape.out_dims[d] < 0 || shape.in_dims[d] < 0) return cudaErrorInvalidValue;
    total *= shape.out_dims[d];
  }
  if (total == 0) return cudaSuccess;
  for (int d = 0; d < shape.rank; ++d) {
    if (shape.in_dims[d] == 0) return cudaErrorInvalidValue;  // a non-empty output of an empty input
  }
  return DispatchElementBytes(element_bytes,
                              [&](auto tag) { return Launch<decltype(tag)>(in, out, shape, total, stream); });
}

}  // namespace kernels::cuda
