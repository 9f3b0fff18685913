// The types a control-flow node gives its body's own inputs, for bodies that leave them untyped
// (ONNX allows it; function expansions such as Range's do it): Loop's iteration number, condition
// and carried values; Scan's states and one slice of each scan input. The body's declared type,
// when it has one, wins.
#ifndef ONNXRUN_IMPORTER_BODY_TYPES_H_
#define ONNXRUN_IMPORTER_BODY_TYPES_H_

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace importer {

// One entry per formal body input that the node determines (fewer or none when it cannot tell);
// nullopt where unknown. `node` holds its explicit inputs and non-graph attributes.
std::vector<std::optional<ir::TensorType>> BodyInputTypes(const ir::Graph& graph, const ir::Node& node);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_BODY_TYPES_H_
