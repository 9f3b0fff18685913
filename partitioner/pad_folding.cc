// PadFolding: a spatial zero Pad before a Conv becomes the Conv's pads (see pad_folding.h).
#include "partitioner/pad_folding.h"

#include <optional>
#include <string>
#include <vector>

namespace partitioner {
namespace {

const ir::Tensor* ConstantInput(const ir::Graph& graph, const ir::Node& node, size_t i) {
  const ir::ValueId id = node.input(i);
  if (id == ir::kNoValue || !graph.value(id).constant) return nullptr;
  return &*graph.value(id).constant;
}

// The Pad's [begin..., end...] pads over all `rank` axes when it is a constant-mode pad with zero
// (or absent) value and constant pads / axes; nullopt otherwise.
std::optional<std::vector<int64_t>> ZeroPads(const ir::Graph& graph, const ir::Node& pad, int64_t rank) {
  if (pad.attrs.GetString("mode", "constant") != "constant") return std::nullopt;
  const ir::Tensor* pads = ConstantInput(graph, pad, 1);
  if (pads == nullptr || pads->dtype() != ir::DType::kInt64) return std::nullopt;
  if (pad.input(2) != ir::kNoValue) {
    const ir::Tensor* value = ConstantInput(graph, pad, 2);
    if (value == nullptr || value->num_elements() != 1 || value->GetAsDouble(0) != 0.0) return std::nullopt;
  }
  const std::vector<int64_t> given = pads->ToInt64Vector();
  std::vector<int64_t> axes(rank);
  for (int64_t a = 0; a < rank; ++a) axes[a] = a;
  if (pad.input(3) != ir::kNoValue) {
    const ir::Tensor* axes_tensor = ConstantInput(graph, pad, 3);
    if (axes_tensor == nullptr) return std::nullopt;
    axes = axes_tensor->ToInt64Vector();
  }
  if (given.size() != 2 * axes.size()) return std::nullopt;
  std::vector<int64_t> full(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return std::nullopt;
    full[axis] += given[i];
    full[rank + axis] += given[axes.size() + i];
  }
  return full;
}

// The Conv's explicit pads (zeros when absent), or nullopt when auto_pad asks for SAME padding.
std::optional<std::vector<int64_t>> ConvPads(const ir::Node& conv, int64_t spatial) {
  const std::string auto_pad = conv.attrs.GetString("auto_pad", "NOTSET");
  if (auto_pad == "VALID") return std::vector<int64_t>(2 * spatial, 0);
  if (auto_pad != "NOTSET") return std::nullopt;
  std::vector<int64_t> pads = conv.attrs.GetInts("pads");
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (static_cast<int64_t>(pads.size()) != 2 * spatial) return std::nullopt;
  return pads;
}

// Folds Pad `pad_id` into Conv `conv_id` (which reads its output as X) when the forms allow.
bool FoldIntoConv(ir::Graph& graph, ir::NodeId pad_id, ir::NodeId conv_id) {
  const ir::Node& pad = graph.node(pad_id);
  const ir::Node& conv = graph.node(conv_id);
  const ir::Tensor* w = ConstantInput(graph, conv, 1);
  const int64_t rank = w != nullptr ? w->rank() : graph.value(conv.input(1)).type.rank();
  if (rank < 3) return false;
  const int64_t spatial = rank - 2;
  std::optional<std::vector<int64_t>> pads = ZeroPads(graph, pad, rank);
  std::optional<std::vector<int64_t>> conv_pads = ConvPads(conv, spatial);
  if (!pads || !conv_pads) return false;
  for (int64_t p : *pads) {
    if (p < 0) return false;
  }
  if ((*pads)[0] != 0 || (*pads)[1] != 0 || (*pads)[rank] != 0 || (*pads)[rank + 1] != 0) return false;
  std::vector<int64_t> merged = *conv_pads;
  for (int64_t i = 0; i < spatial; ++i) {
    merged[i] += (*pads)[2 + i];
    merged[spatial + i] += (*pads)[rank + 2 + i];
  }
  const ir::ValueId x = pad.input(0);
  ir::Node& target = graph.node(conv_id);
  target.inputs[0] = x;
  target.attrs.Set("pads", merged);
  target.attrs.Erase("auto_pad");
  return true;
}

}  // namespace

absl::StatusOr<bool> PadFolding::Run(ir::Graph& graph) {
  folded_ = 0;
  const std::vector<std::vector<ir::NodeId>> consumers = graph.ComputeConsumers();
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(graph.nodes().size()); ++id) {
    const ir::Node& pad = graph.node(id);
    if (pad.op_type != "Pad" || pad.outputs.size() != 1 || pad.input(0) == ir::kNoValue) continue;
    const ir::ValueId out = pad.outputs[0];
    if (out == ir::kNoValue || graph.IsGraphOutput(out) || consumers[out].size() != 1) continue;
    const ir::NodeId reader = consumers[out][0];
    const ir::Node& conv = graph.node(reader);
    if (conv.op_type != "Conv" || conv.input(0) != out || conv.input(1) == out || conv.input(2) == out) continue;
    if (FoldIntoConv(graph, id, reader)) ++folded_;
  }
  return folded_ > 0;  // the Pads left unread go with dead-node removal
}

}  // namespace partitioner
