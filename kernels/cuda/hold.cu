// A kernel that keeps its stream busy for a given time (see hold.h).
#include "kernels/cuda/hold.h"

namespace kernels::cuda {
namespace {

constexpr int64_t kMaxHoldNanoseconds = 100'000'000;

__device__ __forceinline__ uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void HoldKernel(uint64_t nanoseconds) {
  const uint64_t start = GlobalTimerNs();
  while (GlobalTimerNs() - start < nanoseconds) __nanosleep(1000);
}

}  // namespace

cudaError_t HoldStream(int64_t nanoseconds, cudaStream_t stream) {
  if (nanoseconds <= 0) return cudaSuccess;
  if (nanoseconds > kMaxHoldNanoseconds) nanoseconds = kMaxHoldNanoseconds;
  HoldKernel<<<1, 1, 0, stream>>>(static_cast<uint64_t>(nanoseconds));
  return cudaGetLastError();
}

}  // namespace kernels::cuda
