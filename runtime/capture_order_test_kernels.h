// runtime/capture_order_test_kernels.h: kernels for capture_order_test, launched with or without
// programmatic dependent launch (what cuDNN does with some of its kernels).
#ifndef ONNXRUN_RUNTIME_CAPTURE_ORDER_TEST_KERNELS_H_
#define ONNXRUN_RUNTIME_CAPTURE_ORDER_TEST_KERNELS_H_

#include <cuda_runtime_api.h>

namespace exec::capture_testing {

// x[i] += 1 for i < n, after griddepcontrol.wait; `programmatic` sets the launch attribute
// cudaLaunchAttributeProgrammaticStreamSerialization.
cudaError_t LaunchAddOne(float* x, int n, bool programmatic, cudaStream_t stream);

// One thread: lets its dependents launch at once, spins ~100 us, then writes *flag = 1.
cudaError_t LaunchSlowWriter(int* flag, cudaStream_t stream);

// One thread, launched programmatically: copies *flag to *seen before its griddepcontrol.wait (the
// work a PDL kernel may do ahead of the wait, on memory it assumes is its own).
cudaError_t LaunchEarlyReader(const int* flag, int* seen, cudaStream_t stream);

}  // namespace exec::capture_testing

#endif  // ONNXRUN_RUNTIME_CAPTURE_ORDER_TEST_KERNELS_H_
