// One node on the CPU: infer concrete output shapes, allocate, run the reference kernel.
#include "kernels/cpu/run_node.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/kernel_traits.h"
#include "ops/infer_concrete.h"
#include "ops/op_def.h"

namespace kernels::cpu {
namespace {

absl::Status NodeError(const ir::Node& node, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("node '", node.name, "' (", node.op_type, "): ", status.message()));
}

absl::Status CheckOutputSize(size_t i, ir::DType dtype, const std::vector<int64_t>& dims, int64_t max_bytes) {
  absl::StatusOr<int64_t> count = ir::CheckedElementCount(dims, dtype);
  if (!count.ok()) return count.status();
  const int64_t bytes = *count * static_cast<int64_t>(ir::DTypeSize(dtype));
  if (bytes <= max_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat("output ", i, " of type ", ir::DTypeName(dtype),
                                                   ir::ShapeToString(dims), " needs ", bytes,
                                                   " bytes, more than the limit of ", max_bytes));
}

// The input whose bytes output 0 may take over (see RunNode), or nullptr.
const ir::Tensor* ReusableInput(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                                uint32_t reusable_inputs, ir::DType dtype, const std::vector<int64_t>& dims) {
  if (reusable_inputs == 0 || !MayWriteOverInput(node.op_type)) return nullptr;
  for (size_t i = 0; i < inputs.size() && i < 32; ++i) {
    const ir::Tensor* in = inputs[i];
    if ((reusable_inputs >> i & 1) == 0 || in == nullptr || !in->is_dense()) continue;
    if (in->dtype() == dtype && in->shape() == dims && in->OwnsBytesAlone()) return in;
  }
  return nullptr;
}

// Output i's tensor: over a reusable input's bytes, uninitialised when the kernel writes every
// element, zero-filled otherwise.
absl::StatusOr<ir::Tensor> AllocateOutput(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                                          uint32_t reusable_inputs, size_t i, ir::DType dtype,
                                          const std::vector<int64_t>& dims) {
  if (i == 0) {
    if (const ir::Tensor* in = ReusableInput(node, inputs, reusable_inputs, dtype, dims)) return *in;
  }
  if (WritesEveryOutputElement(node.op_type)) return ir::Tensor::CreateUninitialized(dtype, dims);
  return ir::Tensor::Create(dtype, dims);
}

bool HasStringInput(const std::vector<const ir::Tensor*>& inputs) {
  return std::any_of(inputs.begin(), inputs.end(), [](const ir::Tensor* t) {
    return t != nullptr && t->is_dense() && t->dtype() == ir::DType::kString;
  });
}

// An element-moving op (ops::MovesElementsOnly) over string inputs: each string becomes its index
// in one pool whose entry 0 is the empty string (what a kernel's zero fill means), the kernel moves
// the indices, and the outputs typed string are read back from the pool.
absl::StatusOr<std::vector<ir::Tensor>> RunOnStringIndices(const ir::Node& node,
                                                           const std::vector<const ir::Tensor*>& inputs,
                                                           const std::vector<ops::ConcreteOutput>& types,
                                                           RunNodeOptions options) {
  std::vector<std::string> pool = {""};
  std::vector<ir::Tensor> indices(inputs.size());
  std::vector<const ir::Tensor*> moved = inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Tensor* in = inputs[i];
    if (in == nullptr || !in->is_dense() || in->dtype() != ir::DType::kString) continue;
    absl::StatusOr<ir::Tensor> t = ir::Tensor::CreateUninitialized(ir::DType::kInt64, in->shape());
    if (!t.ok()) return NodeError(node, t.status());
    for (int64_t e = 0; e < in->num_elements(); ++e) {
      t->data<int64_t>()[e] = static_cast<int64_t>(pool.size());
      pool.push_back(in->strings()[e]);
    }
    indices[i] = *std::move(t);
    moved[i] = &indices[i];
  }
  options.reusable_inputs = 0;
  absl::StatusOr<std::vector<ir::Tensor>> outputs = RunNode(node, moved, options);
  if (!outputs.ok()) return outputs.status();
  for (size_t o = 0; o < outputs->size() && o < types.size(); ++o) {
    ir::Tensor& out = (*outputs)[o];
    if (types[o].dtype != ir::DType::kString || !out.is_dense()) continue;
    absl::StatusOr<ir::Tensor> strings = ir::Tensor::Create(ir::DType::kString, out.shape());
    if (!strings.ok()) return NodeError(node, strings.status());
    for (int64_t e = 0; e < out.num_elements(); ++e) {
      const int64_t at = out.data<int64_t>()[e];
      if (at < 0 || at >= static_cast<int64_t>(pool.size())) {
        return NodeError(node, absl::InternalError("a moved string index is outside the inputs"));
      }
      strings->mutable_strings()[e] = pool[at];
    }
    out = *std::move(strings);
  }
  return outputs;
}

}  // namespace

absl::StatusOr<std::vector<ir::Tensor>> RunNode(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                                                const RunNodeOptions& options) {
  KernelFn kernel = FindKernel(node.op_type);
  if (ops::FindOpDef(node.op_type) == nullptr || kernel == nullptr) {
    return NodeError(node, absl::UnimplementedError("no CPU kernel"));
  }
  std::vector<ops::ConcreteInput> concrete;
  for (const ir::Tensor* t : inputs) concrete.push_back(ops::ConcreteInput::OfTensor(t));
  absl::StatusOr<std::vector<ops::ConcreteOutput>> types = ops::InferConcrete(node, concrete);
  if (!types.ok()) return NodeError(node, types.status());
  if (ops::MovesElementsOnly(node.op_type) && HasStringInput(inputs)) {
    return RunOnStringIndices(node, inputs, *types, options);
  }
  KernelContext kctx{node,
                     inputs,
                     {},
                     options.cache,
                     options.constant_inputs,
                     options.channels_last_inputs,
                     options.channels_last_output_ok,
                     false,
                     options.activation};
  std::vector<ir::Tensor> outputs(node.outputs.size());
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) {
      kctx.outputs.push_back(nullptr);
      continue;
    }
    // A data-dependent output (NonZero, Unique, ...): the kernel creates it.
    if (i < types->size() && (*types)[i].dims) {
      if (absl::Status fits = CheckOutputSize(i, (*types)[i].dtype, *(*types)[i].dims, options.max_output_bytes);
          !fits.ok()) {
        return NodeError(node, fits);
      }
      absl::StatusOr<ir::Tensor> out =
          AllocateOutput(node, inputs, options.reusable_inputs, i, (*types)[i].dtype, *(*types)[i].dims);
      if (!out.ok()) return NodeError(node, out.status());
      outputs[i] = *std::move(out);
    }
    kctx.outputs.push_back(&outputs[i]);
  }
  absl::Status status = kernel(kctx);
  if (!status.ok()) return NodeError(node, status);
  if (options.channels_last_output != nullptr) *options.channels_last_output = kctx.channels_last_output;
  if (options.activation_applied != nullptr) *options.activation_applied = kctx.activation_applied;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != ir::kNoValue && !outputs[i].valid()) {
      return NodeError(node, absl::InternalError(absl::StrCat("output ", i, " was not produced")));
    }
  }
  return outputs;
}

}  // namespace kernels::cpu
