// Where kernel: one thread per output element, grid-stride loop.
#include "kernels/cuda/launch.h"
#include "kernels/cuda/where.h"

namespace kernels::cuda {
namespace {

template <typename T>
__global__ void WhereKernel(const uint8_t* __restrict__ cond, const T* __restrict__ x, const T* __restrict__ y,
                            T* __restrict__ out, WhereShape shape, int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    int64_t ic = 0, ix = 0, iy = 0;
    ForEachCoordinate(linear, shape.rank, shape.dims, [&](int d, int64_t i) {
      ic += i * shape.cond_strides[d];
      ix += i * shape.x_strides[d];
      iy += i * shape.y_strides[d];
    });
    out[linear] = cond[ic] != 0 ? x[ix] : y[iy];
  }
}

template <typename T>
cudaError_t Launch(const void* cond, const void* x, const void* y, void* out, const WhereShape& shape, int64_t total,
                   cudaStream_t stream) {
  WhereKernel<T><<<GridSize(total), kBlockSize, 0, stream>>>(static_cast<const uint8_t*>(cond),
                                                             static_cast<const T*>(x), static_cast<const T*>(y),
                                                             static_cast<T*>(out), shape, total);
  return cudaGetLastError();
}

}  // namespace

cudaError_t Where(const void* cond, const void* x, const void* y, void* out, const WhereShape& shape, int element_bytes,
                  cudaStream_t stream) {
  if (shape.rank < 0 || shape.rank > kMaxRank) return cudaErrorInvalidValue;
  int64_t total = DenseCount(shape.rank, shape.dims);
  if (total < 0) return cudaErrorInvalidValue;
  if (total == 0) return cudaSuccess;
  return DispatchElementBytes(element_bytes,
                              [&](auto tag) { return Launch<decltype(tag)>(cond, x, y, out, shape, total, stream); });
}

}  // namespace kernels::cuda
