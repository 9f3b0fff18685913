// Byte-level helpers shared by the tensor-family CPU kernels (every dtype moves as raw bytes):
// contiguous strides, strided gathers into a contiguous output, output shape checks, and the
// kernels implemented in tensor_ops_index.cc (Slice, Gather, Pad).
#ifndef ONNXRUN_KERNELS_CPU_TENSOR_OPS_UTIL_H_
#define ONNXRUN_KERNELS_CPU_TENSOR_OPS_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "ir/tensor.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {

// Row-major strides (in elements) of a shape.
std::vector<int64_t> ContiguousStrides(absl::Span<const int64_t> shape);

// Copies the view of src with the given shape and strides (in elements; negative or zero allowed)
// into dst, contiguously. src points at the view's first element. Contiguous runs use memcpy.
void StridedCopy(void* dst, const void* src, size_t elem_size, absl::Span<const int64_t> shape,
                 absl::Span<const int64_t> src_strides);

// An error unless input i is present.
absl::Status RequireInput(const KernelContext& ctx, size_t i);
// An error unless output i is present with the given dtype and shape.
absl::Status CheckOutput(const KernelContext& ctx, size_t i, ir::DType dtype, absl::Span<const int64_t> shape);

absl::Status SliceKernel(KernelContext& ctx);
absl::Status GatherKernel(KernelContext& ctx);
absl::Status PadKernel(KernelContext& ctx);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_TENSOR_OPS_UTIL_H_
