// ConstantFolding: evaluate all-constant nodes on the CPU and replace them by constant values.
#include "partitioner/constant_folding.h"

#include <algorithm>
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
std::optional<Tensors> Evaluate(const ir::Graph& graph, const ir::Node& node, int64_t max_output_elements) {
  const ops::OpDef* def = ops::FindOpDef(node.op_type);
  kernels::cpu::KernelFn kernel = kernels::cpu::FindKernel(node.op_type);
  if (def == nullptr || kernel == nullptr) return std::nullopt;
  const int num_inputs = static_cast<int>(node.inputs.size());
  if (num_inputs < def->min_inputs || num_inputs > def->max_inputs) return std::nullopt;
  std::vector<ir::TensorType> types(node.inputs.size());
  ops::InferContext ictx{node, {}, {}};
  kernels::cpu::KernelContext kctx{node, {}, {}};
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::Tensor* t = node.inputs[i] == ir::kNoValue ? nullptr : &*graph.value(node.inputs[i]).constant;
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

// The node's outputs when it folds, else nullopt.
std::optional<Tensors> TryFold(const ir::Graph& graph, const ir::Node& node, int64_t max_output_elements) {
  // A fresh draw on every run.
  if (ops::DrawsUnseeded(graph, node)) return std::nullopt;
  if (AllInputsConstant(graph, node)) return Evaluate(graph, node, max_output_elements);
  if (node.op_type == "Shape" && node.outputs.size() == 1) {
    std::optional<ir::Tensor> shape = FoldShape(graph, node);
    if (shape) return Tensors{*std::move(shape)};
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<bool> ConstantFolding::Run(ir::Graph& graph) {
  folded_ = 0;
  std::vector<ir::Node> kept;
  kept.reserve(graph.nodes().size());
  for (const ir::Node& node : graph.nodes()) {
    std::optional<Tensors> outputs = TryFold(graph, node, max_output_elements_);
    if (!outputs) {
      kept.push_back(node);
      continue;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == ir::kNoValue) continue;
      ir::Value& value = graph.value(node.outputs[i]);
      value.type = ir::TensorType{(*outputs)[i].dtype(), ir::ShapeFromInts((*outputs)[i].shape())};
      value.constant = std::move((*outputs)[i]);
    }
    ++folded_;
  }
  if (folded_ == 0) return false;
  graph.ReplaceNodes(std::move(kept));
  if (absl::Status s = ops::InferGraphTypes(graph); !s.ok()) return s;
  return true;
}

}  // namespace partitioner
