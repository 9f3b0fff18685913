// Gather kernel: one thread per output element, grid-stride loop.
#include "kernels/cuda/gather.h"
#include "kernels/cuda/launch.h"

namespace kernels::cuda {
namespace {

template <typename T, typename I>
__global__ void GatherKernel(const T* __restrict__ data, const I* __restrict__ indices, T* __restrict__ out,
                             int64_t dim, int64_t inner, int64_t count, int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    const int64_t i = linear % inner;
    const int64_t rest = linear / inner;
    const int64_t j = rest % count;
    const int64_t o = rest / count;
    int64_t k = static_cast<int64_t>(indices[j]);
    if (k < 0) k += dim;
    out[linear] = (k >= 0 && k < dim) ? data[(o * dim + k) * inner + i] : T{};
  }
}

template <typename T>
cudaError_t Launch(const void* data, const void* indices, bool indices_int64, void* out, int64_t dim, int64_t inner,
                   int64_t count, int64_t total, cudaStream_t stream) {
  if (indices_int64) {
    GatherKernel<<<GridSize(total), kBlockSize, 0, stream>>>(static_cast<const T*>(data),
                                                             static_cast<const int64_t*>(indices), static_cast<T*>(out),
                                                             dim, inner, count, total);
  } else {
    GatherKernel<<<GridSize(total), kBlockSize, 0, stream>>>(static_cast<const T*>(data),
                                                             static_cast<const int32_t*>(indices), static_cast<T*>(out),
                                                             dim, inner, count, total);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t Gather(const void* data, const void* indices, bool indices_int64, void* out, int64_t outer, int64_t dim,
                   int64_t inner, int64_t count, int element_bytes, cudaStream_t stream) {
  if (outer < 0 || dim < 0 || inner < 0 || count < 0) return cudaErrorInvalidValue;
  const int64_t total = outer * count * inner;
  if (total == 0) return cudaSuccess;
  return DispatchElementBytes(element_bytes, [&](auto tag) {
    return Launch<decltype(tag)>(data, indices, indices_int64, out, dim, inner, count, total, stream);
  });
}

}  // namespace kernels::cuda
