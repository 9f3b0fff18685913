// Building blocks of the importer's node rewrites (canonicalize.cc, contrib_ops.cc): constants of a
// node's dtype, helper nodes placed before the rewritten node, and turning a node into another op.
#ifndef ONNXRUN_IMPORTER_REWRITE_UTIL_H_
#define ONNXRUN_IMPORTER_REWRITE_UTIL_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace importer {

// Rewrites `node` in place; nodes that must run before it go to `prefix`, in order.
using Rewrite = std::function<absl::Status(ir::Graph&, ir::Node&, std::vector<ir::Node>&)>;

// Input `i` of `node` when it is a constant (an initializer), else nullptr.
const ir::Tensor* ConstantInput(const ir::Graph& graph, const ir::Node& node, size_t i);

// A constant named after the node: "<node>__<what>".
ir::ValueId NodeConstant(ir::Graph& graph, const ir::Node& node, const std::string& what, ir::Tensor value);

// Sets input `index` to a new constant, padding skipped optional inputs with kNoValue.
void SetConstantInput(ir::Graph& graph, ir::Node& node, size_t index, const std::string& what, ir::Tensor value);

// Moves an ints attribute into input `index` (int64 constant) when present.
void IntsAttrToInput(ir::Graph& graph, ir::Node& node, const std::string& attr, size_t index);

// A constant of a floating dtype and shape holding `values`.
absl::StatusOr<ir::Tensor> ValuesOfType(ir::DType dtype, const std::vector<float>& values, std::vector<int64_t> shape);
absl::StatusOr<ir::Tensor> ScalarOfType(ir::DType dtype, double value);

// The dtype of input i (float32 when the input is absent).
ir::DType InputDType(const ir::Graph& graph, const ir::Node& node, size_t i);

// A constant of input 0's dtype named after the node.
absl::StatusOr<ir::ValueId> ConstantLike(ir::Graph& graph, const ir::Node& node, const std::string& what,
                                         const std::vector<float>& values, std::vector<int64_t> shape);

// Appends op_type(inputs) to `prefix` (named after `node`, at its opset) and returns its output:
// a new value, or `output` when given (a value the original node declared).
ir::ValueId Prepend(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& prefix, const std::string& op_type,
                    std::vector<ir::ValueId> inputs, ir::ValueId output = ir::kNoValue);

// As Prepend, for an op with `count` outputs (new values); returns them.
std::vector<ir::ValueId> PrependWithOutputs(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& prefix,
                                            const std::string& op_type, std::vector<ir::ValueId> inputs, size_t count);

// Prepends Cast(x) to `dtype` (into `output` when given).
ir::ValueId PrependCast(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& prefix, ir::ValueId x,
                        ir::DType dtype, ir::ValueId output = ir::kNoValue);

// `node` becomes op_type(inputs), its attributes dropped.
void Become(ir::Node& node, const std::string& op_type, std::vector<ir::ValueId> inputs);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_REWRITE_UTIL_H_
