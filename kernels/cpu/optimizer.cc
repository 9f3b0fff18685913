// The CPU reference kernels of the ai.onnx.preview.training optimizers Adagrad, Adam and Momentum
// (inputs, outputs and attributes in ops/optimizer.h): every element is updated in double, from
// the spec's pseudo code, and stored in its tensor's dtype.
#include "ops/optimizer.h"

#include <array>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

using ops::OptimizerAttrs;
using ops::OptimizerKind;

// The step's scalars: the learning rate the update applies (Adagrad's decayed r, Adam's
// bias-corrected R_adjusted, Momentum's R) and Momentum's beta_adjusted (1 on the first step).
struct StepScalars {
  double rate = 0;
  double beta_adjusted = 1;
};

StepScalars ScalarsOf(const OptimizerAttrs& a, const ops::OptimizerStep& step) {
  const double t = static_cast<double>(step.count);
  switch (a.kind) {
    case OptimizerKind::kAdagrad: return {step.rate / (1 + t * a.decay_factor), 1};
    case OptimizerKind::kAdam:
      if (step.count <= 0) return {step.rate, 1};
      return {step.rate * std::sqrt(1 - std::pow(a.beta, t)) / (1 - std::pow(a.alpha, t)), 1};
    case OptimizerKind::kMomentum: return {step.rate, step.count > 0 ? a.beta : 1.0};
  }
  return {};
}

// One element: x, its gradient g and states s0, s1 (0 when the optimizer has fewer) -> x_new and
// the new states, in output order.
std::array<double, 3> UpdateElement(const OptimizerAttrs& a, const StepScalars& c, double x, double g, double s0,
                                    double s1) {
  const double g_regularized = a.norm_coefficient * x + g;
  switch (a.kind) {
    case OptimizerKind::kAdagrad: {
      const double h = s0 + g_regularized * g_regularized;
      return {x - c.rate * g_regularized / (std::sqrt(h) + a.epsilon), h, 0};
    }
    case OptimizerKind::kMomentum: {
      const double v = a.alpha * s0 + c.beta_adjusted * g_regularized;
      const double direction = a.nesterov ? g_regularized + a.alpha * v : v;
      return {x - c.rate * direction, v, 0};
    }
    case OptimizerKind::kAdam: {
      const double v = a.alpha * s0 + (1 - a.alpha) * g_regularized;
      const double h = a.beta * s1 + (1 - a.beta) * g_regularized * g_regularized;
      const double x_new = x - c.rate * v / (std::sqrt(h) + a.epsilon);
      return {(1 - a.norm_coefficient_post) * x_new, v, h};
    }
  }
  return {};
}

// One optimized tensor: inputs X, G, states (nullptr past the optimizer's runs); outputs X_new
// and the new states (nullptr when absent). All of X's dtype and element count.
struct Operands {
  std::array<const ir::Tensor*, 4> in{};
  std::array<ir::Tensor*, 3> out{};
};

template <typename T>
void UpdateTensor(const OptimizerAttrs& a, const StepScalars& c, const Operands& ops) {
  const int64_t size = ops.in[0]->num_elements();
  auto value = [](const ir::Tensor* t, int64_t j) { return t != nullptr ? static_cast<double>(t->data<T>()[j]) : 0.0; };
  for (int64_t j = 0; j < size; ++j) {
    const std::array<double, 3> updated =
        UpdateElement(a, c, value(ops.in[0], j), value(ops.in[1], j), value(ops.in[2], j), value(ops.in[3], j));
    for (size_t k = 0; k < ops.out.size(); ++k) {
      if (ops.out[k] != nullptr) ops.out[k]->data<T>()[j] = static_cast<T>(updated[k]);
    }
  }
}

// Optimized tensor i's operands, checked against X_i.
absl::StatusOr<Operands> OperandsOf(const KernelContext& ctx, int64_t n, int runs, int64_t i) {
  Operands ops;
  const ir::Tensor* x = ctx.input(static_cast<size_t>(2 + i));
  if (x == nullptr || !x->valid()) return absl::InvalidArgumentError(absl::StrCat("input ", 2 + i, " is missing"));
  if (x->dtype() != ir::DType::kFloat32 && x->dtype() != ir::DType::kFloat64) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", 2 + i, " has dtype ", ir::DTypeName(x->dtype()), "; float32 or float64 expected"));
  }
  auto matches = [x](const ir::Tensor* t) { return t->dtype() == x->dtype() && t->shape() == x->shape(); };
  for (int run = 0; run < runs; ++run) {
    const size_t at = static_cast<size_t>(2 + run * n + i);
    const ir::Tensor* t = ctx.input(at);
    if (t == nullptr || !t->valid() || !matches(t)) {
      return absl::InvalidArgumentError(absl::StrCat("input ", at, " must have the dtype and shape of input ", 2 + i));
    }
    ops.in[run] = t;
  }
  for (int run = 0; run + 1 < runs; ++run) {
    const size_t at = static_cast<size_t>(run * n + i);
    ir::Tensor* t = ctx.output(at);
    if (t == nullptr || !t->valid()) continue;
    if (!matches(t)) {
      return absl::InvalidArgumentError(absl::StrCat("output ", at, " must have the dtype and shape of input ", 2 + i));
    }
    ops.out[run] = t;
  }
  return ops;
}

absl::Status Optimize(KernelContext& ctx) {
  absl::StatusOr<OptimizerAttrs> attrs = ops::ParseOptimizerAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<int64_t> n = ops::OptimizedTensorCount(attrs->kind, ctx.inputs.size(), ctx.outputs.size());
  if (!n.ok()) return n.status();
  const ir::Tensor* rate = ctx.input(0);
  const ir::Tensor* count = ctx.input(1);
  if (rate == nullptr || count == nullptr) return absl::InvalidArgumentError("R and T are required");
  absl::StatusOr<ops::OptimizerStep> step = ops::OptimizerStepOf(*rate, *count);
  if (!step.ok()) return step.status();
  const StepScalars scalars = ScalarsOf(*attrs, *step);
  const int runs = ops::OptimizerInputRuns(attrs->kind);
  for (int64_t i = 0; i < *n; ++i) {
    absl::StatusOr<Operands> operands = OperandsOf(ctx, *n, runs, i);
    if (!operands.ok()) return operands.status();
    if (operands->in[0]->dtype() == ir::DType::kFloat64) {
      UpdateTensor<double>(*attrs, scalars, *operands);
    } else {
      UpdateTensor<float>(*attrs, scalars, *operands);
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> OptimizerKernels() {
  return {{ops::kAdagradOp, Optimize}, {ops::kAdamOp, Optimize}, {ops::kMomentumOp, Optimize}};
}

}  // namespace kernels::cpu
