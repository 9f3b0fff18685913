// FoldShapeComputations: the plan's graph specialised to concrete input dims, node by node in
// order: its types inferred (with the values folded so far read as constants, so a Reshape to a
// computed shape gets concrete dims and a later Shape of it folds too), then, when all its inputs
// are known on the host — constants, values folded before it, and for Shape and Size the concrete
// dims of their input — run by its CPU kernel (shape_folding.h).
#include "runtime/shape_folding.h"

#include "kernels/cpu/run_node.h"
#include "ops/infer_graph.h"
#include "ops/infer_util.h"
#include "ops/random.h"

namespace exec {
namespace {

constexpr int64_t kMaxFoldedElements = int64_t{1} << 20;

// The graph with the inputs' dims set (node types are inferred as the fold goes).
ir::Graph WithInputDims(const Plan& plan, const std::vector<std::vector<int64_t>>& input_dims) {
  ir::Graph graph = plan.graph;  // constants share their buffers
  for (size_t i = 0; i < graph.inputs().size() && i < input_dims.size(); ++i) {
    ir::Value& input = graph.value(graph.inputs()[i]);
    if (input.type.is_tensor()) input.type.shape = ir::ShapeFromInts(input_dims[i]);
  }
  return graph;
}

// Infers node `id`'s output types for the dims known so far (unknown shapes where it cannot).
void InferForDims(ir::Graph& graph, ir::NodeId id) {
  if (ops::InferNodeTypes(graph, id).ok()) return;
  for (ir::ValueId out : graph.node(id).outputs) {
    if (out != ir::kNoValue) graph.value(out).type.shape.reset();
  }
}

// Shape or Size of a value whose dims are concrete (its bytes are never read).
bool ReadsOnlyDims(const ir::Graph& graph, const ir::Node& node) {
  if (node.op_type != "Shape" && node.op_type != "Size") return false;
  const ir::TensorType& type = graph.value(node.inputs[0]).type;
  return type.is_tensor() && type.shape && ir::ShapeToInts(*type.shape).has_value();
}

// The node's inputs when all are known (nullptr for an absent one), else nullopt.
std::optional<std::vector<const ir::Tensor*>> KnownInputs(const ir::Graph& graph, const ir::Node& node,
                                                          const std::map<ir::ValueId, ir::Tensor>& folded) {
  std::vector<const ir::Tensor*> inputs;
  bool any = false;
  for (ir::ValueId in : node.inputs) {
    if (in == ir::kNoValue) {
      inputs.push_back(nullptr);
      continue;
    }
    any = true;
    if (graph.value(in).constant) {
      inputs.push_back(&*graph.value(in).constant);
    } else if (auto it = folded.find(in); it != folded.end()) {
      inputs.push_back(&it->second);
    } else {
      return std::nullopt;
    }
  }
  if (!any) return std::nullopt;
  return inputs;
}

}  // namespace

std::map<ir::ValueId, ir::Tensor> FoldShapeComputations(const Plan& plan,
                                                        const std::vector<std::vector<int64_t>>& input_dims) {
  ir::Graph graph = WithInputDims(plan, input_dims);
  std::map<ir::ValueId, ir::Tensor> folded;
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(graph.nodes().size()); ++id) {
    InferForDims(graph, id);
    const ir::Node& node = graph.node(id);
    if (ReadsOnlyDims(graph, node)) {  // Shape and Size need only the concrete dims
      const ir::TensorType& type = graph.value(node.inputs[0]).type;
      folded[node.outputs[0]] = ops::ShapeOrSizeOf(node, *ir::ShapeToInts(*type.shape));
      graph.value(node.outputs[0]).constant = folded[node.outputs[0]];
      continue;
    }
    if (ops::DrawsUnseeded(graph, node)) continue;  // a fresh draw on every run
    std::optional<std::vector<const ir::Tensor*>> inputs = KnownInputs(graph, node, folded);
    if (!inputs) continue;
    absl::StatusOr<std::vector<ir::Tensor>> outputs = kernels::cpu::RunNode(node, *inputs);
    if (!outputs.ok()) continue;  // left to its step, which reports the error
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const ir::Tensor& out = (*outputs)[o];
      if (node.outputs[o] == ir::kNoValue || !out.is_dense() || out.num_elements() > kMaxFoldedElements) continue;
      folded[node.outputs[o]] = out;
      graph.value(node.outputs[o]).constant = out;  // later inference reads it (a Reshape's shape)
    }
  }
  return folded;
}

bool StepIsFolded(const Step& step, const std::map<ir::ValueId, ir::Tensor>& folded) {
  if (step.outputs.empty()) return false;
  for (ir::ValueId out : step.outputs) {
    if (folded.count(out) == 0) return false;
  }
  return true;
}

}  // namespace exec
