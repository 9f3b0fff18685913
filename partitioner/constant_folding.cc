// ConstantFolding: evaluate all-constant nodes on the CPU and replace them by constant values.
#include "partitioner/constant_folding.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/cpu/kernel.h"
#include "ops/infer_graph.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
#include "ops/random.h"

namespace partitioner {
namespace {

using Tensors = std::vector<ir::Tensor>;

// Shape(data) of a value whose dims [start, end) are known: the int64 vector, else nullopt.
std::optional<ir::Tensor> FoldShape(const ir::Graph& graph, const ir::Node& node) {
  const ir::TensorType& type = graph.value(node.input(0)).type;
  if (!type.shape) return std::nullopt;
  const int64_t rank = type.rank();
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(node.attrs.GetInt("start", 0));
  const int64_t end = clamp(node.attrs.GetInt("end", rank));
  std::vector<int64_t> dims;  // the known dims in [start, end); others need not be known
  for (int64_t i = 0; i < rank; ++i) {
    const ir::Dim& d = (*type.shape)[i];
    if (i >= start && i < end && !d.known()) return std::nullopt;
    dims.push_back(d.known() ? d.value : 0);
  }
  return ops::ShapeOrSizeOf(node, dims);
}

bool AllInputsConstant(const ir::Graph& graph, const ir::Node& node) {
  bool any = false;
  for (ir::ValueId in : node.inputs) {
    if (in == ir::kNoValue) continue;
    if (!graph.value(in).constant) return false;
    any = true;
  }
  return any;
}

// Runs the node's inference and CPU kernel on its constant inputs. nullopt when the node cannot
// be folded: no kernel, a non-concrete or too large output, or a failing kernel.
// `inputs`: one per node input (null for a missing optional one).
std::optional<Tensors> Evaluate(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                                int64_t max_output_elements) {
  const ops::OpDef* def = ops::FindOpDef(node.op_type);
  kernels::cpu::KernelFn kernel = kernels::cpu::FindKernel(node.op_type);
  if (def == nullptr || kernel == nullptr) return std::nullopt;
  const int num_inputs = static_cast<int>(node.inputs.size());
  if (num_inputs < def->min_inputs || num_inputs > def->max_inputs) return std::nullopt;
  std::vector<ir::TensorType> types(node.inputs.size());
  ops::InferContext ictx{node, {}, {}};
  kernels::cpu::KernelContext kctx{node, {}, {}};
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::Tensor* t = inputs[i];
    if (t != nullptr) types[i] = {t->dtype(), ir::ShapeFromInts(t->shape())};
    ictx.input_types.push_back(t != nullptr ? &types[i] : nullptr);
    ictx.input_values.push_back(t);
    kctx.inputs.push_back(t);
  }
  absl::StatusOr<std::vector<ir::TensorType>> out_types = ops::InferTypes(*def, ictx);
  if (!out_types.ok() || out_types->size() < node.outputs.size()) return std::nullopt;
  Tensors outputs(node.outputs.size());
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) continue;
    const ir::TensorType& type = (*out_types)[i];
    std::optional<std::vector<int64_t>> shape;
    if (type.shape) shape = ir::ShapeToInts(*type.shape);
    if (!shape) return std::nullopt;
    absl::StatusOr<int64_t> count = ir::CheckedElementCount(*shape, type.dtype);
    if (!count.ok() || *count > max_output_elements) return std::nullopt;
    absl::StatusOr<ir::Tensor> tensor = ir::Tensor::Create(type.dtype, *shape);
    if (!tensor.ok()) return std::nullopt;
    outputs[i] = *std::move(tensor);
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    kctx.outputs.push_back(node.outputs[i] == ir::kNoValue ? nullptr : &outputs[i]);
  }
  if (!kernel(kctx).ok()) return std::nullopt;
  return outputs;
}

std::vector<const ir::Tensor*> ConstantInputs(const ir::Graph& graph, const ir::Node& node) {
  std::vector<const ir::Tensor*> inputs;
  for (ir::ValueId in : node.inputs) inputs.push_back(in == ir::kNoValue ? nullptr : &*graph.value(in).constant);
  return inputs;
}

// A node folds without bloating the constants when its output is no larger than its constant
// inputs, which it usually replaces (a weight's Transpose or Cast).
int64_t ConstantInputElements(const ir::Graph& graph, const ir::Node& node) {
  int64_t total = 0;
  for (ir::ValueId in : node.inputs) {
    if (in != ir::kNoValue) total += graph.value(in).constant->num_elements();
  }
  return total;
}

