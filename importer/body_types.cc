// Types of untyped body inputs from the control-flow node's inputs.
#include "importer/body_types.h"

#include <algorithm>

namespace importer {
namespace {

using Hints = std::vector<std::optional<ir::TensorType>>;

std::optional<ir::TensorType> InputType(const ir::Graph& graph, const ir::Node& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == ir::kNoValue) return std::nullopt;
  return graph.value(node.inputs[i]).type;
}

// `type` without the dims at `axes` (sorted, non-negative after normalising against the rank).
ir::TensorType Without(ir::TensorType type, std::vector<int64_t> axes) {
  if (!type.shape) return type;
  const int64_t rank = static_cast<int64_t>(type.shape->size());
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  ir::Shape kept;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept.push_back((*type.shape)[d]);
  }
  if (kept.size() + axes.size() != static_cast<size_t>(rank)) return {type.dtype, std::nullopt};
  type.shape = std::move(kept);
  return type;
}

Hints LoopHints(const ir::Graph& graph, const ir::Node& node) {
  Hints hints = {ir::TensorType{ir::DType::kInt64, ir::Shape()}, ir::TensorType{ir::DType::kBool, ir::Shape()}};
  for (size_t i = 2; i < node.inputs.size(); ++i) hints.push_back(InputType(graph, node, i));
  return hints;
}

Hints ScanHints(const ir::Graph& graph, const ir::Node& node) {
  const bool batched = node.opset < 9;
  const size_t first = batched ? 1 : 0;
  const int64_t m = node.attrs.GetInt("num_scan_inputs", 0);
  if (m < 1 || first + static_cast<size_t>(m) > node.inputs.size()) return {};
  const size_t num_state = node.inputs.size() - first - static_cast<size_t>(m);
  const std::vector<int64_t> axes = node.attrs.GetInts("scan_input_axes");
  Hints hints;
  for (size_t i = first; i < node.inputs.size(); ++i) {
    std::optional<ir::TensorType> type = InputType(graph, node, i);
    const size_t j = i - first - num_state;  // scan input index when i is a scan input
    if (type && i - first >= num_state) {
      type = batched ? Without(*type, {0, 1}) : Without(*type, {j < axes.size() ? axes[j] : 0});
    } else if (type && batched) {
      type = Without(*type, {0});
    }
    hints.push_back(type);
  }
  return hints;
}

}  // namespace

std::vector<std::optional<ir::TensorType>> BodyInputTypes(const ir::Graph& graph, const ir::Node& node) {
  if (node.op_type == "Loop") return LoopHints(graph, node);
  if (node.op_type == "Scan") return ScanHints(graph, node);
  return {};
}

}  // namespace importer
