// Type inference of one node or the whole graph.
#include "ops/infer_graph.h"

#include "absl/strings/str_cat.h"
#include "ops/op_def.h"

namespace ops {

absl::Status InferNodeTypes(ir::Graph& graph, ir::NodeId node_id) {
  const ir::Node& node = graph.node(node_id);
  auto fail = [&](const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat("node '", node.name, "' (", node.op_type, "): ", status.message()));
  };
  const OpDef* def = FindOpDef(node.op_type);
  if (def == nullptr) return fail(absl::UnimplementedError("unsupported op"));
  const int num_inputs = static_cast<int>(node.inputs.size());
  if (num_inputs < def->min_inputs || num_inputs > def->max_inputs) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("has ", num_inputs, " inputs, expects ", def->min_inputs, " to ", def->max_inputs)));
  }
  InferContext ctx{node, {}, {}};
  for (int i = 0; i < num_inputs; ++i) {
    ir::ValueId id = node.inputs[i];
    if (id == ir::kNoValue) {
      if (i < def->min_inputs) {
        return fail(absl::InvalidArgumentError(absl::StrCat("required input ", i, " is missing")));
      }
      ctx.input_types.push_back(nullptr);
      ctx.input_values.push_back(nullptr);
      continue;
    }
    const ir::Value& v = graph.value(id);
    if (v.type.dtype == ir::DType::kUndefined) {
      return fail(absl::InvalidArgumentError(absl::StrCat("input '", v.name, "' has no known type")));
    }
    ctx.input_types.push_back(&v.type);
    ctx.input_values.push_back(v.constant ? &*v.constant : nullptr);
  }
  absl::StatusOr<std::vector<ir::TensorType>> types = InferTypes(*def, ctx);
  if (!types.ok()) return fail(types.status());
  if (types->size() < node.outputs.size()) {
    return fail(absl::InternalError("inference returned too few output types"));
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != ir::kNoValue) graph.value(node.outputs[i]).type = (*types)[i];
  }
  return absl::OkStatus();
}

absl::Status InferGraphTypes(ir::Graph& graph) {
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(graph.nodes().size()); ++id) {
    absl::Status status = InferNodeTypes(graph, id);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace ops
