// CPU execution of a Plan: infer concrete shapes, allocate, run the reference kernel, free dead values.
#include "runtime/cpu_executor.h"

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/run_node.h"

namespace exec {
namespace {

absl::Status NodeError(const ir::Node& node, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("node '", node.name, "' (", node.op_type, "): ", status.message()));
}

// Runs one node: values[] holds its inputs; its outputs are stored there.
absl::Status RunNode(const ir::Graph& graph, const ir::Node& node, std::vector<ir::Tensor>& values,
                     int64_t max_tensor_bytes, uint32_t reusable_inputs, int64_t& live_bytes) {
  std::vector<const ir::Tensor*> inputs;
  for (ir::ValueId in : node.inputs) {
    const ir::Tensor* t = in == ir::kNoValue ? nullptr : &values[in];
    if (t != nullptr && !t->valid()) {
      return NodeError(node, absl::InternalError(absl::StrCat("input '", graph.value(in).name, "' is not available")));
    }
    inputs.push_back(t);
  }
  absl::StatusOr<std::vector<ir::Tensor>> outputs =
      kernels::cpu::RunNode(node, inputs, max_tensor_bytes, reusable_inputs);
  if (!outputs.ok()) return outputs.status();
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) continue;
    const ir::Tensor& out = (*outputs)[i];
    const bool shares_an_input = absl::c_any_of(inputs, [&out](const ir::Tensor* in) {
      return in != nullptr && in->raw_data() != nullptr && in->raw_data() == out.raw_data();
    });
    if (!shares_an_input) live_bytes += static_cast<int64_t>(out.host_bytes());  // bytes counted once
    values[node.outputs[i]] = std::move((*outputs)[i]);
  }
  return absl::OkStatus();
}

// Frees a computed value; its bytes leave the count when no other value still holds them.
void Release(const ir::Graph& graph, ir::ValueId dead, std::vector<ir::Tensor>& values, int64_t& live_bytes) {
  if (graph.value(dead).producer >= 0 && (values[dead].OwnsBytesAlone() || values[dead].raw_data() == nullptr)) {
    live_bytes -= static_cast<int64_t>(values[dead].host_bytes());
  }
  values[dead] = ir::Tensor();
}

// Node-level lifetimes: a value (computed, or a graph input) dies after the last node that reads it (steps may keep
// values internal, which step-level releases never free), or after its producer when nothing reads it.
NodeLifetimes ComputeNodeLifetimes(const Plan& plan) {
  const ir::Graph& graph = plan.graph;
  std::vector<ir::NodeId> last_node(graph.values().size(), -1);
  for (const Step& step : plan.steps) {
    for (ir::NodeId id : step.nodes) {
      for (ir::ValueId out : graph.node(id).outputs) {
        if (out != ir::kNoValue) last_node[out] = id;
      }
      for (ir::ValueId in : graph.node(id).inputs) {
        if (in != ir::kNoValue) last_node[in] = id;
      }
    }
  }
  for (ir::ValueId out : graph.outputs()) last_node[out] = -1;
  NodeLifetimes lifetimes;
  lifetimes.reusable_inputs.assign(graph.nodes().size(), 0);
  lifetimes.release_after.resize(graph.nodes().size());
  for (size_t v = 0; v < last_node.size(); ++v) {
    const ir::ValueId id = static_cast<ir::ValueId>(v);
    const ir::Value& value = graph.value(id);
    if (last_node[v] < 0 || value.constant) continue;
    lifetimes.release_after[last_node[v]].push_back(id);
    if (value.producer < 0) continue;  // a graph input: the caller's bytes
    const std::vector<ir::ValueId>& inputs = graph.node(last_node[v]).inputs;
    for (size_t i = 0; i < inputs.size() && i < 32; ++i) {
      if (inputs[i] == id) lifetimes.reusable_inputs[last_node[v]] |= uint32_t{1} << i;
    }
  }
  return lifetimes;
}

}  // namespace

CpuExecutor::CpuExecutor(const Plan& plan, int64_t max_tensor_bytes)
    : plan_(plan), max_tensor_bytes_(max_tensor_bytes), lifetimes_(ComputeNodeLifetimes(plan)) {}

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
    std::vector<ir::ValueId> observed_then_dead;
    for (ir::NodeId id : step.nodes) {
      absl::Status status =
          RunNode(graph, graph.node(id), values, max_tensor_bytes_, lifetimes_.reusable_inputs[id], live_bytes);
      if (!status.ok()) return status;
      peak_bytes = std::max(peak_bytes, live_bytes);
      for (ir::ValueId dead : lifetimes_.release_after[id]) {
        if (observer && absl::c_linear_search(step.outputs, dead)) {
          observed_then_dead.push_back(dead);  // freed once the observer has seen it
        } else {
          Release(graph, dead, values, live_bytes);
        }
      }
    }
    if (observer) {
      for (ir::ValueId out : step.outputs) observer(s, out, values[out]);
    }
    for (ir::ValueId dead : observed_then_dead) Release(graph, dead, values, live_bytes);
  }
  if (stats != nullptr) stats->peak_live_bytes = peak_bytes;
  std::vector<ir::Tensor> outputs;
  for (ir::ValueId id : graph.outputs()) outputs.push_back(values[id]);
  return outputs;
}

}  // namespace exec
