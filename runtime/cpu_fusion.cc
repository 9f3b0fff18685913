// PlanConvActivations: reader counts over the graph, then each adjacent (Conv, activation) pair of a
// step checked against the rule in cpu_fusion.h.
#include "runtime/cpu_fusion.h"

#include "absl/algorithm/container.h"

namespace exec {
namespace {

// How many node inputs read each value (a node reading it twice counts twice).
std::vector<int> ReaderCounts(const ir::Graph& graph) {
  std::vector<int> readers(graph.values().size(), 0);
  for (const ir::Node& node : graph.nodes()) {
    for (ir::ValueId in : node.inputs) {
      if (in != ir::kNoValue) ++readers[in];
    }
  }
  return readers;
}

bool OnlyReaderIsNext(const ir::Graph& graph, const Step& step, const std::vector<int>& readers, const ir::Node& conv,
                      const ir::Node& next) {
  if (conv.outputs.size() != 1 || conv.outputs[0] == ir::kNoValue) return false;
  const ir::ValueId out = conv.outputs[0];
  return next.inputs[0] == out && readers[out] == 1 && !absl::c_linear_search(graph.outputs(), out) &&
         !absl::c_linear_search(step.outputs, out);
}

}  // namespace

std::vector<std::optional<ConvActivation>> PlanConvActivations(const Plan& plan) {
  const ir::Graph& graph = plan.graph;
  const std::vector<int> readers = ReaderCounts(graph);
  std::vector<std::optional<ConvActivation>> fused(graph.nodes().size());
  for (const Step& step : plan.steps) {
    for (size_t k = 0; k + 1 < step.nodes.size(); ++k) {
      const ir::Node& conv = graph.node(step.nodes[k]);
      const ir::Node& next = graph.node(step.nodes[k + 1]);
      if (conv.op_type != "Conv" || next.inputs.empty() || !OnlyReaderIsNext(graph, step, readers, conv, next)) {
        continue;
      }
      std::optional<kernels::cpu::FusedActivation> activation = kernels::cpu::FusableActivation(graph, next);
      if (activation) fused[step.nodes[k]] = ConvActivation{step.nodes[k + 1], *activation};
    }
  }
  return fused;
}

}  // namespace exec
