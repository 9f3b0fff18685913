// Runs a Plan on the CPU with the reference kernels: each node's output shapes come from its op's
// inference function on the concrete inputs; intermediates are freed after their last reader.
// Stateless apart from the plan it borrows, so one executor can run from several threads at once.
#ifndef ONNXRUN_RUNTIME_CPU_EXECUTOR_H_
#define ONNXRUN_RUNTIME_CPU_EXECUTOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/plan.h"
#include "ir/tensor.h"

namespace exec {

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
  absl::StatusOr<std::vector<ir::Tensor>> Run(std::vector<ir::Tensor> inputs, RunStats* stats = nullptr,
                                              const ValueObserver& observer = nullptr) const;

 private:
  const Plan& plan_;
  int64_t max_tensor_bytes_;
  NodeLifetimes lifetimes_;
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CPU_EXECUTOR_H_
