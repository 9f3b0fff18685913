// Own CUDA kernels of index-driven ops: ArgMax / ArgMin along one axis, GatherElements and Trilu.
// Each is one thread per output element (grid-stride loop) and follows the CPU kernel's semantics
// (kernels/cpu reduce_resize.cc, tensor_scatter.cc, tensor_gen.cc). Plain C++ interface (no absl)
// so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_INDEXING_H_
#define ONNXRUN_KERNELS_CUDA_INDEXING_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/strided_copy.h"  // kMaxRank
#ifdef __CUDACC__
#include "kernels/cuda/launch.h"  // ForEachCoordinate
#endif

namespace kernels::cuda {

// Element types ArgExtreme compares.
enum class ArgElement { kFloat32, kFloat16, kBFloat16, kInt8, kUint8, kInt32, kInt64 };

// x viewed (dense row-major) as [outer, n, inner]; out[o * inner + i] = the index along n of the
// maximum (`max`) or minimum of x[o, :, i]: the first such index, or the last with `last`. A NaN
// counts as the extreme and the first NaN wins. n must be >= 1. cudaErrorInvalidValue for bad sizes.
cudaError_t ArgExtreme(ArgElement type, const void* x, int64_t* out, int64_t outer, int64_t n, int64_t inner, bool max,
                       bool last, cudaStream_t stream);

// GatherElements: out is dense row-major over `dims` (the indices' dims);
//   out[i] = data[sum over d != axis of i_d * data_strides[d] + k * data_strides[axis]]
// with k = indices[i . index_strides] (+ axis_dim when negative). An index outside
// [-axis_dim, axis_dim) cannot be reported without synchronising: its element is zero bytes.
struct GatherElementsShape {
  int rank = 0;
  int axis = 0;
  int64_t axis_dim = 0;                 // data's dim along the axis
  int64_t dims[kMaxRank] = {};          // the indices' and the output's
  int64_t data_strides[kMaxRank] = {};  // elements, data's stored layout
  int64_t index_strides[kMaxRank] = {};
};
cudaError_t GatherElements(const void* data, const void* indices, bool indices_int64, void* out,
                           const GatherElementsShape& shape, int element_bytes, cudaStream_t stream);

#ifdef __CUDACC__
// The data offset element `linear` of GatherElements / ScatterElements addresses, with `at` set to
// its offset in indices (and updates); -1 when its index lies outside [-axis_dim, axis_dim).
template <typename I>
__device__ __forceinline__ int64_t ElementOffset(const GatherElementsShape& s, const I* indices, int64_t linear,
                                                 int64_t& at) {
  int64_t base = 0;
  at = 0;
  ForEachCoordinate(linear, s.rank, s.dims, [&](int d, int64_t i) {
    at += i * s.index_strides[d];
    if (d != s.axis) base += i * s.data_strides[d];
  });
  int64_t k = static_cast<int64_t>(indices[at]);
  if (k < 0) k += s.axis_dim;
  return k >= 0 && k < s.axis_dim ? base + k * s.data_strides[s.axis] : -1;
}
#endif  // __CUDACC__

// Trilu over dense row-major [matrices, rows, cols]: keeps element (r, c) where c - r >= k (upper)
// or c - r <= k (lower), zero bytes elsewhere.
cudaError_t Trilu(const void* in, void* out, int64_t matrices, int64_t rows, int64_t cols, int64_t k, bool upper,
                  int element_bytes, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_INDEXING_H_
