// CPU execution of a Plan: infer concrete shapes, allocate, run the reference kernel, free dead values,
// keep convolution outputs channels-last where their readers take them (cpu_layout.h).
#include "runtime/cpu_executor.h"

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/onednn_conv.h"
#include "kernels/cpu/run_node.h"
#include "runtime/cpu_fusion.h"
#include "runtime/cpu_layout.h"

namespace exec {

// The values of one run: tensors by ValueId, which are stored channels-last (cpu_layout.h), and
// the bytes of live intermediates.
struct RunValues {
  std::vector<ir::Tensor> tensors;
  std::vector<uint8_t> channels_last;
  int64_t live_bytes = 0;
};

namespace {

absl::Status NodeError(const ir::Node& node, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("node '", node.name, "' (", node.op_type, "): ", status.message()));
}

// Value `id` as the caller and the observer see it: NCHW.
absl::StatusOr<ir::Tensor> InNchw(const RunValues& run, ir::ValueId id) {
  if (!run.channels_last[id]) return run.tensors[id];
  return kernels::cpu::nn::ChannelsLastToNchw(run.tensors[id]);
}

// Reshapes value `id` to `dims` (the same bytes; a no-op for an absent value).
void SetDims(RunValues& run, ir::ValueId id, const std::vector<int64_t>& dims) {
  if (run.tensors[id].valid()) run.tensors[id] = *run.tensors[id].Reshaped(dims);
}

// Gives the node's inputs the form its LayoutUse wants: NCHW copies (kept in `copies`) or, for
// kNhwcView, the values themselves reshaped to their NHWC dims (returned, to be undone).
absl::StatusOr<std::vector<std::pair<ir::ValueId, std::vector<int64_t>>>> ArrangeInputs(
    const ir::Node& node, LayoutUse use, uint32_t channels_last, RunValues& run, std::vector<const ir::Tensor*>& inputs,
    std::vector<ir::Tensor>& copies) {
  std::vector<std::pair<ir::ValueId, std::vector<int64_t>>> reshaped;
  copies.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::ValueId id = node.inputs[i];
    if (inputs[i] == nullptr) continue;
    if (use == LayoutUse::kNhwcView) {
      if ((channels_last >> i & 1) == 0 && inputs[i]->num_elements() == 1) continue;  // a scalar: as it is
      const bool seen = absl::c_any_of(reshaped, [id](const auto& r) { return r.first == id; });
      if (!seen) {
        reshaped.push_back({id, run.tensors[id].shape()});
        SetDims(run, id, ToNhwcDims(run.tensors[id].shape()));
      }
    } else if ((channels_last >> i & 1) != 0 && (use == LayoutUse::kNchwCopies || i > 0)) {
      absl::StatusOr<ir::Tensor> copy = kernels::cpu::nn::ChannelsLastToNchw(*inputs[i]);
      if (!copy.ok()) return copy.status();
      copies.push_back(*std::move(copy));
      inputs[i] = &copies.back();
    }
  }
  return reshaped;
}

// Runs one node: run.tensors holds its inputs; its outputs are stored there. `options` says which
// inputs it may write over and where kernels keep state; the constant and channels-last inputs are
// marked here.
absl::Status RunNode(const ir::Graph& graph, const ir::Node& node, RunValues& run,
                     kernels::cpu::RunNodeOptions options) {
  std::vector<const ir::Tensor*> inputs;
  uint32_t channels_last = 0;
  for (ir::ValueId in : node.inputs) {
    const ir::Tensor* t = in == ir::kNoValue ? nullptr : &run.tensors[in];
    if (t != nullptr && !t->valid()) {
      return NodeError(node, absl::InternalError(absl::StrCat("input '", graph.value(in).name, "' is not available")));
    }
    if (t != nullptr && inputs.size() < 32) {
      if (graph.value(in).constant) options.constant_inputs |= 1u << inputs.size();
      if (run.channels_last[in]) channels_last |= 1u << inputs.size();
    }
    inputs.push_back(t);
  }
  if (!node.outputs.empty() && node.outputs[0] != ir::kNoValue && inputs.size() == 1 && inputs[0] != nullptr) {
    if (std::optional<TransposeView> view = TransposeAsView(graph, node, *inputs[0], channels_last & 1)) {
      run.channels_last[node.outputs[0]] = view->channels_last;
      run.tensors[node.outputs[0]] = std::move(view->tensor);  // the input's bytes: counted once
      return absl::OkStatus();
    }
  }
  const LayoutUse use = ChooseLayoutUse(node, inputs, channels_last);
  std::vector<ir::Tensor> copies;
  absl::StatusOr<std::vector<std::pair<ir::ValueId, std::vector<int64_t>>>> reshaped =
      ArrangeInputs(node, use, channels_last, run, inputs, copies);
  if (!reshaped.ok()) return NodeError(node, reshaped.status());
  bool conv_wrote_channels_last = false;
  if (use == LayoutUse::kConv || use == LayoutUse::kReadsInput) options.channels_last_inputs = channels_last & 1;
  if (use == LayoutUse::kConv) {
    options.channels_last_output_ok = true;
    options.channels_last_output = &conv_wrote_channels_last;
  }
  absl::StatusOr<std::vector<ir::Tensor>> outputs = kernels::cpu::RunNode(node, inputs, options);
  for (const auto& [id, dims] : *reshaped) SetDims(run, id, dims);
  if (!outputs.ok()) return outputs.status();
  if (use == LayoutUse::kNhwcView) (*outputs)[0] = *(*outputs)[0].Reshaped(ToNchwDims((*outputs)[0].shape()));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) continue;
    const ir::Tensor& out = (*outputs)[i];
    const bool shares_an_input = absl::c_any_of(inputs, [&out](const ir::Tensor* in) {
      return in != nullptr && in->raw_data() != nullptr && in->raw_data() == out.raw_data();
    });
    if (!shares_an_input) run.live_bytes += static_cast<int64_t>(out.host_bytes());  // bytes counted once
    run.channels_last[node.outputs[i]] = i == 0 && (use == LayoutUse::kNhwcView || conv_wrote_channels_last);
    run.tensors[node.outputs[i]] = std::move((*outputs)[i]);
  }
  return absl::OkStatus();
}

