// The pattern-rewriting passes' shared pieces (see match_rewrite.h).
#include "partitioner/match_rewrite.h"

#include <cstring>
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

ir::Tensor TransposedMatrix(const ir::Tensor& matrix) {
  const int64_t rows = matrix.shape().empty() ? 1 : matrix.shape()[0];
  const int64_t cols = rows > 0 ? matrix.num_elements() / rows : 0;
  ir::Tensor out = *ir::Tensor::Create(matrix.dtype(), {cols, rows});
  const size_t bytes = ir::DTypeSize(matrix.dtype());
  const auto* src = static_cast<const uint8_t*>(matrix.raw_data());
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) std::memcpy(dst + (c * rows + r) * bytes, src + (r * cols + c) * bytes, bytes);
  }
  return out;
}

}  // namespace partitioner
