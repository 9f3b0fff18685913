// CPU execution of a Plan: infer concrete shapes, allocate, run the reference kernel, free dead values.
#include "runtime/cpu_executor.h"

#include "absl/strings/str_cat.h"
#include "kernels/cpu/run_node.h"

namespace exec {
namespace {

absl::Status NodeError(const ir::Node& node, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("node '", node.name, "' (", node.op_type, "): ", status.message()));
}

// Runs one node: values[] holds its inputs; its outputs are stored there.
absl::Status RunNode(const ir::Graph& graph, const ir::Node& node, std::vector<ir::Tensor>& values,
                     int64_t max_tensor_bytes, int64_t& live_bytes) {
  std::vector<const ir::Tensor*> inputs;
  for (ir::ValueId in : node.inputs) {
    const ir::Tensor* t = in == ir::kNoValue ? nullptr : &values[in];
    if (t != nullptr && !t->valid()) {
      return NodeError(node, absl::InternalError(absl::StrCat("input '", graph.value(in).name, "' is not available")));
    }
    inputs.push_back(t);
  }
  absl::StatusOr<std::vector<ir::Tensor>> outputs = kernels::cpu::RunNode(node, inputs, max_tensor_bytes);
  if (!outputs.ok()) return outputs.status();
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) continue;
    live_bytes += static_cast<int64_t>((*outputs)[i].host_bytes());
    values[node.outputs[i]] = std::move((*outputs)[i]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<ir::Tensor>> RunNodeOnCpu(const ir::Node& node,
                                                     const std::vector<const ir::Tensor*>& inputs) {
  return kernels::cpu::RunNode(node, inputs);
}

absl::StatusOr<std::vector<ir::Tensor>> CpuExecutor::Run(std::vector<ir::Tensor> inputs, RunStats* stats,
                                                         const ValueObserver& observer) const {
  const ir::Graph& graph = plan_.graph;
  if (inputs.size() != graph.inputs().size()) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", graph.inputs().size(), " inputs, got ", inputs.size()));
  }
  std::vector<ir::Tensor> values(graph.values().size());
  for (size_t i = 0; i < graph.values().size(); ++i) {
    if (graph.value(i).constant) values[i] = *graph.value(i).constant;  // shares the bytes
  }
  for (size_t i = 0; i < inputs.size(); ++i) values[graph.inputs()[i]] = std::move(inputs[i]);
  int64_t live_bytes = 0, peak_bytes = 0;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const Step& step = plan_.steps[s];
    for (ir::NodeId id : step.nodes) {
      absl::Status status = RunNode(graph, graph.node(id), values, max_tensor_bytes_, live_bytes);
      if (!status.ok()) return status;
      peak_bytes = std::max(peak_bytes, live_bytes);
    }
    if (observer) {
      for (ir::ValueId out : step.outputs) observer(s, out, values[out]);
    }
    for (ir::ValueId dead : step.release_after) {
      if (graph.value(dead).producer >= 0) live_bytes -= static_cast<int64_t>(values[dead].host_bytes());
      values[dead] = ir::Tensor();
    }
  }
  if (stats != nullptr) stats->peak_live_bytes = peak_bytes;
  std::vector<ir::Tensor> outputs;
  for (ir::ValueId id : graph.outputs()) outputs.push_back(values[id]);
  return outputs;
}

}  // namespace exec
