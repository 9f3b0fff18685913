// Owns the CPU kernels of the math family (ops/math.h): rounding, trigonometric and hyperbolic
// functions, Softsign, ThresholdedRelu, Shrink, Celu, Mish, Swish, the variadic broadcasting Mean and
// Hardmax. Float16 computes through float, float64 in double.
#include "ops/math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/elementwise_broadcast.h"
#include "kernels/cpu/elementwise_util.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

using elementwise::ComputeType;
using elementwise::Convert;
using elementwise::RequireInput;
using elementwise::RequireOutput;

// The input and output of a unary op of one dtype and element count.
absl::StatusOr<std::pair<const ir::Tensor*, ir::Tensor*>> UnaryArgs(const KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> x = RequireInput(ctx, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<ir::Tensor*> y = RequireOutput(ctx, 0);
  if (!y.ok()) return y.status();
  if (absl::Status s = elementwise::ExpectSameLayout(ctx, **x, **y); !s.ok()) return s;
  return std::make_pair(*x, *y);
}

// y = fn(x) over a floating-point tensor; fn takes and returns ComputeType<T>.
template <typename Fn>
absl::Status UnaryFloat(KernelContext& ctx, Fn fn) {
  auto args = UnaryArgs(ctx);
  if (!args.ok()) return args.status();
  const ir::Tensor* x = args->first;
  ir::Tensor* y = args->second;
  return DispatchFloat(x->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* in = x->template data<T>();
    T* out = y->template data<T>();
    for (int64_t i = 0; i < x->num_elements(); ++i) out[i] = Convert<T>(fn(static_cast<C>(in[i])));
    return absl::OkStatus();
  });
}

#define ONNXRUN_UNARY_FLOAT(Name, expr)                                 \
  absl::Status Name(KernelContext& ctx) {                               \
    return UnaryFloat(ctx, [](auto x) -> decltype(x) { return expr; }); \
  }

ONNXRUN_UNARY_FLOAT(Ceil, std::ceil(x))
ONNXRUN_UNARY_FLOAT(Floor, std::floor(x))
ONNXRUN_UNARY_FLOAT(Round, std::nearbyint(x))  // default rounding mode: half to even
ONNXRUN_UNARY_FLOAT(Cos, std::cos(x))
ONNXRUN_UNARY_FLOAT(Sin, std::sin(x))
ONNXRUN_UNARY_FLOAT(Tan, std::tan(x))
ONNXRUN_UNARY_FLOAT(Acos, std::acos(x))
ONNXRUN_UNARY_FLOAT(Asin, std::asin(x))
ONNXRUN_UNARY_FLOAT(Atan, std::atan(x))
ONNXRUN_UNARY_FLOAT(Cosh, std::cosh(x))
ONNXRUN_UNARY_FLOAT(Sinh, std::sinh(x))
ONNXRUN_UNARY_FLOAT(Acosh, std::acosh(x))
ONNXRUN_UNARY_FLOAT(Asinh, std::asinh(x))
ONNXRUN_UNARY_FLOAT(Atanh, std::atanh(x))
ONNXRUN_UNARY_FLOAT(Softsign, x / (1 + std::abs(x)))
// x * tanh(softplus(x)); softplus overflows to inf only where tanh is 1 anyway.
ONNXRUN_UNARY_FLOAT(Mish, x* std::tanh(std::log1p(std::exp(x))))

#undef ONNXRUN_UNARY_FLOAT

absl::Status ThresholdedRelu(KernelContext& ctx) {
  const float alpha = ctx.attrs().GetFloat("alpha", 1.0f);
  return UnaryFloat(ctx, [alpha](auto x) -> decltype(x) { return x > alpha ? x : 0; });
}

// Swish (opset 24): x * sigmoid(alpha * x).
absl::Status Swish(KernelContext& ctx) {
  const float alpha = ctx.attrs().GetFloat("alpha", 1.0f);
  return UnaryFloat(ctx, [alpha](auto x) -> decltype(x) { return x / (1 + std::exp(-alpha * x)); });
}

absl::Status Celu(KernelContext& ctx) {
  const float alpha = ctx.attrs().GetFloat("alpha", 1.0f);
  if (alpha == 0) return absl::InvalidArgumentError("Celu: alpha must not be 0");
  return UnaryFloat(ctx, [alpha](auto x) -> decltype(x) {
    using C = decltype(x);
    const C a = alpha;
    return std::max<C>(0, x) + std::min<C>(0, a * (std::exp(x / a) - 1));
  });
}

