// Own CUDA kernels with a bool output (one byte, 0 or 1): the comparisons Equal, Greater,
// GreaterOrEqual, Less, LessOrEqual and the logic And, Or, Xor with numpy broadcasting of both
// operands, and the one-operand Not, IsNaN, IsInf. Operands are read through strides in the output's
// index space (kernels/cuda/broadcast.h), so stored layouts and broadcasting need no copies.
// Float16 compares through float (exact); NaN compares false (so NaN == NaN is false). Plain C++
// interface (no absl) so nvcc compiles it.
#ifndef ONNXRUN_KERNELS_CUDA_COMPARE_H_
#define ONNXRUN_KERNELS_CUDA_COMPARE_H_

#include <cuda_runtime_api.h>

#include "kernels/cuda/broadcast.h"

namespace kernels::cuda {

// And, Or, Xor read any nonzero element as true.
enum class CompareOp { kEqual, kGreater, kGreaterOrEqual, kLess, kLessOrEqual, kAnd, kOr, kXor };

// out[i] = op(a[i . a_strides], b[i . b_strides]) for a and b of one element type; out is bool.
// cudaErrorInvalidValue for a bad shape or type.
cudaError_t Compare(CompareOp op, ElementType type, const void* a, const void* b, void* out,
                    const BroadcastShape& shape, cudaStream_t stream);

// kNot: x == 0 (any type, meant for bool); kIsNaN: x is NaN; kIsInf: x is an infinity that the
// flags count (float32 and float16 only).
enum class PredicateOp { kNot, kIsNaN, kIsInf };
struct PredicateParams {
  bool detect_negative = true;  // kIsInf: -inf counts
  bool detect_positive = true;  // kIsInf: +inf counts
};

// out[i] = op(x[i . a_strides]) (b_strides unused); out is bool. cudaErrorInvalidValue for a bad
// shape or type.
cudaError_t Predicate(PredicateOp op, PredicateParams params, ElementType type, const void* x, void* out,
                      const BroadcastShape& shape, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_COMPARE_H_