// Frees a computed value; its bytes leave the count when no other value still holds them.
void Release(const ir::Graph& graph, ir::ValueId dead, RunValues& run) {
  ir::Tensor& value = run.tensors[dead];
  if (graph.value(dead).producer >= 0 && (value.OwnsBytesAlone() || value.raw_data() == nullptr)) {
    run.live_bytes -= static_cast<int64_t>(value.host_bytes());
  }
  value = ir::Tensor();
  run.channels_last[dead] = 0;
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
    : plan_(plan),
      max_tensor_bytes_(max_tensor_bytes),
      lifetimes_(ComputeNodeLifetimes(plan)),
      fused_activations_(PlanConvActivations(plan)) {}

absl::StatusOr<std::vector<ir::Tensor>> RunNodeOnCpu(const ir::Node& node,
                                                     const std::vector<const ir::Tensor*>& inputs) {
  return kernels::cpu::RunNode(node, inputs);
}

absl::Status CpuExecutor::RunStepNodes(const Step& step, bool observed, RunValues& run, int64_t& peak_bytes,
                                       std::vector<ir::ValueId>& observed_then_dead) const {
  const ir::Graph& graph = plan_.graph;
  auto release_dead = [&](ir::NodeId id) {
    for (ir::ValueId dead : lifetimes_.release_after[id]) {
      if (observed && absl::c_linear_search(step.outputs, dead)) {
        observed_then_dead.push_back(dead);  // freed once the observer has seen it
      } else {
        Release(graph, dead, run);
      }
    }
  };
  for (size_t k = 0; k < step.nodes.size(); ++k) {
    const ir::NodeId id = step.nodes[k];
    const std::optional<ConvActivation>& fused = fused_activations_[id];
    kernels::cpu::RunNodeOptions options;
    options.max_output_bytes = max_tensor_bytes_;
    options.reusable_inputs = lifetimes_.reusable_inputs[id];
    options.cache = cache_.get();
    bool applied = false;
    if (fused) {
      options.activation = &fused->activation;
      options.activation_applied = &applied;
    }
    if (absl::Status status = RunNode(graph, graph.node(id), run, options); !status.ok()) return status;
    peak_bytes = std::max(peak_bytes, run.live_bytes);
    release_dead(id);
    if (applied) {  // the activation's output is the Conv's: the activation's nodes are done
      const ir::ValueId conv_out = graph.node(id).outputs[0], out = graph.node(fused->node).outputs[0];
      run.tensors[out] = std::move(run.tensors[conv_out]);
      run.channels_last[out] = run.channels_last[conv_out];
      run.tensors[conv_out] = ir::Tensor();
      run.channels_last[conv_out] = 0;
      for (int covered = 1; covered <= fused->nodes; ++covered) release_dead(step.nodes[k + covered]);
      k += fused->nodes;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ir::Tensor>> CpuExecutor::Run(std::vector<ir::Tensor> inputs, RunStats* stats,
                                                         const ValueObserver& observer,
                                                         bool observer_reads_values) const {
  const ir::Graph& graph = plan_.graph;
  if (inputs.size() != graph.inputs().size()) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", graph.inputs().size(), " inputs, got ", inputs.size()));
  }
  RunValues run;
  run.tensors.resize(graph.values().size());
  run.channels_last.assign(graph.values().size(), 0);
  for (size_t i = 0; i < graph.values().size(); ++i) {
    if (graph.value(i).constant) run.tensors[i] = *graph.value(i).constant;  // shares the bytes
  }
  for (size_t i = 0; i < inputs.size(); ++i) run.tensors[graph.inputs()[i]] = std::move(inputs[i]);
  int64_t peak_bytes = 0;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const Step& step = plan_.steps[s];
    std::vector<ir::ValueId> observed_then_dead;
    absl::Status status = RunStepNodes(step, observer != nullptr, run, peak_bytes, observed_then_dead);
    if (!status.ok()) return status;
    for (size_t i = 0; observer && i < step.outputs.size(); ++i) {
      const ir::ValueId out = step.outputs[i];
      if (!observer_reads_values) {
        observer(s, out, run.tensors[out]);
        continue;
      }
      absl::StatusOr<ir::Tensor> seen = InNchw(run, out);
      if (!seen.ok()) return seen.status();
      observer(s, out, *seen);
    }
    for (ir::ValueId dead : observed_then_dead) Release(graph, dead, run);
  }
  if (stats != nullptr) stats->peak_live_bytes = peak_bytes;
  std::vector<ir::Tensor> outputs;
  for (ir::ValueId id : graph.outputs()) {
    absl::StatusOr<ir::Tensor> out = InNchw(run, id);
    if (!out.ok()) return out.status();
    outputs.push_back(*std::move(out));
  }
  return outputs;
}

}  // namespace exec
