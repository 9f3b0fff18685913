// CumSum / CumProd kernel: one thread per line along the axis, a grid-stride loop over the lines.
#include <cuda_fp16.h>

#include "kernels/cuda/cumsum.h"
#include "kernels/cuda/launch.h"

namespace kernels::cuda {
namespace {

// Storage type T, accumulator Acc (float for half; unsigned for integers, so sums wrap).
template <typename T, typename Acc>
__global__ void CumSumKernel(const T* __restrict__ in, T* __restrict__ out, int64_t outer, int64_t length,
                             int64_t inner, bool exclusive, bool reverse, bool product) {
  const int64_t lines = outer * inner;
  for (int64_t line = GlobalThreadIndex(); line < lines; line += GlobalThreadCount()) {
    const int64_t base = (line / inner) * length * inner + line % inner;
    Acc sum = product ? Acc(1) : Acc(0);
    for (int64_t step = 0; step < length; ++step) {
      const int64_t at = base + (reverse ? length - 1 - step : step) * inner;
      const Acc value = static_cast<Acc>(in[at]);
      const Acc next = product ? static_cast<Acc>(sum * value) : static_cast<Acc>(sum + value);
      if (!exclusive) sum = next;
      out[at] = static_cast<T>(sum);
      if (exclusive) sum = next;
    }
  }
}

template <typename T, typename Acc>
cudaError_t Launch(const void* in, void* out, int64_t outer, int64_t length, int64_t inner, bool exclusive,
                   bool reverse, bool product, cudaStream_t stream) {
  CumSumKernel<T, Acc><<<GridSize(outer * inner), kBlockSize, 0, stream>>>(
      static_cast<const T*>(in), static_cast<T*>(out), outer, length, inner, exclusive, reverse, product);
  return cudaGetLastError();
}

}  // namespace

cudaError_t CumSum(ScanType type, const void* in, void* out, int64_t outer, int64_t length, int64_t inner,
                   bool exclusive, bool reverse, bool product, cudaStream_t stream) {
  if (outer < 0 || length < 0 || inner < 0) return cudaErrorInvalidValue;
  if (outer == 0 || length == 0 || inner == 0) return cudaSuccess;
  switch (type) {
    case ScanType::kFloat32:
      return Launch<float, float>(in, out, outer, length, inner, exclusive, reverse, product, stream);
    case ScanType::kFloat16:
      return Launch<__half, float>(in, out, outer, length, inner, exclusive, reverse, product, stream);
    case ScanType::kFloat64:
      return Launch<double, double>(in, out, outer, length, inner, exclusive, reverse, product, stream);
    case ScanType::kInt32:
      return Launch<int32_t, uint32_t>(in, out, outer, length, inner, exclusive, reverse, product, stream);
    case ScanType::kInt64:
      return Launch<int64_t, uint64_t>(in, out, outer, length, inner, exclusive, reverse, product, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace kernels::cuda
