// Plan construction (node per step), liveness, and printing.
#include "exec/plan.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace exec {

const char* StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kKernel: return "Kernel";
    case StepKind::kFusedGraph: return "FusedGraph";
    case StepKind::kLegacy: return "Legacy";
    case StepKind::kAlias: return "Alias";
  }
  return "?";
}

absl::StatusOr<Plan> MakeNodePerStepPlan(ir::Graph graph) {
  absl::Status valid = graph.Validate();
  if (!valid.ok()) return valid;
  Plan plan;
  plan.graph = std::move(graph);
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(plan.graph.nodes().size()); ++id) {
    const ir::Node& node = plan.graph.node(id);
    Step step;
    step.nodes = {id};
    for (ir::ValueId in : node.inputs) {
      if (in != ir::kNoValue) step.inputs.push_back(in);
    }
    for (ir::ValueId out : node.outputs) {
      if (out != ir::kNoValue) step.outputs.push_back(out);
    }
    plan.steps.push_back(std::move(step));
  }
  ComputeReleases(plan);
  return plan;
}

std::vector<std::vector<size_t>> StepReaders(const Plan& plan) {
  std::vector<std::vector<size_t>> readers(plan.graph.values().size());
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (ir::ValueId in : plan.steps[s].inputs) readers[in].push_back(s);
  }
  return readers;
}

void ComputeReleases(Plan& plan) {
  const ir::Graph& graph = plan.graph;
  std::vector<int> last_reader(graph.values().size(), -1);
  for (int s = 0; s < static_cast<int>(plan.steps.size()); ++s) {
    plan.steps[s].release_after.clear();
    for (ir::ValueId in : plan.steps[s].inputs) last_reader[in] = s;
    // A value produced but never read dies right after its producer.
    for (ir::ValueId out : plan.steps[s].outputs) {
      if (last_reader[out] < s) last_reader[out] = s;
    }
  }
  std::set<ir::ValueId> keep(graph.outputs().begin(), graph.outputs().end());
  for (ir::ValueId id = 0; id < static_cast<ir::ValueId>(last_reader.size()); ++id) {
    if (last_reader[id] < 0 || keep.count(id) || graph.value(id).constant) continue;
    plan.steps[last_reader[id]].release_after.push_back(id);
  }
}

std::string PrintPlan(const Plan& plan) {
  std::string text;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    std::vector<std::string> nodes;
    for (ir::NodeId id : step.nodes) {
      nodes.push_back(absl::StrCat(plan.graph.node(id).name, ":", plan.graph.node(id).op_type));
    }
    absl::StrAppend(&text, s, " ", StepKindName(step.kind), " [", absl::StrJoin(nodes, ", "), "]\n");
  }
  return text;
}

}  // namespace exec
