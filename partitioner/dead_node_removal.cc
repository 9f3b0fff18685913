// DeadNodeRemoval: one backward sweep marks the values that reach a graph output.
#include "partitioner/dead_node_removal.h"

#include <utility>
#include <vector>

namespace partitioner {
namespace {

// live[n]: node n has an output that is a graph output or is read by a live node.
std::vector<bool> LiveNodes(const ir::Graph& graph) {
  std::vector<bool> live_value(graph.values().size(), false);
  for (ir::ValueId id : graph.outputs()) live_value[id] = true;
  std::vector<bool> live_node(graph.nodes().size(), false);
  for (ir::NodeId id = static_cast<ir::NodeId>(graph.nodes().size()) - 1; id >= 0; --id) {
    const ir::Node& node = graph.node(id);
    for (ir::ValueId out : node.outputs) {
      if (out != ir::kNoValue && live_value[out]) live_node[id] = true;
    }
    if (!live_node[id]) continue;
    for (ir::ValueId in : node.inputs) {
      if (in != ir::kNoValue) live_value[in] = true;
    }
  }
  return live_node;
}

}  // namespace

absl::StatusOr<bool> DeadNodeRemoval::Run(ir::Graph& graph) {
  const std::vector<bool> live = LiveNodes(graph);
  std::vector<ir::Node> kept;
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(graph.nodes().size()); ++id) {
    if (live[id]) kept.push_back(graph.node(id));
  }
  removed_ = static_cast<int>(graph.nodes().size() - kept.size());
  if (removed_ == 0) return false;
  graph.ReplaceNodes(std::move(kept));
  return true;
}

}  // namespace partitioner
