// What the pattern-rewriting passes (attention, GELU and LayerNorm fusion) share: who reads a value
// (to require that a matched intermediate has no other reader), claiming a match's nodes so that
// matches do not overlap, putting the nodes made for each match in place of the ones it replaces,
// and transposing a constant matrix.
#ifndef ONNXRUN_PARTITIONER_MATCH_REWRITE_H_
#define ONNXRUN_PARTITIONER_MATCH_REWRITE_H_

#include <map>
#include <set>
#include <vector>

#include "ir/graph.h"

namespace partitioner {

class Readers {
 public:
  explicit Readers(const ir::Graph& graph) : graph_(graph), consumers_(graph.ComputeConsumers()) {}

  // The producer of `id` when `id` is an intermediate (produced, not a graph output) with exactly
  // one reader; else nullptr.
  const ir::Node* SoleReaderProducer(ir::ValueId id) const;
  // The one node reading `id` when `id` is not a graph output; else nullptr.
  const ir::Node* SoleReader(ir::ValueId id) const;
  // Every reader of `id`, as ComputeConsumers lists them.
  const std::vector<ir::NodeId>& of(ir::ValueId id) const { return consumers_[id]; }
  // The id of a node of the graph.
  ir::NodeId IdOf(const ir::Node* node) const { return static_cast<ir::NodeId>(node - graph_.nodes().data()); }

 private:
  const ir::Graph& graph_;
  std::vector<std::vector<ir::NodeId>> consumers_;
};

// Adds `nodes` to `taken` and returns true, unless one of them is taken already (then nothing).
bool Claim(std::set<ir::NodeId>& taken, const std::vector<ir::NodeId>& nodes);

// Rewrites the node list: node `id` of `made` is replaced by made[id] (in order), the others in
// `removed` are dropped, the rest keep their order. Nodes at `original_count` and after (appended
// only to be typed, and placed through `made`) are dropped.
void ReplaceMatched(ir::Graph& graph, ir::NodeId original_count, std::map<ir::NodeId, std::vector<ir::Node>> made,
                    const std::set<ir::NodeId>& removed);

// The transpose of a constant viewed as a matrix [dim 0, product of the other dims]: a 2-D
// [cols, rows] tensor, any element type.
ir::Tensor TransposedMatrix(const ir::Tensor& matrix);

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_MATCH_REWRITE_H_
