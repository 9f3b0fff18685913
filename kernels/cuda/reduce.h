// Own CUDA kernel: reductions (Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp) over any set of axes of
// a tensor of rank <= kMaxRank read through strides (any stored layout), in float32, float16 (accumulated in double,
// like the host reference), int32 or int64 (accumulated in int64, wrapping). Plain C++ interface (no absl) so nvcc
// compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_REDUCE_H_
#define ONNXRUN_KERNELS_CUDA_REDUCE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/strided_copy.h"

namespace kernels::cuda {

enum class ReduceOp { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };
enum class ReduceType { kFloat32, kFloat16, kBFloat16, kInt32, kInt64 };

// The input's dims split into kept and reduced ones, each with the input's element strides. The
// output is dense row-major over the kept dims (keepdims only inserts 1s, which change nothing).
struct ReduceShape {
  int kept_rank = 0;
  int64_t kept_dims[kMaxRank] = {};
  int64_t kept_strides[kMaxRank] = {};
  int reduced_rank = 0;
  int64_t reduced_dims[kMaxRank] = {};
  int64_t reduced_strides[kMaxRank] = {};
};

// One output per kept index. Max/Min propagate NaN; Mean of nothing is NaN (0 for integers);
// L1 = sum of |x|, L2 = sqrt(sum of squares), SumSquare = sum of squares, LogSum = log(sum),
// LogSumExp = m + log(sum of exp(x - m)) with m the maximum (a pass of its own, written to `out`
// first; an infinite m is the result, as the host kernel gives). LogSum and LogSumExp take floats
// only: integers give cudaErrorInvalidValue. Returns cudaErrorInvalidValue for a bad rank.
cudaError_t Reduce(ReduceOp op, ReduceType type, const void* in, void* out, const ReduceShape& shape,
                   cudaStream_t stream);

// LpNormalization: x viewed (dense row-major) as [outer, n, inner]; y = x / ||x[o, :, i]||_p for
// p 1 or 2 (the norm in double; a zero norm gives 0, as the host kernel). Float types only.
cudaError_t LpNormalize(ReduceType type, const void* x, void* y, int64_t outer, int64_t n, int64_t inner, int p,
                        cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_REDUCE_H_
