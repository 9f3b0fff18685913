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

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace importer {

// Replaces every call of a function in `model.functions()` by the function's body (nested calls up
// to 32 deep; a function that calls itself is an error). Fails with ResourceExhausted when the
// expanded graphs would hold more than `max_nodes` nodes. A model without functions is unchanged.
absl::Status InlineLocalFunctions(onnx::ModelProto& model, int64_t max_nodes);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_INLINE_FUNCTIONS_H_
