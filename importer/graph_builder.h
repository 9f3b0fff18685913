// GraphProto -> ir::Graph, for the model's graph and, recursively, for the GRAPH attributes of
// control-flow nodes (If branches, Loop and Scan bodies). A body may read values of the enclosing
// graphs by name: such a read becomes a captured input of the body and an implicit input of the
// node that owns it (ir::Graph::num_captured_inputs), so the outer graph orders, plans and keeps
// alive every value a body reads. A constant of an enclosing graph is copied into the body instead
// (its bytes are shared), so inference inside the body sees its value.
#ifndef ONNXRUN_IMPORTER_GRAPH_BUILDER_H_
#define ONNXRUN_IMPORTER_GRAPH_BUILDER_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "importer/importer.h"
#include "ir/graph.h"
#include "onnx/onnx_pb.h"

namespace importer {

// What one model's import shares across its graphs.
struct ImportState {
  int opset = 0;                                 // the ai.onnx opset; 0 when the model imports none
  std::map<std::string, int64_t> domain_opsets;  // the other domains of the model's opset_import
  std::string model_dir;
  ImportLimits limits;
  int64_t constant_bytes = 0;  // all constants so far, every graph
  int64_t nodes = 0;           // all nodes so far, every graph
};

// Every unsupported op of the graph and of its bodies, with their nodes, in one Unimplemented error.
absl::Status CheckOpsSupported(const onnx::GraphProto& graph, int opset);

// The model's main graph, bodies included, validated. Errors name the node (and the attribute
// and body node for an error inside a body).
absl::StatusOr<ir::Graph> BuildMainGraph(const onnx::GraphProto& proto, ImportState& state);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_GRAPH_BUILDER_H_