// Shrink over any numeric dtype, computed in double and converted back.
absl::Status Shrink(KernelContext& ctx) {
  const double bias = ctx.attrs().GetFloat("bias", 0.0f);
  const double lambd = ctx.attrs().GetFloat("lambd", 0.5f);
  auto args = UnaryArgs(ctx);
  if (!args.ok()) return args.status();
  const ir::Tensor* x = args->first;
  ir::Tensor* y = args->second;
  return DispatchNumeric(x->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* in = x->template data<T>();
    T* out = y->template data<T>();
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      const double v = Convert<double>(in[i]);
      out[i] = Convert<T>(v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0));
    }
    return absl::OkStatus();
  });
}

// Mean: the inputs summed (broadcast) in the compute type, then divided by their count.
absl::Status Mean(KernelContext& ctx) {
  absl::StatusOr<ir::Tensor*> out = RequireOutput(ctx, 0);
  if (!out.ok()) return out.status();
  if (ctx.inputs.empty()) return absl::InvalidArgumentError("Mean: needs at least one input");
  const std::vector<int64_t>& out_shape = (*out)->shape();
  std::vector<const ir::Tensor*> inputs;
  std::vector<elementwise::BroadcastPlan> plans;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    absl::StatusOr<const ir::Tensor*> x = RequireInput(ctx, i);
    if (!x.ok()) return x.status();
    const std::string what = absl::StrCat("input ", i);
    if (absl::Status s = elementwise::ExpectDTypeIs(ctx, **x, (*out)->dtype(), what.c_str()); !s.ok()) {
      return s;
    }
    absl::StatusOr<elementwise::BroadcastPlan> plan =
        elementwise::MakeBroadcastPlan(out_shape, {out_shape, (*x)->shape()});
    if (!plan.ok()) return absl::InvalidArgumentError(absl::StrCat("Mean: ", plan.status().message()));
    inputs.push_back(*x);
    plans.push_back(*std::move(plan));
  }
  return DispatchFloat((*out)->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    using C = ComputeType<T>;
    std::vector<C> acc((*out)->num_elements(), C{0});
    for (size_t k = 0; k < inputs.size(); ++k) {
      elementwise::BroadcastBinary(plans[k], acc.data(), inputs[k]->template data<T>(), acc.data(),
                                   [](C a, T b) { return a + static_cast<C>(b); });
    }
    T* y = (*out)->template data<T>();
    const C count = static_cast<C>(inputs.size());
    for (size_t i = 0; i < acc.size(); ++i) y[i] = Convert<T>(acc[i] / count);
    return absl::OkStatus();
  });
}

// Hardmax: 1 at the first maximum of each row, 0 elsewhere (outputs arrive zero-filled).
absl::Status Hardmax(KernelContext& ctx) {
  auto args = UnaryArgs(ctx);
  if (!args.ok()) return args.status();
  const ir::Tensor* x = args->first;
  ir::Tensor* y = args->second;
  absl::StatusOr<ops::HardmaxExtents> e = ops::HardmaxExtentsOf(ctx.node, x->shape());
  if (!e.ok()) return e.status();
  return DispatchFloat(x->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* in = x->template data<T>();
    T* out = y->template data<T>();
    std::fill_n(out, x->num_elements(), Convert<T>(0.0f));
    if (e->n == 0) return absl::OkStatus();
    for (int64_t o = 0; o < e->outer; ++o) {
      for (int64_t i = 0; i < e->inner; ++i) {
        const int64_t base = o * e->n * e->inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < e->n; ++k) {
          if (static_cast<C>(in[base + k * e->inner]) > static_cast<C>(in[base + best * e->inner])) best = k;
        }
        out[base + best * e->inner] = Convert<T>(1.0f);
      }
    }
    return absl::OkStatus();
  });
}

}  // namespace

std::vector<KernelDef> MathKernels() {
  return {
      {"Ceil", Ceil},       {"Floor", Floor}, {"Round", Round},       {"Cos", Cos},
      {"Sin", Sin},         {"Tan", Tan},     {"Acos", Acos},         {"Asin", Asin},
      {"Atan", Atan},       {"Cosh", Cosh},   {"Sinh", Sinh},         {"Acosh", Acosh},
      {"Asinh", Asinh},     {"Atanh", Atanh}, {"Softsign", Softsign}, {"ThresholdedRelu", ThresholdedRelu},
      {"Shrink", Shrink},   {"Celu", Celu},   {"Mish", Mish},         {"Mean", Mean},
      {"Hardmax", Hardmax}, {"Swish", Swish},
  };
}

}  // namespace kernels::cpu
