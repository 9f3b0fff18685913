// MatchAddLayerNorm and IsAddLayerNormStep (add_layer_norm.h).
#include "partitioner/add_layer_norm.h"

namespace partitioner {
namespace {

// `operand` has the sum's dtype and dims: each dim equal, or unknown and unnamed in both.
bool LikeSum(const ir::TensorType& operand, const ir::TensorType& sum) {
  if (operand.dtype != sum.dtype || !operand.shape || !sum.shape || operand.shape->size() != sum.shape->size()) {
    return false;
  }
  for (size_t d = 0; d < sum.shape->size(); ++d) {
    const ir::Dim &a = (*operand.shape)[d], &b = (*sum.shape)[d];
    const bool both_anonymous = !a.known() && a.symbol.empty() && !b.known() && b.symbol.empty();
    if (!(a == b) && !both_anonymous) return false;
  }
  return true;
}

bool IsFloat(ir::DType t) { return t == ir::DType::kFloat32 || t == ir::DType::kFloat16 || t == ir::DType::kBFloat16; }

}  // namespace

std::optional<AddLayerNorm> MatchAddLayerNorm(const ir::Graph& graph, ir::NodeId add, const ValueReaders& readers) {
  const ir::Node& node = graph.node(add);
  if (node.op_type != "Add" || node.inputs.size() != 2 || node.outputs.size() != 1) return std::nullopt;
  const ir::ValueId sum = node.outputs[0];
  const ir::TensorType& sum_type = graph.value(sum).type;
  if (!IsFloat(sum_type.dtype) || graph.IsGraphOutput(sum)) return std::nullopt;
  for (ir::ValueId in : node.inputs) {
    if (in == ir::kNoValue || graph.value(in).constant || !LikeSum(graph.value(in).type, sum_type)) {
      return std::nullopt;
    }
  }
  const std::vector<ir::NodeId> sum_readers = readers(sum);
  if (sum_readers.size() != 1) return std::nullopt;
  const ir::Node& norm = graph.node(sum_readers[0]);
  if (norm.op_type != "LayerNormalization" || norm.input(0) != sum) return std::nullopt;
  return AddLayerNorm{add, sum_readers[0]};
}

bool IsAddLayerNormStep(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes) {
  if (nodes.size() != 2) return false;
  const ValueReaders only_the_norm = [&](ir::ValueId) { return std::vector<ir::NodeId>{nodes[1]}; };
  const std::optional<AddLayerNorm> form = MatchAddLayerNorm(graph, nodes[0], only_the_norm);
  return form && form->norm == nodes[1];
}

}  // namespace partitioner