// Gather or Slice of a Shape whose selected dims are known (torch 2 reads the head size as
// Shape(q)[-1] while the batch is dynamic): the Shape's vector with -1 for each unknown dim goes
// through the node's kernel, and the result folds when no -1 reaches it (a dim is never -1).
std::optional<Tensors> FoldShapeSelection(const ir::Graph& graph, const ir::Node& node,
                                          const std::map<ir::ValueId, const ir::Node*>& shape_nodes) {
  if ((node.op_type != "Gather" && node.op_type != "Slice") || node.inputs.empty()) return std::nullopt;
  auto shape_node = shape_nodes.find(node.inputs[0]);
  if (shape_node == shape_nodes.end()) return std::nullopt;
  const ir::TensorType& type = graph.value(shape_node->second->input(0)).type;
  if (!type.shape) return std::nullopt;
  std::vector<int64_t> dims;
  for (const ir::Dim& d : *type.shape) dims.push_back(d.known() ? d.value : -1);
  const ir::Tensor partial = ops::ShapeOrSizeOf(*shape_node->second, dims);
  std::vector<const ir::Tensor*> inputs = {&partial};
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.inputs[i] != ir::kNoValue && !graph.value(node.inputs[i]).constant) return std::nullopt;
    inputs.push_back(node.inputs[i] == ir::kNoValue ? nullptr : &*graph.value(node.inputs[i]).constant);
  }
  std::optional<Tensors> out = Evaluate(node, inputs, int64_t{1} << 10);
  if (!out || out->size() != 1 || (*out)[0].dtype() != ir::DType::kInt64) return std::nullopt;
  for (int64_t i = 0; i < (*out)[0].num_elements(); ++i) {
    if ((*out)[0].GetAsInt64(i) < 0) return std::nullopt;
  }
  return out;
}

// The node's outputs when it folds, else nullopt.
std::optional<Tensors> TryFold(const ir::Graph& graph, const ir::Node& node, int64_t max_output_elements,
                               const std::map<ir::ValueId, const ir::Node*>& shape_nodes) {
  // A fresh draw on every run.
  if (ops::DrawsUnseeded(graph, node)) return std::nullopt;
  if (AllInputsConstant(graph, node)) {
    return Evaluate(node, ConstantInputs(graph, node),
                    std::max(max_output_elements, ConstantInputElements(graph, node)));
  }
  if (node.op_type == "Shape" && node.outputs.size() == 1) {
    std::optional<ir::Tensor> shape = FoldShape(graph, node);
    if (shape) return Tensors{*std::move(shape)};
  }
  return FoldShapeSelection(graph, node, shape_nodes);
}

// One pass over the nodes: folds what it can, then re-infers types. Returns the nodes folded.
absl::StatusOr<int> FoldOnce(ir::Graph& graph, int64_t max_output_elements) {
  int folded = 0;
  std::vector<ir::Node> kept;
  kept.reserve(graph.nodes().size());
  std::map<ir::ValueId, const ir::Node*> shape_nodes;  // Shape outputs not folded -> their node
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(graph.nodes().size()); ++id) {
    // Types from the values folded before this node (a Reshape whose target just became a
    // constant); a node that fails here is left for the final inference to report.
    (void)ops::InferNodeTypes(graph, id);
    const ir::Node& node = graph.node(id);
    std::optional<Tensors> outputs = TryFold(graph, node, max_output_elements, shape_nodes);
    if (!outputs) {
      if (node.op_type == "Shape" && node.outputs.size() == 1) shape_nodes[node.outputs[0]] = &node;
      kept.push_back(node);
      continue;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == ir::kNoValue) continue;
      ir::Value& value = graph.value(node.outputs[i]);
      value.type = ir::TensorType{(*outputs)[i].dtype(), ir::ShapeFromInts((*outputs)[i].shape())};
      value.constant = std::move((*outputs)[i]);
    }
    ++folded;
  }
  if (folded == 0) return 0;
  graph.ReplaceNodes(std::move(kept));
  if (absl::Status s = ops::InferGraphTypes(graph); !s.ok()) return s;
  return folded;
}

}  // namespace

absl::StatusOr<bool> ConstantFolding::Run(ir::Graph& graph) {
  // Shapes inferred after one pass's folds (a Reshape's now-constant target) let more fold in the
  // next; a few passes reach the fixed point on exported graphs.
  constexpr int kMaxPasses = 8;
  folded_ = 0;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    absl::StatusOr<int> folded = FoldOnce(graph, max_output_elements_);
    if (!folded.ok()) return folded.status();
    if (*folded == 0) break;
    folded_ += *folded;
  }
  return folded_ > 0;
}

}  // namespace partitioner
