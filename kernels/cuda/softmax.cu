// Softmax kernels: one block per row when rows are contiguous (inner == 1) or few; otherwise one
// thread per row, so that neighbouring threads read neighbouring elements.
#include <cuda_fp16.h>

#include <cmath>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/softmax.h"

namespace kernels::cuda {
namespace {

// Below this many rows with inner > 1, a block per row still beats a thread per row.
constexpr int64_t kMinRowsForThreadPerRow = 1024;

template <typename T>
__global__ void SoftmaxBlockPerRow(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int64_t n,
                                   int64_t inner, bool log) {
  __shared__ double shared[kBlockSize];
  const auto larger = [](double a, double b) { return fmax(a, b); };
  const auto add = [](double a, double b) { return a + b; };
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = (r / inner) * n * inner + r % inner;
    double max = -INFINITY;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      max = fmax(max, static_cast<double>(ToFloat(in[base + k * inner])));
    }
    max = BlockReduce(max, larger, shared);
    double sum = 0;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      sum += exp(static_cast<double>(ToFloat(in[base + k * inner])) - max);
    }
    sum = BlockReduce(sum, add, shared);
    const double log_sum = ::log(sum);
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      const double v = static_cast<double>(ToFloat(in[base + k * inner])) - max;
      out[base + k * inner] = FromFloat<T>(static_cast<float>(log ? v - log_sum : exp(v - log_sum)));
    }
  }
}

template <typename T>
__global__ void SoftmaxThreadPerRow(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int64_t n,
                                    int64_t inner, bool log) {
  for (int64_t r = GlobalThreadIndex(); r < rows; r += GlobalThreadCount()) {
    const int64_t base = (r / inner) * n * inner + r % inner;
    double max = -INFINITY;
    for (int64_t k = 0; k < n; ++k) max = fmax(max, static_cast<double>(ToFloat(in[base + k * inner])));
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) sum += exp(static_cast<double>(ToFloat(in[base + k * inner])) - max);
    const double log_sum = ::log(sum);
    for (int64_t k = 0; k < n; ++k) {
      const double v = static_cast<double>(ToFloat(in[base + k * inner])) - max;
      out[base + k * inner] = FromFloat<T>(static_cast<float>(log ? v - log_sum : exp(v - log_sum)));
    }
  }
}

template <typename T>
cudaError_t Launch(bool log, const void* in, void* out, int64_t outer, int64_t n, int64_t inner, cudaStream_t stream) {
  const int64_t rows = outer * inner;
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  if (inner == 1 || rows < kMinRowsForThreadPerRow) {
    const int blocks = static_cast<int>(rows < kMaxBlocks ? rows : kMaxBlocks);
    SoftmaxBlockPerRow<T><<<blocks, RowBlockSize(n), 0, stream>>>(x, y, rows, n, inner, log);
  } else {
    SoftmaxThreadPerRow<T><<<GridSize(rows), kBlockSize, 0, stream>>>(x, y, rows, n, inner, log);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t Softmax(FloatType type, bool log, const void* in, void* out, int64_t outer, int64_t n, int64_t inner,
                    cudaStream_t stream) {
  if (outer < 0 || n < 0 || inner < 0) return cudaErrorInvalidValue;
  if (outer == 0 || n == 0 || inner == 0) return cudaSuccess;
  return DispatchFloatType(type,
                           [&](auto tag) { return Launch<decltype(tag)>(log, in, out, outer, n, inner, stream); });
}

}  // namespace kernels::cuda
