// Runs a Plan on an NVIDIA GPU, all steps in order on one stream. Values live in device memory in
// the layout the plan annotates (NHWC for 4-D activations), converted where a step needs another.
// How each step runs is decided once, at Create, and reported by step_notes() for --explain:
//   FusedGraph -> one cuDNN operation graph (engine chosen by heuristics) when kernels/cudnn can
//                 build it, else the next rung (see step_notes);
//   Legacy     -> legacy cuDNN calls;
//   Kernel     -> own CUDA kernels (pointwise ops), else the host reference kernel (the inputs are
//                 copied to the host and the outputs back: correct, slow, and said so);
//   Alias      -> the same device bytes with new dims.
// Run is serialised by a mutex (one stream, one set of buffers), so a Session may call it from
// several threads.
#ifndef ONNXRUN_RUNTIME_CUDA_EXECUTOR_H_
#define ONNXRUN_RUNTIME_CUDA_EXECUTOR_H_

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device_tensor.h"
#include "runtime/plan.h"

namespace exec {

// "" when a CUDA device is usable, else why not (no driver, no device, ...).
std::string CudaUnavailableReason();

class CudaExecutor {
 public:
  static absl::StatusOr<std::unique_ptr<CudaExecutor>> Create(const Plan& plan);
  ~CudaExecutor();
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  // `inputs` in graph-input order, already validated. Outputs in graph-output order, logical.
  absl::StatusOr<std::vector<ir::Tensor>> Run(std::vector<ir::Tensor> inputs,
                                              const ValueObserver& observer = nullptr);
  // One line per step: how it runs on the GPU.
  const std::vector<std::string>& step_notes() const { return notes_; }
  std::string device_name() const { return device_name_; }
  // High-water mark of the device memory pool (stream-ordered allocations) in bytes.
  int64_t peak_device_bytes() const;

 private:
  explicit CudaExecutor(const Plan& plan) : plan_(plan) {}
  absl::Status Init();
  absl::StatusOr<DeviceTensor> Input(ir::ValueId id, const std::vector<DeviceTensor>& values) const;
  absl::Status RunStep(size_t index, std::vector<DeviceTensor>& values);
  absl::Status RunOnHost(const Step& step, std::vector<DeviceTensor>& values);
  absl::Status RunAlias(const Step& step, std::vector<DeviceTensor>& values);
  absl::Status RunPointwise(const Step& step, std::vector<DeviceTensor>& values);
  bool WantsNhwc(ir::ValueId id) const;

  const Plan& plan_;
  cudaStream_t stream_ = nullptr;
  std::vector<DeviceTensor> constants_;  // device copies, indexed by value id
  std::vector<std::string> notes_;
  std::string device_name_;
  std::mutex mu_;
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CUDA_EXECUTOR_H_
