// Body interpreter and axis slicing/stacking for the control-flow kernels.
#include "kernels/cpu/subgraph.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/run_node.h"

namespace kernels::cpu {
namespace {

// dims split at `axis`: the product before it and the product after it.
std::pair<int64_t, int64_t> OuterInner(const std::vector<int64_t>& dims, int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
    if (i < axis) outer *= dims[i];
    if (i > axis) inner *= dims[i];
  }
  return {outer, inner};
}

absl::Status BindInputs(const ir::Graph& body, const std::vector<const ir::Tensor*>& inputs,
                        std::vector<ir::Tensor>& values) {
  if (inputs.size() != body.inputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the body takes ", body.inputs().size(), " inputs, it was given ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& v = body.value(body.inputs()[i]);
    if (inputs[i] == nullptr || !inputs[i]->valid()) {
      return absl::InvalidArgumentError(absl::StrCat("body input '", v.name, "' has no value"));
    }
    if (v.type.dtype != ir::DType::kUndefined && inputs[i]->dtype() != v.type.dtype) {
      return absl::InvalidArgumentError(absl::StrCat("body input '", v.name, "' is ", ir::DTypeName(v.type.dtype),
                                                     " but was given ", ir::DTypeName(inputs[i]->dtype())));
    }
    values[body.inputs()[i]] = *inputs[i];
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<ir::Tensor>> RunBody(const ir::Graph& body, const std::vector<const ir::Tensor*>& inputs) {
  std::vector<ir::Tensor> values(body.values().size());
  for (size_t i = 0; i < body.values().size(); ++i) {
    if (body.value(i).constant) values[i] = *body.value(i).constant;  // shares the bytes
  }
  if (absl::Status bound = BindInputs(body, inputs, values); !bound.ok()) return bound;
  for (const ir::Node& node : body.nodes()) {
    std::vector<const ir::Tensor*> node_inputs;
    for (ir::ValueId in : node.inputs) {
      if (in != ir::kNoValue && !values[in].valid()) {
        return absl::InternalError(absl::StrCat("body value '", body.value(in).name, "' is not available"));
      }
      node_inputs.push_back(in == ir::kNoValue ? nullptr : &values[in]);
    }
    absl::StatusOr<std::vector<ir::Tensor>> outputs = RunNode(node, node_inputs);
    if (!outputs.ok()) return outputs.status();
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] != ir::kNoValue) values[node.outputs[i]] = std::move((*outputs)[i]);
    }
  }
  std::vector<ir::Tensor> outputs;
  for (ir::ValueId out : body.outputs()) {
    if (!values[out].valid()) {
      return absl::InternalError(absl::StrCat("body output '", body.value(out).name, "' was not produced"));
    }
    outputs.push_back(values[out]);
  }
  return outputs;
}

absl::StatusOr<ir::Tensor> SliceAt(const ir::Tensor& t, int64_t axis, int64_t index) {
  if (axis < 0 || axis >= t.rank() || index < 0 || index >= t.shape()[axis]) {
    return absl::InvalidArgumentError(absl::StrCat("index ", index, " on axis ", axis, " is outside a tensor of shape ",
                                                   ir::ShapeToString(t.shape())));
  }
  std::vector<int64_t> dims = t.shape();
  const int64_t length = dims[axis];
  const auto [outer, inner] = OuterInner(dims, axis);
  dims.erase(dims.begin() + axis);
  absl::StatusOr<ir::Tensor> out = ir::Tensor::Create(t.dtype(), dims);
  if (!out.ok()) return out.status();
  const size_t block = static_cast<size_t>(inner) * ir::DTypeSize(t.dtype());
  const auto* src = static_cast<const uint8_t*>(t.raw_data());
  auto* dst = static_cast<uint8_t*>(out->raw_data());
  for (int64_t o = 0; o < outer && block > 0; ++o) {
    std::memcpy(dst + o * block, src + (o * length + index) * block, block);
  }
  return out;
}

absl::StatusOr<ir::Tensor> Stack(const std::vector<ir::Tensor>& parts, int64_t axis, bool reverse, ir::DType dtype,
                                 const std::vector<int64_t>& empty_dims) {
  std::vector<int64_t> dims = parts.empty() ? empty_dims : parts[0].shape();
  if (axis < 0 || axis > static_cast<int64_t>(dims.size())) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is outside [0, ", dims.size(), "]"));
  }
  for (const ir::Tensor& part : parts) {
    if (!part.is_dense() || part.dtype() == ir::DType::kString) {
      return absl::UnimplementedError(
          absl::StrCat("a scan output part must be a numeric tensor, not ", part.Describe()));
    }
    if (part.dtype() != dtype || part.shape() != parts[0].shape()) {
      return absl::InvalidArgumentError(absl::StrCat("scan output parts differ: ", ir::ShapeToString(part.shape()),
                                                     " and ", ir::ShapeToString(parts[0].shape())));
    }
  }
  const int64_t length = static_cast<int64_t>(parts.size());
  dims.insert(dims.begin() + axis, length);
  absl::StatusOr<ir::Tensor> out = ir::Tensor::Create(dtype, dims);
  if (!out.ok()) return out.status();
  const auto [outer, inner] = OuterInner(dims, axis);
  const size_t block = static_cast<size_t>(inner) * ir::DTypeSize(dtype);
  auto* dst = static_cast<uint8_t*>(out->raw_data());
  for (int64_t p = 0; p < length && block > 0; ++p) {
    const auto* src = static_cast<const uint8_t*>(parts[reverse ? length - 1 - p : p].raw_data());
    for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + (o * length + p) * block, src + o * block, block);
  }
  return out;
}

}  // namespace kernels::cpu
