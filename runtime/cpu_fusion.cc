// PlanConvActivations: the graph's consumers, then each adjacent (Conv, activation) pair — or
// (Conv, Sigmoid, Mul) triple — of a step checked against the rules in cpu_fusion.h.
#include "runtime/cpu_fusion.h"

#include "absl/algorithm/container.h"

namespace exec {
namespace {

bool OnlyReaderIsNext(const ir::Graph& graph, const Step& step, const std::vector<std::vector<ir::NodeId>>& consumers,
                      const ir::Node& conv, ir::NodeId next) {
  if (conv.outputs.size() != 1 || conv.outputs[0] == ir::kNoValue) return false;
  const ir::ValueId out = conv.outputs[0];
  return graph.node(next).inputs[0] == out && consumers[out] == std::vector<ir::NodeId>{next} &&
         !graph.IsGraphOutput(out) && !absl::c_linear_search(step.outputs, out);
}

// Unobserved: neither a graph output nor a step output.
bool Unobserved(const ir::Graph& graph, const Step& step, ir::ValueId id) {
  return !graph.IsGraphOutput(id) && !absl::c_linear_search(step.outputs, id);
}

// The SiLU after the Conv at step.nodes[k]: Sigmoid(c) at k + 1 and Mul(c, sigmoid) at k + 2 as
// the only readers of c, the Sigmoid's output read by the Mul alone; float32 (the oneDNN conv's).
std::optional<ConvActivation> SiluAfter(const ir::Graph& graph, const Step& step,
                                        const std::vector<std::vector<ir::NodeId>>& consumers, size_t k) {
  if (k + 2 >= step.nodes.size()) return std::nullopt;
  const ir::Node& conv = graph.node(step.nodes[k]);
  const ir::NodeId sig_id = step.nodes[k + 1], mul_id = step.nodes[k + 2];
  const ir::Node& sig = graph.node(sig_id);
  const ir::Node& mul = graph.node(mul_id);
  if (conv.outputs.size() != 1 || sig.op_type != "Sigmoid" || mul.op_type != "Mul" || sig.outputs.size() != 1 ||
      mul.inputs.size() != 2) {
    return std::nullopt;
  }
  const ir::ValueId c = conv.outputs[0], s = sig.outputs[0];
  if (c == ir::kNoValue || s == ir::kNoValue || graph.value(c).type.dtype != ir::DType::kFloat32) return std::nullopt;
  const bool reads_both = (mul.inputs[0] == c && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == c);
  std::vector<ir::NodeId> readers = consumers[c];
  absl::c_sort(readers);
  std::vector<ir::NodeId> expected = {sig_id, mul_id};
  absl::c_sort(expected);
  if (!reads_both || sig.inputs[0] != c || readers != expected || consumers[s] != std::vector<ir::NodeId>{mul_id} ||
      !Unobserved(graph, step, c) || !Unobserved(graph, step, s)) {
    return std::nullopt;
  }
  return ConvActivation{mul_id, 2, {kernels::cpu::FusedActivation::Kind::kSwish}};
}

}  // namespace

std::vector<std::optional<ConvActivation>> PlanConvActivations(const Plan& plan) {
  const ir::Graph& graph = plan.graph;
  const std::vector<std::vector<ir::NodeId>> consumers = graph.ComputeConsumers();
  std::vector<std::optional<ConvActivation>> fused(graph.nodes().size());
  for (const Step& step : plan.steps) {
    for (size_t k = 0; k + 1 < step.nodes.size(); ++k) {
      const ir::Node& conv = graph.node(step.nodes[k]);
      const ir::Node& next = graph.node(step.nodes[k + 1]);
      if (conv.op_type != "Conv") continue;
      if (std::optional<ConvActivation> silu = SiluAfter(graph, step, consumers, k)) {
        fused[step.nodes[k]] = *silu;
        continue;
      }
      if (next.inputs.empty() || !OnlyReaderIsNext(graph, step, consumers, conv, step.nodes[k + 1])) {
        continue;
      }
      std::optional<kernels::cpu::FusedActivation> activation = kernels::cpu::FusableActivation(graph, next);
      if (activation) fused[step.nodes[k]] = ConvActivation{step.nodes[k + 1], 1, *activation};
    }
  }
  return fused;
}

}  // namespace exec
