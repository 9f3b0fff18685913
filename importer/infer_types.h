// Type and shape inference of one node during import: runs the op's inference function on the
// graph's current value types and known constants, and stores the result on the node's outputs.
#ifndef ONNXRUN_IMPORTER_INFER_TYPES_H_
#define ONNXRUN_IMPORTER_INFER_TYPES_H_

#include "absl/status/status.h"
#include "ir/graph.h"

namespace importer {

// Errors name the node and its op type.
absl::Status InferNodeTypes(ir::Graph& graph, ir::NodeId node_id);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_INFER_TYPES_H_
