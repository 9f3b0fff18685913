// A kernel for capture_order_test (see capture_order_test_kernels.h).
#include "runtime/capture_order_test_kernels.h"

namespace exec::capture_testing {
namespace {

__global__ void AddOneKernel(float* x, int n) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

}  // namespace

cudaError_t LaunchAddOne(float* x, int n, bool programmatic, cudaStream_t stream) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3((n + 255) / 256);
  config.blockDim = dim3(256);
  config.stream = stream;
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = programmatic ? 1 : 0;
  return cudaLaunchKernelEx(&config, AddOneKernel, x, n);
}

}  // namespace exec::capture_testing
