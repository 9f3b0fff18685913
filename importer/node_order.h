// The order the importer converts a GraphProto's nodes in: every value a node reads (its inputs,
// and the names its bodies read from enclosing graphs) produced before it. Also the nesting-depth
// check of bodies.
#ifndef ONNXRUN_IMPORTER_NODE_ORDER_H_
#define ONNXRUN_IMPORTER_NODE_ORDER_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "importer/importer.h"
#include "onnx/onnx_pb.h"

namespace importer {

// InvalidArgument when a graph at `depth` (0: the model's graph, 1: a body of one of its nodes,
// ...) nests deeper than limits.max_subgraph_depth.
absl::Status CheckSubgraphDepth(int depth, const ImportLimits& limits);

// Adds to `free` the names the bodies of `node` (a node of a graph at `depth`) read without
// defining them: values of the node's graph or of graphs enclosing it.
absl::Status AddBodyFreeNames(const onnx::NodeProto& node, int depth, const ImportLimits& limits,
                              std::set<std::string>& free);

// Node indices in an order where everything a node reads is produced before it. Names that
// `is_outer` accepts come from enclosing graphs (always available). Errors on a cycle, on a value
// produced twice, or on a read that nothing produces.
absl::StatusOr<std::vector<int>> TopologicalOrder(const onnx::GraphProto& graph, int depth, const ImportLimits& limits,
                                                  const std::function<bool(const std::string&)>& is_outer);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_NODE_ORDER_H_
