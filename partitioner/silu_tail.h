// SiLU as exporters write it, x * Sigmoid(x), found behind a value: shared by the cover (a depthwise
// conv's activation) and the squeeze-excite matcher (the MLP's hidden activation).
#ifndef ONNXRUN_PARTITIONER_SILU_TAIL_H_
#define ONNXRUN_PARTITIONER_SILU_TAIL_H_

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace partitioner {

// Who reads a value: every node of the graph (the cover), or of one step (the executor).
using ValueReaders = std::function<std::vector<ir::NodeId>(ir::ValueId)>;

// The Sigmoid and Mul of x * Sigmoid(x) (either operand order) when `x` is read by exactly those
// two nodes and is not a graph output, and the Sigmoid's output is read only by the Mul; nullopt
// otherwise.
std::optional<std::pair<ir::NodeId, ir::NodeId>> MatchSiluTail(const ir::Graph& graph, ir::ValueId x,
                                                               const ValueReaders& readers);

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_SILU_TAIL_H_
