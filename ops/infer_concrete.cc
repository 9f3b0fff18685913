// InferConcrete: an op's inference on concrete input dims (see infer_concrete.h).
#include "ops/infer_concrete.h"

#include "absl/strings/str_cat.h"
#include "ops/op_def.h"

namespace ops {

ConcreteInput ConcreteInput::OfTensor(const ir::Tensor* tensor) {
  if (tensor == nullptr) return Absent();
  ConcreteInput input = Of(tensor->dtype(), tensor->shape(), tensor);
  input.kind = tensor->kind();
  input.optional = tensor->is_none();
  if (tensor->is_map()) input.map_key = tensor->map_keys().dtype();
  if (tensor->is_map_sequence()) input.map_key = tensor->elements().front().map_keys().dtype();
  return input;
}

absl::StatusOr<std::vector<ConcreteOutput>> InferConcrete(const ir::Node& node,
                                                          const std::vector<ConcreteInput>& inputs) {
  const OpDef* def = FindOpDef(node.op_type);
  if (def == nullptr) return absl::NotFoundError(absl::StrCat("no inference function for ", node.op_type));
  std::vector<ir::TensorType> types(inputs.size());
  InferContext ctx{node, {}, {}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool present = inputs[i].present;
    if (present && (inputs[i].kind != ir::ValueKind::kTensor || inputs[i].optional)) {
      types[i] = ir::TensorType{inputs[i].dtype, std::nullopt, inputs[i].kind, inputs[i].optional, inputs[i].map_key};
    } else if (present) {
      types[i] = ir::TensorType{inputs[i].dtype, ir::ShapeFromInts(inputs[i].dims)};
    }
    ctx.input_types.push_back(present ? &types[i] : nullptr);
    ctx.input_values.push_back(present ? inputs[i].value : nullptr);
  }
  absl::StatusOr<std::vector<ir::TensorType>> inferred = InferTypes(*def, ctx);
  if (!inferred.ok()) return inferred.status();
  std::vector<ConcreteOutput> outputs(node.outputs.size());
  for (size_t o = 0; o < outputs.size() && o < inferred->size(); ++o) {
    const ir::TensorType& type = (*inferred)[o];
    outputs[o].dtype = type.dtype;
    if (node.outputs[o] != ir::kNoValue && type.shape) outputs[o].dims = ir::ShapeToInts(*type.shape);
  }
  return outputs;
}

}  // namespace ops
