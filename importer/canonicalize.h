// Rewrites one imported node into its canonical form (ops/CANONICAL.md): attribute forms of older
// opsets become constant inputs, Upsample and opset-10 Resize become Resize, legacy broadcast
// attributes become an explicit Unsqueeze. May append constants and helper nodes to the graph.
#ifndef ONNXRUN_IMPORTER_CANONICALIZE_H_
#define ONNXRUN_IMPORTER_CANONICALIZE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace importer {

// Returns the nodes to append, in order (the canonical node last). The graph's values already
// carry the types of the node's inputs (used for legacy broadcast).
absl::StatusOr<std::vector<ir::Node>> CanonicalizeNode(ir::Graph& graph, ir::Node node);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_CANONICALIZE_H_
