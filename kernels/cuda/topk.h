// Own CUDA TopK: every slice along the axis sorted by a stable segmented radix sort (CUB) of keys
// made order-preserving, then the k first gathered. The CPU kernel's order exactly
// (kernels/cpu/tensor_select.cc): by value, ties lower index first, NaN above every number, -0 and
// +0 equal. Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_TOPK_H_
#define ONNXRUN_KERNELS_CUDA_TOPK_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/indexing.h"  // ArgElement

namespace kernels::cuda {

// x viewed (dense row-major) as [outer, n, inner]: the slices x[o, :, i].
struct TopKShape {
  int64_t outer = 0, n = 0, inner = 0;
  int64_t k = 0;  // 0 <= k <= n
  bool largest = true;
};

// Bytes of device workspace TopK needs for `shape` with elements of `type` (the sort's keys,
// indices and scratch); 0 when the shape is beyond it (more than 2^31 - 1 elements).
size_t TopKWorkspaceBytes(ArgElement type, const TopKShape& shape);

// values / indices dense row-major [outer, k, inner]: the k first of each slice in order.
// `workspace` holds TopKWorkspaceBytes(type, shape) bytes.
cudaError_t TopK(ArgElement type, const void* x, void* values, int64_t* indices, const TopKShape& shape,
                 void* workspace, size_t workspace_bytes, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_TOPK_H_
