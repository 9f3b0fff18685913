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

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cudnn/fused_graph.h"
#include "kernels/cudnn/legacy.h"
#include "runtime/device_tensor.h"
#include "runtime/fused_lowering.h"
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
  std::vector<std::string> step_notes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return notes_;
  }
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
  // Concat and constant Pad with the strided-copy kernel, in the output's layout.
  absl::Status RunConcat(const Step& step, std::vector<DeviceTensor>& values);
  absl::Status RunPad(const Step& step, std::vector<DeviceTensor>& values);
  // A FusedGraph step as one cuDNN operation graph, built on first use for the step's input dims
  // and cached. NotFound/Unimplemented when cuDNN offers nothing (the caller then falls back).
  absl::Status RunFused(size_t index, std::vector<DeviceTensor>& values);
  // A Legacy step through kernels/cudnn/legacy.h (BN(+ReLU), grouped conv(+ReLU/ReLU6), pools,
  // softmax), made on first use for the input dims; forms it does not cover run on the host.
  absl::Status RunLegacy(size_t index, std::vector<DeviceTensor>& values);
  // A per-channel constant as float32 on the device (cuDNN BN parameters are float).
  absl::StatusOr<DeviceTensor> FloatConstant(ir::ValueId id);
  // A value bound to a graph UID, in the layout the binding needs (weights converted once).
  absl::StatusOr<DeviceTensor> Bound(const UidBinding& binding, const std::vector<DeviceTensor>& values);
  bool WantsNhwc(ir::ValueId id) const;

  struct LegacyEntry {
    absl::Status status;
    std::unique_ptr<cudnn::BatchNormInference> bn;
    std::unique_ptr<cudnn::LegacyConv> conv;
    std::unique_ptr<cudnn::Pooling> pool;
    std::unique_ptr<cudnn::Softmax> softmax;
    std::vector<int64_t> out_dims;
    bool nhwc = false;
  };
  struct FusedEntry {
    absl::Status status;  // why no plan, when the build failed
    LoweredStep lowered;
    std::unique_ptr<cudnn::FusedGraphPlan> plan;
  };

  const Plan& plan_;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  std::vector<std::map<std::string, FusedEntry>> fused_;  // per step: input-dims key -> plan
  std::vector<DeviceTensor> channels_last_constants_;   // KRSC / NHWC copies, by value id
  std::vector<DeviceTensor> float_constants_;           // float32 copies, by value id
  std::vector<std::map<std::string, LegacyEntry>> legacy_;  // per step: input-dims key -> calls
  std::vector<DeviceTensor> constants_;  // device copies, indexed by value id
  std::vector<std::string> notes_;
  std::string device_name_;
  mutable std::mutex mu_;
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CUDA_EXECUTOR_H_
