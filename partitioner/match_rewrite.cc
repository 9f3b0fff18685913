// The pattern-rewriting passes' shared pieces (see match_rewrite.h).
#include "partitioner/match_rewrite.h"

#include <utility>

namespace partitioner {

const ir::Node* Readers::SoleReaderProducer(ir::ValueId id) const {
  if (id == ir::kNoValue) return nullptr;
  const ir::Value& value = graph_.value(id);
  if (value.producer < 0 || graph_.IsGraphOutput(id) || consumers_[id].size() != 1) return nullptr;
  return &graph_.node(value.producer);
}

const ir::Node* Readers::SoleReader(ir::ValueId id) const {
  if (id == ir::kNoValue || graph_.IsGraphOutput(id) || consumers_[id].size() != 1) return nullptr;
  return &graph_.node(consumers_[id][0]);
}

bool Claim(std::set<ir::NodeId>& taken, const std::vector<ir::NodeId>& nodes) {
  for (ir::NodeId n : nodes) {
    if (taken.count(n)) return false;
  }
  taken.insert(nodes.begin(), nodes.end());
  return true;
}

void ReplaceMatched(ir::Graph& graph, ir::NodeId original_count, std::map<ir::NodeId, std::vector<ir::Node>> made,
                    const std::set<ir::NodeId>& removed) {
  std::vector<ir::Node> nodes;
  for (ir::NodeId id = 0; id < original_count; ++id) {
    if (auto it = made.find(id); it != made.end()) {
      for (ir::Node& node : it->second) nodes.push_back(std::move(node));
    } else if (!removed.count(id)) {
      nodes.push_back(graph.node(id));
    }
  }
  graph.ReplaceNodes(std::move(nodes));
}

}  // namespace partitioner
