// Type and shape inference of graph nodes: runs each op's inference function on the graph's current
// value types and known constants, and stores the result on the node's outputs. Used by the importer
// (node by node, as it builds the graph) and by passes (whole graph, after a rewrite).
#ifndef ONNXRUN_OPS_INFER_GRAPH_H_
#define ONNXRUN_OPS_INFER_GRAPH_H_

#include "absl/status/status.h"
#include "ir/graph.h"

namespace ops {

// Errors name the node and its op type.
absl::Status InferNodeTypes(ir::Graph& graph, ir::NodeId node_id);
// Every node, in order.
absl::Status InferGraphTypes(ir::Graph& graph);

}  // namespace ops

#endif  // ONNXRUN_OPS_INFER_GRAPH_H_
