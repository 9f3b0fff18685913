// Building blocks of the importer's node rewrites; see rewrite_util.h.
#include "importer/rewrite_util.h"

#include "absl/strings/str_cat.h"
#include "ir/half.h"

namespace importer {

using ir::Graph;
using ir::Node;
using ir::Tensor;

ir::ValueId NodeConstant(Graph& graph, const Node& node, const std::string& what, Tensor value) {
  return graph.AddConstant(absl::StrCat(node.name, "__", what), std::move(value));
}

void SetConstantInput(Graph& graph, Node& node, size_t index, const std::string& what, Tensor value) {
  ir::ValueId id = NodeConstant(graph, node, what, std::move(value));
  if (node.inputs.size() <= index) node.inputs.resize(index + 1, ir::kNoValue);
  node.inputs[index] = id;
}

void IntsAttrToInput(Graph& graph, Node& node, const std::string& attr, size_t index) {
  if (!node.attrs.Has(attr)) return;
  SetConstantInput(graph, node, index, attr, Tensor::FromInt64s(node.attrs.GetInts(attr)));
  node.attrs.Erase(attr);
}

absl::StatusOr<Tensor> ValuesOfType(ir::DType dtype, const std::vector<float>& values, std::vector<int64_t> shape) {
  absl::StatusOr<Tensor> t = Tensor::Create(dtype, std::move(shape));
  if (!t.ok()) return t.status();
  for (size_t i = 0; i < values.size(); ++i) {
    switch (dtype) {
      case ir::DType::kFloat32: t->data<float>()[i] = values[i]; break;
      case ir::DType::kFloat64: t->data<double>()[i] = values[i]; break;
      case ir::DType::kFloat16: t->data<ir::Half>()[i] = ir::Half(values[i]); break;
      case ir::DType::kBFloat16: t->data<ir::BFloat16>()[i] = ir::BFloat16(values[i]); break;
      case ir::DType::kUint8: t->data<uint8_t>()[i] = static_cast<uint8_t>(values[i]); break;
      case ir::DType::kInt8: t->data<int8_t>()[i] = static_cast<int8_t>(values[i]); break;
      default:
        return absl::UnimplementedError(
            absl::StrCat("a constant of dtype ", ir::DTypeName(dtype), " is not supported"));
    }
  }
  return t;
}

absl::StatusOr<Tensor> ScalarOfType(ir::DType dtype, double value) {
  return ValuesOfType(dtype, {static_cast<float>(value)}, {});
}

ir::DType InputDType(const Graph& graph, const Node& node, size_t i) {
  ir::ValueId id = node.input(i);
  return id == ir::kNoValue ? ir::DType::kFloat32 : graph.value(id).type.dtype;
}

absl::StatusOr<ir::ValueId> ConstantLike(Graph& graph, const Node& node, const std::string& what,
                                         const std::vector<float>& values, std::vector<int64_t> shape) {
  absl::StatusOr<Tensor> t = ValuesOfType(InputDType(graph, node, 0), values, std::move(shape));
  if (!t.ok()) return t.status();
  return NodeConstant(graph, node, what, *std::move(t));
}

namespace {

// Appends op_type(inputs) without outputs to `prefix`, named after `node`, at its opset.
Node& AppendNode(const Node& node, std::vector<Node>& prefix, const std::string& op_type,
                 std::vector<ir::ValueId> inputs) {
  Node added;
  added.name = absl::StrCat(node.name, "__", prefix.size(), "_", op_type);
  added.op_type = op_type;
  added.opset = node.opset;
  added.inputs = std::move(inputs);
  prefix.push_back(std::move(added));
  return prefix.back();
}

}  // namespace

ir::ValueId Prepend(Graph& graph, const Node& node, std::vector<Node>& prefix, const std::string& op_type,
                    std::vector<ir::ValueId> inputs, ir::ValueId output) {
  Node& added = AppendNode(node, prefix, op_type, std::move(inputs));
  added.outputs = {output != ir::kNoValue ? output : graph.AddValue(absl::StrCat(added.name, "_out"))};
  return added.outputs[0];
}

std::vector<ir::ValueId> PrependWithOutputs(Graph& graph, const Node& node, std::vector<Node>& prefix,
                                            const std::string& op_type, std::vector<ir::ValueId> inputs, size_t count) {
  Node& added = AppendNode(node, prefix, op_type, std::move(inputs));
  for (size_t i = 0; i < count; ++i) added.outputs.push_back(graph.AddValue(absl::StrCat(added.name, "_out", i)));
  return added.outputs;
}

ir::ValueId PrependCast(Graph& graph, const Node& node, std::vector<Node>& prefix, ir::ValueId x, ir::DType dtype,
                        ir::ValueId output) {
  const ir::ValueId cast = Prepend(graph, node, prefix, "Cast", {x}, output);
  prefix.back().attrs.Set("to", static_cast<int64_t>(dtype));
  return cast;
}

const ir::Tensor* ConstantInput(const Graph& graph, const Node& node, size_t i) {
  const ir::ValueId id = node.input(i);
  if (id == ir::kNoValue || !graph.value(id).constant) return nullptr;
  return &*graph.value(id).constant;
}

void Become(Node& node, const std::string& op_type, std::vector<ir::ValueId> inputs) {
  node.op_type = op_type;
  node.inputs = std::move(inputs);
  node.attrs = ir::Attributes();
}

}  // namespace importer
