// Own CUDA kernels of the index-tuple and element scatter ops: GatherND, ScatterND and
// ScatterElements (reduction none or add). One thread per moved element (grid-stride loop),
// following the CPU kernels' semantics (kernels/cpu/tensor_scatter.cc); an index out of range
// cannot be reported without synchronising, so its element reads zero bytes (GatherND) or is
// skipped (the scatters). Repeated indices without a reduction leave one of their updates (ONNX
// leaves which undefined; the CPU kernel keeps the last). Plain C++ interface (no absl) so nvcc compiles it; callers
// turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_SCATTER_H_
#define ONNXRUN_KERNELS_CUDA_SCATTER_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/indexing.h"      // GatherElementsShape
#include "kernels/cuda/strided_copy.h"  // kMaxRank

namespace kernels::cuda {

// Index tuples of length `tuple_len` (int64, dense) addressing slices of `slice` elements in a dense
// data tensor: tuple n starts at (n / tuples_per_batch) * batch_stride + sum_t k_t * strides[t],
// k_t = indices[n * tuple_len + t] (+ dims[t] when negative). GatherND's batch dims make
// tuples_per_batch and batch_stride; ScatterND has none (tuples_per_batch = tuples).
struct TupleShape {
  int64_t tuples = 0;
  int tuple_len = 0;  // at most kMaxRank
  int64_t tuples_per_batch = 1;
  int64_t batch_stride = 0;
  int64_t slice = 1;
  int64_t dims[kMaxRank] = {};     // data dims the tuple indexes
  int64_t strides[kMaxRank] = {};  // their dense strides (elements)
};

// out[n * slice + j] = data[start(n) + j].
cudaError_t GatherND(const void* data, const int64_t* indices, void* out, const TupleShape& shape, int element_bytes,
                     cudaStream_t stream);

// Element types the scatters' add reduction sums (atomically, so repeated indices accumulate).
enum class ScatterAdd { kNone, kFloat32, kFloat16, kInt32, kInt64 };

// out (already a copy of data): out[start(n) + j] = updates[n * slice + j], or += with `add`.
cudaError_t ScatterND(const int64_t* indices, const void* updates, void* out, const TupleShape& shape,
                      int element_bytes, ScatterAdd add, cudaStream_t stream);

// out (already a copy of data, dense, strides shape.data_strides): for every element i of the
// dense indices / updates (dims shape.dims, strides shape.index_strides)
//   out[sum over d != axis of i_d * data_strides[d] + k * data_strides[axis]] = updates[i] (or +=).
cudaError_t ScatterElements(const void* indices, bool indices_int64, const void* updates, void* out,
                            const GatherElementsShape& shape, int element_bytes, ScatterAdd add, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_SCATTER_H_
