// Kernels for capture_order_test (see capture_order_test_kernels.h).
#include "runtime/capture_order_test_kernels.h"

namespace exec::capture_testing {
namespace {

__device__ void WaitForPrerequisites() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__global__ void AddOneKernel(float* x, int n) {
  WaitForPrerequisites();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

__global__ void SlowWriterKernel(int* flag) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
  const long long start = clock64();
  while (clock64() - start < 200000) {
  }
  *flag = 1;
}

__global__ void EarlyReaderKernel(const int* flag, int* seen) {
  *seen = *reinterpret_cast<const volatile int*>(flag);
  WaitForPrerequisites();
}

template <typename... Params, typename... Args>
cudaError_t Launch(bool programmatic, cudaStream_t stream, dim3 grid, dim3 block, void (*kernel)(Params...),
                   Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = programmatic ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

}  // namespace

cudaError_t LaunchAddOne(float* x, int n, bool programmatic, cudaStream_t stream) {
  return Launch(programmatic, stream, dim3((n + 255) / 256), dim3(256), AddOneKernel, x, n);
}

cudaError_t LaunchSlowWriter(int* flag, cudaStream_t stream) {
  return Launch(false, stream, dim3(1), dim3(1), SlowWriterKernel, flag);
}

cudaError_t LaunchEarlyReader(const int* flag, int* seen, cudaStream_t stream) {
  return Launch(true, stream, dim3(1), dim3(1), EarlyReaderKernel, flag, seen);
}

}  // namespace exec::capture_testing
