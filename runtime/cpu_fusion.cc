// PlanConvActivations: the graph's consumers, then each adjacent (Conv, activation) pair of a
// step checked against the rule in cpu_fusion.h.
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

}  // namespace

std::vector<std::optional<ConvActivation>> PlanConvActivations(const Plan& plan) {
  const ir::Graph& graph = plan.graph;
  const std::vector<std::vector<ir::NodeId>> consumers = graph.ComputeConsumers();
  std::vector<std::optional<ConvActivation>> fused(graph.nodes().size());
  for (const Step& step : plan.steps) {
    for (size_t k = 0; k + 1 < step.nodes.size(); ++k) {
      const ir::Node& conv = graph.node(step.nodes[k]);
      const ir::Node& next = graph.node(step.nodes[k + 1]);
      if (conv.op_type != "Conv" || next.inputs.empty() ||
          !OnlyReaderIsNext(graph, step, consumers, conv, step.nodes[k + 1])) {
        continue;
      }
      std::optional<kernels::cpu::FusedActivation> activation = kernels::cpu::FusableActivation(graph, next);
      if (activation) fused[step.nodes[k]] = ConvActivation{step.nodes[k + 1], *activation};
    }
  }
  return fused;
}

}  // namespace exec
