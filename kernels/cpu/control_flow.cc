// If, Loop and Scan on the CPU: each runs its body with the subgraph interpreter (subgraph.h),
// iterations capped by ops::kMaxControlFlowIterations so a huge trip count fails fast.
#include "kernels/cpu/control_flow.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/subgraph.h"
#include "ops/control_flow.h"

namespace kernels::cpu {
namespace {

using Tensors = std::vector<ir::Tensor>;
using Pointers = std::vector<const ir::Tensor*>;

absl::Status IterationLimitError(const char* op, int64_t trips) {
  return absl::ResourceExhaustedError(
      absl::StrCat(op, " would run ", trips, " iterations, more than the limit of ", ops::kMaxControlFlowIterations));
}

// The node's implicit inputs (read by its bodies), after `explicit_inputs` explicit ones.
Pointers ImplicitInputs(const KernelContext& ctx, size_t explicit_inputs) {
  return Pointers(ctx.inputs.begin() + static_cast<std::ptrdiff_t>(explicit_inputs), ctx.inputs.end());
}

absl::Status AssignOutputs(KernelContext& ctx, Tensors values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (ir::Tensor* out = ctx.output(i)) *out = std::move(values[i]);
  }
  return absl::OkStatus();
}

// Known dims of a body output's declared type, 0 for unknown ones (a scan output of no iteration).
std::vector<int64_t> DeclaredDims(const ir::Graph& body, size_t output) {
  std::vector<int64_t> dims;
  const ir::TensorType& type = body.value(body.outputs()[output]).type;
  if (type.shape) {
    for (const ir::Dim& d : *type.shape) dims.push_back(d.known() ? d.value : 0);
  }
  return dims;
}

absl::Status RunIf(KernelContext& ctx) {
  const ir::Tensor* cond = ctx.input(0);
  if (cond == nullptr || cond->num_elements() != 1 || cond->dtype() != ir::DType::kBool) {
    return absl::InvalidArgumentError("cond must hold one bool");
  }
  const bool take_then = cond->data<bool>()[0];
  absl::StatusOr<const ir::Graph*> branch = ops::BodyOf(ctx.node, take_then ? "then_branch" : "else_branch");
  if (!branch.ok()) return branch.status();
  absl::StatusOr<Tensors> outputs = RunBody(**branch, ImplicitInputs(ctx, 1));
  if (!outputs.ok()) return outputs.status();
  if (outputs->size() != ctx.outputs.size()) return absl::InvalidArgumentError("the branch gives too few outputs");
  return AssignOutputs(ctx, *std::move(outputs));
}

// Loop's run-time state: carried values and each scan output's parts.
struct LoopState {
  Tensors carried;
  std::vector<Tensors> scans;
  bool cond = true;
};

absl::StatusOr<bool> ReadCond(const ir::Tensor& t) {
  if (t.num_elements() != 1 || t.dtype() != ir::DType::kBool)
    return absl::InvalidArgumentError("cond must hold one bool");
  return t.data<bool>()[0];
}

// One iteration: runs the body and updates `state`.
absl::Status LoopIteration(const KernelContext& ctx, const ir::Graph& body, int64_t iteration, bool use_cond,
                           size_t explicit_inputs, LoopState& state) {
  ir::Tensor iter = ir::Tensor::FromInt64s({iteration}).Reshaped({}).value();
  absl::StatusOr<ir::Tensor> cond = ir::Tensor::Create(ir::DType::kBool, {});
  if (!cond.ok()) return cond.status();
  cond->data<bool>()[0] = state.cond;
  Pointers inputs = {&iter, &*cond};
  for (const ir::Tensor& t : state.carried) inputs.push_back(&t);
  for (const ir::Tensor* t : ImplicitInputs(ctx, explicit_inputs)) inputs.push_back(t);
  absl::StatusOr<Tensors> outputs = RunBody(body, inputs);
  if (!outputs.ok()) return outputs.status();
  if (use_cond) {
    absl::StatusOr<bool> next = ReadCond((*outputs)[0]);
    if (!next.ok()) return next.status();
    state.cond = *next;
  }
  const size_t carried = state.carried.size();
  for (size_t i = 0; i < carried; ++i) state.carried[i] = std::move((*outputs)[1 + i]);
  for (size_t k = 0; k < state.scans.size(); ++k) state.scans[k].push_back(std::move((*outputs)[1 + carried + k]));
  return absl::OkStatus();
}

absl::Status RunLoop(KernelContext& ctx) {
  absl::StatusOr<const ir::Graph*> body = ops::BodyOf(ctx.node, "body");
  if (!body.ok()) return body.status();
  absl::StatusOr<size_t> explicit_inputs = ops::NumExplicitInputs(ctx.node, **body);
  if (!explicit_inputs.ok()) return explicit_inputs.status();
  if (*explicit_inputs < 2) return absl::InvalidArgumentError("needs the inputs M and cond (either may be empty)");
  const size_t carried = *explicit_inputs - 2;
  for (size_t i = 0; i < carried; ++i) {
    if (ctx.input(2 + i) == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("carried value ", i, " is missing"));
  }
  if ((*body)->outputs().size() < 1 + carried) return absl::InvalidArgumentError("the body gives too few outputs");
  int64_t trips = std::numeric_limits<int64_t>::max();
  if (const ir::Tensor* m = ctx.input(0)) {
    if (m->num_elements() != 1) return absl::InvalidArgumentError("M must hold one value");
    trips = m->GetAsInt64(0);
  }
  const bool use_cond = ctx.input(1) != nullptr;
  if (!use_cond && trips > ops::kMaxControlFlowIterations) return IterationLimitError("Loop", trips);
  LoopState state;
  if (use_cond) {
    absl::StatusOr<bool> cond = ReadCond(*ctx.input(1));
    if (!cond.ok()) return cond.status();
    state.cond = *cond;
  }
  for (size_t i = 0; i < carried; ++i) state.carried.push_back(*ctx.input(2 + i));
  state.scans.resize((*body)->outputs().size() - 1 - carried);
  for (int64_t i = 0; i < trips && state.cond; ++i) {
    if (i >= ops::kMaxControlFlowIterations) return IterationLimitError("Loop", i + 1);
    absl::Status status = LoopIteration(ctx, **body, i, use_cond, *explicit_inputs, state);
    if (!status.ok()) return absl::Status(status.code(), absl::StrCat("iteration ", i, ": ", status.message()));
  }
  Tensors outputs = std::move(state.carried);
  for (size_t k = 0; k < state.scans.size(); ++k) {
    const size_t body_output = 1 + carried + k;
    const ir::DType dtype = (*body)->value((*body)->outputs()[body_output]).type.dtype;
    absl::StatusOr<ir::Tensor> stacked =
        Stack(state.scans[k], 0, false, state.scans[k].empty() ? dtype : state.scans[k][0].dtype(),
              DeclaredDims(**body, body_output));
    if (!stacked.ok()) return stacked.status();
    outputs.push_back(*std::move(stacked));
  }
  return AssignOutputs(ctx, std::move(outputs));
}

}  // namespace

std::vector<KernelDef> ControlFlowKernels() { return {{"If", RunIf}, {"Loop", RunLoop}, {"Scan", RunScan}}; }

}  // namespace kernels::cpu
