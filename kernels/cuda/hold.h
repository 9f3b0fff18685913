// Holding a stream busy for a while: a one-thread kernel that spins on the GPU's nanosecond timer.
// Plan-time timing (runtime/cuda_run_util.h) queues it before the timed calls, so that the host
// has enqueued all of them before the GPU reaches the first and the events measure GPU time, not
// the host's launch overhead (which for cuDNN's backend API is as long as a small kernel).
// Plain C++ interface (no absl) so nvcc compiles it.
#ifndef ONNXRUN_KERNELS_CUDA_HOLD_H_
#define ONNXRUN_KERNELS_CUDA_HOLD_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kernels::cuda {

// Enqueues a kernel that returns `nanoseconds` after it starts (at most 100 ms; <= 0: none).
cudaError_t HoldStream(int64_t nanoseconds, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_HOLD_H_
