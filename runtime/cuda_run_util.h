// Small helpers shared by the CUDA run loop (cuda_executor_run.cc) and the execution contexts
// (cuda_contexts.cc) and plan timing (plan_builder.cc, cuda_measured_choice.cc): the key that names
// a set of input dims, CUDA errors as Status, event timing, the current device; and what the
// cuBLASLt steps (cuda_steps_fused.cc, cuda_steps_scaled_conv.cc) ask of a tensor.
#ifndef ONNXRUN_RUNTIME_CUDA_RUN_UTIL_H_
#define ONNXRUN_RUNTIME_CUDA_RUN_UTIL_H_

#include <cuda_runtime_api.h>
#include <library_types.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "kernels/cuda/hold.h"
#include "runtime/device_tensor.h"

namespace exec {

// Runs with the same key have the same dtypes and dims everywhere (plans are keyed the same way).
inline void AppendInputKey(ir::DType dtype, const std::vector<int64_t>& dims, std::string& key) {
  absl::StrAppend(&key, ir::DTypeName(dtype), ir::ShapeToString(dims), ";");
}
inline std::string InputKey(const std::vector<ir::Tensor>& inputs) {
  std::string key;
  for (const ir::Tensor& t : inputs) AppendInputKey(t.dtype(), t.shape(), key);
  return key;
}

// cuBLASLt's type for float16, bfloat16 or float32 storage; nullopt for other dtypes.
inline std::optional<cudaDataType_t> LtDataType(ir::DType d) {
  if (d == ir::DType::kFloat16) return CUDA_R_16F;
  if (d == ir::DType::kBFloat16) return CUDA_R_16BF;
  if (d == ir::DType::kFloat32) return CUDA_R_32F;
  return std::nullopt;
}

// Whether `p` starts a 16-byte vector (cuBLASLt's and the own packed kernels' alignment; a
// caller's buffer may start anywhere).
inline bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// OK for cudaSuccess, else the error naming the call.
inline absl::Status CudaOk(cudaError_t error, const char* call) {
  return error == cudaSuccess ? absl::OkStatus() : CudaStatus(error, call);
}

// Elapsed GPU time between two recorded events (the stream must have passed `end`); -1 if unknown.
inline double ElapsedMs(cudaEvent_t start, cudaEvent_t end) {
  float ms = 0;
  return cudaEventElapsedTime(&ms, start, end) == cudaSuccess ? ms : -1.0;
}

// How long to hold the stream before timed calls: twice the host time of enqueuing them all (one
// call took `host_ns`), at least 20 us, at most 5 ms (a call that waits for the GPU is not sped up
// by a longer hold).
inline int64_t HoldNanoseconds(int64_t host_ns, int runs) {
  return std::clamp<int64_t>(2 * runs * host_ns, 20'000, 5'000'000);
}

// Mean GPU time in ms of `runs` calls of `run` on `stream`, after two untimed calls (the second
// sizes the hold). The stream is held busy (kernels/cuda/hold.h) while the host enqueues the timed
// calls, so the events measure the GPU's work back to back, not the host's launch overhead. The
// first failing call's status, or Internal when the time cannot be read.
inline absl::StatusOr<double> TimeGpuMs(const std::function<absl::Status()>& run, cudaStream_t stream, int runs) {
  absl::Status status = run();
  if (!status.ok()) return status;
  const auto before = std::chrono::steady_clock::now();
  status = run();
  if (!status.ok()) return status;
  const int64_t host_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - before).count();
  cudaEvent_t start = nullptr, end = nullptr;
  status = CudaOk(cudaEventCreate(&start), "cudaEventCreate");
  if (status.ok()) status = CudaOk(cudaEventCreate(&end), "cudaEventCreate");
  if (status.ok()) status = CudaOk(kernels::cuda::HoldStream(HoldNanoseconds(host_ns, runs), stream), "HoldStream");
  if (status.ok()) status = CudaOk(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int i = 0; i < runs && status.ok(); ++i) status = run();
  if (status.ok()) status = CudaOk(cudaEventRecord(end, stream), "cudaEventRecord");
  if (status.ok()) status = CudaOk(cudaEventSynchronize(end), "cudaEventSynchronize");
  const double ms = status.ok() ? ElapsedMs(start, end) / runs : -1;
  if (start != nullptr) cudaEventDestroy(start);
  if (end != nullptr) cudaEventDestroy(end);
  if (!status.ok()) return status;
  if (ms < 0) return absl::InternalError("the GPU time could not be read");
  return ms;
}

// TimeGpuMs of one step's form, each call first dropping the step's `outputs` from `values` (the
// call before's), so that the step never holds its outputs twice while timed (at batch 256 a
// stem's output is 400 MB). The caller drops them again after the last candidate.
inline absl::StatusOr<double> TimeStepFormGpuMs(const std::function<absl::Status()>& run,
                                                const std::vector<ir::ValueId>& outputs,
                                                std::vector<DeviceTensor>& values, cudaStream_t stream, int runs) {
  return TimeGpuMs(
      [&] {
        for (ir::ValueId out : outputs) values[out] = DeviceTensor();
        return run();
      },
      stream, runs);
}

// Makes `device_id` current for its lifetime and restores the caller's device after (a caller on
// another GPU — torch, CuPy — keeps its device).
class DeviceScope {
 public:
  explicit DeviceScope(int device_id) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    error_ = previous_ == device_id ? cudaSuccess : cudaSetDevice(device_id);
  }
  ~DeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  cudaError_t error() const { return error_; }

 private:
  int previous_ = -1;
  cudaError_t error_ = cudaSuccess;
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CUDA_RUN_UTIL_H_
