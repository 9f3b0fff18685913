// Host-side shape simplification for the N-d kernels: merges adjacent dims that every stride array
// walks contiguously and drops dims of size 1, so a kernel does as few divisions per element as
// the layouts allow (a same-layout binary op becomes 1-D, an NHWC per-channel broadcast 2-D).
#ifndef ONNXRUN_KERNELS_CUDA_SHAPE_COLLAPSE_H_
#define ONNXRUN_KERNELS_CUDA_SHAPE_COLLAPSE_H_

#include <cstdint>

namespace kernels::cuda {

// dims[rank] and `count` stride arrays strides[k][rank] (elements, outermost dim first) are
// rewritten in place; returns the new rank (>= 1). Iteration order and every offset are unchanged.
inline int CollapseDims(int rank, int64_t* dims, int64_t* const* strides, int count) {
  int out = 0;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == 1) continue;
    bool merge = out > 0;
    for (int k = 0; merge && k < count; ++k) merge = strides[k][out - 1] == strides[k][d] * dims[d];
    if (merge) {
      dims[out - 1] *= dims[d];
      for (int k = 0; k < count; ++k) strides[k][out - 1] = strides[k][d];
      continue;
    }
    dims[out] = dims[d];
    for (int k = 0; k < count; ++k) strides[k][out] = strides[k][d];
    ++out;
  }
  if (out == 0) {
    dims[0] = 1;
    for (int k = 0; k < count; ++k) strides[k][0] = 0;
    out = 1;
  }
  return out;
}

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_SHAPE_COLLAPSE_H_
