// Model-local functions (ModelProto.functions, IR 8+; what torch's dynamo exporter and onnxscript
// write when they do not inline, and how some exporters package repeated blocks) expanded into the
// graphs that call them, before the importer reads the model: a call node becomes the function's
// body with its formal inputs and outputs bound to the call's, every other value renamed
// "<call>/<name>" (so two calls never share one), attribute references resolved from the call's
// attributes or the function's defaults. Calls inside bodies and inside control-flow subgraphs are
// expanded too.
#ifndef ONNXRUN_IMPORTER_INLINE_FUNCTIONS_H_
#define ONNXRUN_IMPORTER_INLINE_FUNCTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace importer {

// Replaces every call of a function in `model.functions()` by the function's body (nested calls up
// to 32 deep; a function that calls itself is an error). Fails with ResourceExhausted when the
// expanded graphs would hold more than `max_nodes` nodes. A model without functions is unchanged.
absl::Status InlineLocalFunctions(onnx::ModelProto& model, int64_t max_nodes);

// The attribute `name` of a node or function, nullptr when absent.
const onnx::AttributeProto* FindAttribute(const google::protobuf::RepeatedPtrField<onnx::AttributeProto>& attrs,
                                          const std::string& name);

// A Constant node holding `value`, writing `output`.
onnx::NodeProto ConstantNodeProto(const onnx::TensorProto& value, const std::string& output);

// `graph` (a graph attribute, such as FlexAttention's score_mod) as nodes that run in place of a
// call: its inputs read `inputs`, its outputs are written to `outputs`, every other name it defines
// gets `prefix`, names it reads from enclosing graphs stay, its initializers become Constant nodes.
std::vector<onnx::NodeProto> InlineGraphBody(const onnx::GraphProto& graph, const std::vector<std::string>& inputs,
                                             const std::vector<std::string>& outputs, const std::string& prefix);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_INLINE_FUNCTIONS_H_
