// OneHot and EyeLike kernels (see indicator.h): one thread per output element, a grid-stride loop.
#include "kernels/cuda/indicator.h"
#include "kernels/cuda/launch.h"

namespace kernels::cuda {
namespace {

template <typename I>
__device__ double IndexAsDouble(const I* indices, int64_t at) {
  return static_cast<double>(indices[at]);
}

// U: the unsigned integer of the element's size.
template <typename I, typename U>
__global__ void OneHotKernel(const I* __restrict__ indices, int64_t outer, int64_t depth, int64_t inner,
                             const U* __restrict__ values, U* __restrict__ out) {
  const int64_t total = outer * depth * inner;
  const U off = values[0], on = values[1];
  const double d = static_cast<double>(depth);
  for (int64_t e = GlobalThreadIndex(); e < total; e += GlobalThreadCount()) {
    const int64_t within = e % inner, k = (e / inner) % depth, o = e / (inner * depth);
    const double v = IndexAsDouble(indices, o * inner + within);
    bool hit = false;
    if (v >= -d && v < d) {  // false for NaN
      int64_t index = static_cast<int64_t>(v);
      if (index < 0) index += depth;
      hit = index == k;
    }
    out[e] = hit ? on : off;
  }
}

template <typename U>
__global__ void EyeLikeKernel(int64_t rows, int64_t cols, int64_t k, U one, U* __restrict__ out) {
  for (int64_t e = GlobalThreadIndex(); e < rows * cols; e += GlobalThreadCount()) {
    out[e] = e % cols - e / cols == k ? one : U{0};
  }
}

template <typename U>
cudaError_t LaunchOneHot(OneHotIndexType type, const void* indices, int64_t outer, int64_t depth, int64_t inner,
                         const void* values, void* out, cudaStream_t stream) {
  const unsigned grid = GridSize(outer * depth * inner);
  const auto* v = static_cast<const U*>(values);
  auto* o = static_cast<U*>(out);
  switch (type) {
    case OneHotIndexType::kInt32:
      OneHotKernel<<<grid, kBlockSize, 0, stream>>>(static_cast<const int32_t*>(indices), outer, depth, inner, v, o);
      break;
    case OneHotIndexType::kInt64:
      OneHotKernel<<<grid, kBlockSize, 0, stream>>>(static_cast<const int64_t*>(indices), outer, depth, inner, v, o);
      break;
    case OneHotIndexType::kFloat32:
      OneHotKernel<<<grid, kBlockSize, 0, stream>>>(static_cast<const float*>(indices), outer, depth, inner, v, o);
      break;
    case OneHotIndexType::kFloat64:
      OneHotKernel<<<grid, kBlockSize, 0, stream>>>(static_cast<const double*>(indices), outer, depth, inner, v, o);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t OneHot(OneHotIndexType type, const void* indices, int64_t outer, int64_t depth, int64_t inner,
                   const void* values, int element_bytes, void* out, cudaStream_t stream) {
  if (outer < 0 || depth < 1 || inner < 0) return cudaErrorInvalidValue;
  if (outer == 0 || inner == 0) return cudaSuccess;
  switch (element_bytes) {
    case 1: return LaunchOneHot<uint8_t>(type, indices, outer, depth, inner, values, out, stream);
    case 2: return LaunchOneHot<uint16_t>(type, indices, outer, depth, inner, values, out, stream);
    case 4: return LaunchOneHot<uint32_t>(type, indices, outer, depth, inner, values, out, stream);
    case 8: return LaunchOneHot<uint64_t>(type, indices, outer, depth, inner, values, out, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t EyeLike(int64_t rows, int64_t cols, int64_t k, uint64_t one_bits, int element_bytes, void* out,
                    cudaStream_t stream) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  const unsigned grid = GridSize(rows * cols);
  switch (element_bytes) {
    case 1:
      EyeLikeKernel<<<grid, kBlockSize, 0, stream>>>(rows, cols, k, uint8_t(one_bits), static_cast<uint8_t*>(out));
      break;
    case 2:
      EyeLikeKernel<<<grid, kBlockSize, 0, stream>>>(rows, cols, k, uint16_t(one_bits), static_cast<uint16_t*>(out));
      break;
    case 4:
      EyeLikeKernel<<<grid, kBlockSize, 0, stream>>>(rows, cols, k, uint32_t(one_bits), static_cast<uint32_t*>(out));
      break;
    case 8: EyeLikeKernel<<<grid, kBlockSize, 0, stream>>>(rows, cols, k, one_bits, static_cast<uint64_t*>(out)); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace kernels::cuda
