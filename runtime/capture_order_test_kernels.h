// runtime/capture_order_test_kernels.h: a kernel for capture_order_test, launched with or without
// programmatic dependent launch (what cuDNN does with some of its kernels).
#ifndef ONNXRUN_RUNTIME_CAPTURE_ORDER_TEST_KERNELS_H_
#define ONNXRUN_RUNTIME_CAPTURE_ORDER_TEST_KERNELS_H_

#include <cuda_runtime_api.h>

namespace exec::capture_testing {

// x[i] += 1 for i < n, after griddepcontrol.wait; `programmatic` sets the launch attribute
// cudaLaunchAttributeProgrammaticStreamSerialization.
cudaError_t LaunchAddOne(float* x, int n, bool programmatic, cudaStream_t stream);

}  // namespace exec::capture_testing

#endif  // ONNXRUN_RUNTIME_CAPTURE_ORDER_TEST_KERNELS_H_
