// Runs a Plan on the CPU with the reference kernels: each node's output shapes come from its op's
// inference function on the concrete inputs; intermediates are freed after their last reader.
// One executor can run from several threads at once; what it keeps between runs is the kernels'
// cache (weights repacked once per node, kernels/cpu/kernel_cache.h), so keep one per plan.
#ifndef ONNXRUN_RUNTIME_CPU_EXECUTOR_H_
#define ONNXRUN_RUNTIME_CPU_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/plan.h"
#include "ir/tensor.h"
#include "kernels/cpu/kernel_cache.h"
#include "runtime/cpu_fusion.h"

namespace exec {

struct RunValues;  // cpu_executor.cc

struct RunStats {
  int64_t peak_live_bytes = 0;  // largest total size of live intermediates (not inputs/constants)
};

// Runs one node with its reference kernel: infers the output shapes from the concrete inputs
// (nullptr for absent optional inputs), allocates, runs. Errors name the node. Outputs are in node
// output order (an invalid Tensor for an absent optional output).
absl::StatusOr<std::vector<ir::Tensor>> RunNodeOnCpu(const ir::Node& node,
                                                     const std::vector<const ir::Tensor*>& inputs);

// When the CPU executor frees computed values, per node (indexed by NodeId).
struct NodeLifetimes {
  // Bit i set when input i is a computed value no later node reads (nor the caller, as a graph
  // output): the node's output may take over its bytes (kernels::cpu::RunNode).
  std::vector<uint32_t> reusable_inputs;
  // Computed values dead once the node has run (its last reader, or an output no one reads).
  std::vector<std::vector<ir::ValueId>> release_after;
};

class CpuExecutor {
 public:
  // `max_tensor_bytes`: the largest output a node may allocate (the session's
  // ImportLimits::max_tensor_bytes); larger is a ResourceExhausted error, not an allocation.
  explicit CpuExecutor(const Plan& plan, int64_t max_tensor_bytes = ir::kMaxTensorBytes);
  // `inputs` in graph-input order, already validated. Returns outputs in graph-output order.
  // `observer` sees each step's outputs after the step, in NCHW; with `observer_reads_values`
  // false it gets them as stored (channels-last ones unconverted: for timing the steps only).
  absl::StatusOr<std::vector<ir::Tensor>> Run(std::vector<ir::Tensor> inputs, RunStats* stats = nullptr,
                                              const ValueObserver& observer = nullptr,
                                              bool observer_reads_values = true) const;

 private:
  // Runs the step's nodes, an activation planned into its Conv with it; frees the values dead after
  // each (those of step.outputs into `observed_then_dead` when the step is `observed`).
  absl::Status RunStepNodes(const Step& step, bool observed, RunValues& run, int64_t& peak_bytes,
                            std::vector<ir::ValueId>& observed_then_dead) const;

  const Plan& plan_;
  int64_t max_tensor_bytes_;
  NodeLifetimes lifetimes_;
  std::vector<std::optional<ConvActivation>> fused_activations_;  // by NodeId (cpu_fusion.h)
  std::unique_ptr<kernels::cpu::KernelCache> cache_ = std::make_unique<kernels::cpu::KernelCache>();
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CPU_EXECUTOR_H_
