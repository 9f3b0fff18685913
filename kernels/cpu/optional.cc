// CPU kernels of Optional, OptionalHasElement, OptionalGetElement and SequenceMap (ops/sequence.h).
// A present optional is its element itself; an empty one is ir::Tensor::None.
#include "absl/strings/str_cat.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/subgraph.h"
#include "ops/control_flow.h"
#include "ops/sequence.h"

namespace kernels::cpu {
namespace {

absl::Status Optional(KernelContext& ctx) {
  if (ctx.input(0) != nullptr) {
    *ctx.output(0) = *ctx.input(0);
    return absl::OkStatus();
  }
  absl::StatusOr<ir::TensorType> type = ops::OptionalTypeAttribute(ctx.node);
  if (!type.ok()) return type.status();
  *ctx.output(0) = ir::Tensor::None(type->dtype, type->kind);
  return absl::OkStatus();
}

absl::Status OptionalHasElement(KernelContext& ctx) {
  const bool has = ctx.input(0) != nullptr && !ctx.input(0)->is_none();
  absl::StatusOr<ir::Tensor> out = ir::Tensor::Create(ir::DType::kBool, {});
  if (!out.ok()) return out.status();
  out->data<uint8_t>()[0] = has ? 1 : 0;
  *ctx.output(0) = *std::move(out);
  return absl::OkStatus();
}

absl::Status OptionalGetElement(KernelContext& ctx) {
  const ir::Tensor* in = ctx.input(0);
  if (in == nullptr || in->is_none()) return absl::InvalidArgumentError("the optional input holds no element");
  *ctx.output(0) = *in;
  return absl::OkStatus();
}

// Body input j for iteration i: element i of a sequence input, a tensor input as it is.
absl::StatusOr<const ir::Tensor*> MapArgument(const ir::Tensor& input, size_t i, size_t length) {
  if (!input.is_sequence()) return &input;
  if (input.is_map_sequence()) return absl::InvalidArgumentError("a sequence of maps cannot be mapped over");
  if (input.elements().size() != length) {
    return absl::InvalidArgumentError(
        absl::StrCat("the input sequences differ in length: ", input.elements().size(), " and ", length));
  }
  return &input.elements()[i];
}

absl::Status SequenceMap(KernelContext& ctx) {
  absl::StatusOr<const ir::Graph*> body = ops::BodyOf(ctx.node, "body");
  if (!body.ok()) return body.status();
  absl::StatusOr<size_t> explicit_inputs = ops::NumExplicitInputs(ctx.node, **body);
  if (!explicit_inputs.ok()) return explicit_inputs.status();
  for (size_t j = 0; j < ctx.inputs.size(); ++j) {
    if (ctx.input(j) == nullptr || ctx.input(j)->is_none()) {
      return absl::InvalidArgumentError(absl::StrCat("input ", j, " has no value"));
    }
  }
  if (!ctx.input(0)->is_sequence()) return absl::InvalidArgumentError("input 0 must be a sequence");
  const size_t length = ctx.input(0)->elements().size();
  std::vector<std::vector<ir::Tensor>> results(ctx.outputs.size());
  for (size_t i = 0; i < length; ++i) {
    std::vector<const ir::Tensor*> args;
    for (size_t j = 0; j < ctx.inputs.size(); ++j) {
      absl::StatusOr<const ir::Tensor*> arg =
          j < *explicit_inputs ? MapArgument(*ctx.input(j), i, length) : ctx.input(j);
      if (!arg.ok()) return arg.status();
      args.push_back(*arg);
    }
    absl::StatusOr<std::vector<ir::Tensor>> outs = RunBody(**body, args);
    if (!outs.ok())
      return absl::Status(outs.status().code(), absl::StrCat("element ", i, ": ", outs.status().message()));
    for (size_t o = 0; o < results.size() && o < outs->size(); ++o) results[o].push_back((*outs)[o]);
  }
  for (size_t o = 0; o < results.size(); ++o) {
    if (ctx.output(o) == nullptr) continue;
    const ir::DType dtype = (*body)->value((*body)->outputs()[o]).type.dtype;
    *ctx.output(o) = ir::Tensor::Sequence(results[o].empty() ? dtype : results[o][0].dtype(), std::move(results[o]));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> OptionalKernels() {
  return {{"Optional", Optional},
          {"OptionalHasElement", OptionalHasElement},
          {"OptionalGetElement", OptionalGetElement},
          {"SequenceMap", SequenceMap}};
}

}  // namespace kernels::cpu
