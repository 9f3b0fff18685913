// TransposePairs (transpose_pairs.h).
#include "partitioner/transpose_pairs.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "ops/infer_util.h"

namespace partitioner {
namespace {

using ir::NodeId;
using ir::ValueId;

// The node's perm (ONNX's default: the axes reversed; ops::ResolvePermutation checks it), or nullopt
// when the input's rank is unknown or the perm is not a permutation of it.
std::optional<std::vector<int64_t>> PermOf(const ir::Graph& g, const ir::Node& transpose) {
  if (transpose.op_type != "Transpose" || transpose.inputs.size() != 1 || transpose.outputs.size() != 1) {
    return std::nullopt;
  }
  const ir::TensorType& in = g.value(transpose.inputs[0]).type;
  if (!in.shape) return std::nullopt;
  absl::StatusOr<std::vector<int64_t>> perm = ops::ResolvePermutation(transpose.attrs, in.rank());
  if (!perm.ok()) return std::nullopt;
  return *std::move(perm);
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<NodeId> ProducerOf(const ir::Graph& g) {
  std::vector<NodeId> producer(g.values().size(), -1);
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    for (ValueId out : g.node(id).outputs) {
      if (out != ir::kNoValue) producer[out] = id;
    }
  }
  return producer;
}

}  // namespace

absl::StatusOr<bool> TransposePairs::Run(ir::Graph& graph) {
  merged_ = removed_ = 0;
  const std::vector<NodeId> producer = ProducerOf(graph);
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    std::optional<std::vector<int64_t>> perm = PermOf(graph, graph.node(id));
    if (!perm) continue;
    ir::Node& t = graph.node(id);
    const NodeId inner_id = producer[t.inputs[0]];
    if (inner_id >= 0) {
      // Processed earlier (topological order), so an inner pair is merged already.
      std::optional<std::vector<int64_t>> inner = PermOf(graph, graph.node(inner_id));
      if (inner) {
        // out[i] = mid[perm[i]] = in[inner[perm[i]]].
        std::vector<int64_t> composed(perm->size());
        for (size_t i = 0; i < perm->size(); ++i) composed[i] = (*inner)[(*perm)[i]];
        t.inputs[0] = graph.node(inner_id).inputs[0];
        t.attrs.Set("perm", composed);
        *perm = composed;
        ++merged_;
      }
    }
    if (!IsIdentity(*perm)) continue;
    ++removed_;
    if (graph.IsGraphOutput(t.outputs[0])) {
      t.op_type = "Identity";
      t.attrs = {};
    } else {
      graph.ReplaceAllUses(t.outputs[0], t.inputs[0]);  // t is left unread: dead-node removal drops it
    }
  }
  return merged_ + removed_ > 0;
}

}  // namespace partitioner
