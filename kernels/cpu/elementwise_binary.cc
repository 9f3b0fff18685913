// Owns the CPU kernels of the broadcasting arithmetic ops: Add, Sub, Mul, Div, Pow (mixed base and
// exponent dtypes), the variadic Min, Max and Sum, and PRelu. Float16 computes through float.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/elementwise_broadcast.h"
#include "kernels/cpu/elementwise_util.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu::elementwise {
namespace {

using Shape = std::vector<int64_t>;

// The inputs and output of a two-input broadcasting op, with its plan.
struct BinaryArgs {
  const ir::Tensor* a = nullptr;
  const ir::Tensor* b = nullptr;
  ir::Tensor* out = nullptr;
  BroadcastPlan plan;
};

// Checks presence, that a's dtype is the output's (and b's when same_dtype) and the shapes
// broadcast to the output; b_shape overrides b's shape (PRelu's legacy channel slope).
absl::StatusOr<BinaryArgs> GetBinaryArgs(const KernelContext& ctx, bool same_dtype, const Shape* b_shape = nullptr) {
  BinaryArgs args;
  absl::StatusOr<const ir::Tensor*> a = RequireInput(ctx, 0);
  if (!a.ok()) return a.status();
  absl::StatusOr<const ir::Tensor*> b = RequireInput(ctx, 1);
  if (!b.ok()) return b.status();
  absl::StatusOr<ir::Tensor*> out = RequireOutput(ctx, 0);
  if (!out.ok()) return out.status();
  args.a = *a;
  args.b = *b;
  args.out = *out;
  if (absl::Status s = ExpectDTypeIs(ctx, *args.out, args.a->dtype(), "output"); !s.ok()) return s;
  if (same_dtype) {
    if (absl::Status s = ExpectDTypeIs(ctx, *args.b, args.a->dtype(), "input 1"); !s.ok()) return s;
  }
  absl::StatusOr<BroadcastPlan> plan =
      MakeBroadcastPlan(args.out->shape(), {args.a->shape(), b_shape != nullptr ? *b_shape : args.b->shape()});
  if (!plan.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": ", plan.status().message()));
  }
  args.plan = *std::move(plan);
  return args;
}

// out = op(a, b) for a and b of one numeric dtype; op takes and returns the element type.
template <typename Op>
absl::Status SameTypeBinary(KernelContext& ctx, Op op) {
  absl::StatusOr<BinaryArgs> args = GetBinaryArgs(ctx, /*same_dtype=*/true);
  if (!args.ok()) return args.status();
  return DispatchNumeric(args->a->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    BroadcastBinary(args->plan, args->a->template data<T>(), args->b->template data<T>(), args->out->template data<T>(),
                    [&](T x, T y) { return op(x, y); });
    return absl::OkStatus();
  });
}

// x op y; integers wrap modulo 2^bits (as in ONNX Runtime), computed in uint64 so that signed
// overflow is never undefined behaviour. Floats compute in their own type (Half through float).
template <typename T, typename Op>
T Arithmetic(T x, T y, Op op) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(op(static_cast<uint64_t>(x), static_cast<uint64_t>(y)));
  } else {
    return Convert<T>(op(x, y));
  }
}

absl::Status Add(KernelContext& ctx) {
  return SameTypeBinary(ctx, [](auto x, auto y) { return Arithmetic(x, y, std::plus<>()); });
}

absl::Status Sub(KernelContext& ctx) {
  return SameTypeBinary(ctx, [](auto x, auto y) { return Arithmetic(x, y, std::minus<>()); });
}

absl::Status Mul(KernelContext& ctx) {
  return SameTypeBinary(ctx, [](auto x, auto y) { return Arithmetic(x, y, std::multiplies<>()); });
}

absl::Status Div(KernelContext& ctx) {
  std::atomic<bool> division_by_zero = false;  // set from ParallelFor's threads
  absl::Status status = SameTypeBinary(ctx, [&division_by_zero](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>) {
      if (y == 0) {
        division_by_zero = true;
        return T{};
      }
      if constexpr (std::is_signed_v<T>) {
        if (y == -1) {  // avoids the INT_MIN / -1 trap; wraps like two's complement
          using U = std::make_unsigned_t<T>;
          return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(x)));
        }
      }
      return static_cast<T>(x / y);  // truncates toward zero, like C
    } else {
      using C = ComputeType<T>;
      return Convert<T>(static_cast<C>(x) / static_cast<C>(y));
    }
  });
  if (status.ok() && division_by_zero) {
    return absl::InvalidArgumentError("Div: integer division by zero");
  }
  return status;
}

// base ** exp for integers, wrapping modulo 2^bits; a negative exponent gives 1 / base**-exp
// truncated (0 unless |base| == 1).
template <typename T, typename U>
T IntegerPower(T base, U exp) {
  if constexpr (std::is_signed_v<U>) {
    if (exp < 0) {
      if (base == 1) return T{1};
      if constexpr (std::is_signed_v<T>) {
        if (base == -1) return static_cast<T>((exp & 1) ? -1 : 1);
      }
      return T{};
    }
  }
  uint64_t result = 1;
  uint64_t b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

template <typename T, typename U>
T Power(T base, U exp) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<U>) {
    return IntegerPower(base, exp);
  } else {
    return Convert<T>(std::pow(Convert<double>(base), Convert<double>(exp)));
  }
}

// Pow(base T, exponent U): the result has the base's dtype.
absl::Status Pow(KernelContext& ctx) {
  absl::StatusOr<BinaryArgs> args = GetBinaryArgs(ctx, /*same_dtype=*/false);
  if (!args.ok()) return args.status();
  return DispatchNumeric(args->a->dtype(), [&](auto base_tag) -> absl::Status {
    using T = decltype(base_tag);
    return DispatchNumeric(args->b->dtype(), [&](auto exp_tag) -> absl::Status {
      using U = decltype(exp_tag);
      BroadcastBinary(args->plan, args->a->template data<T>(), args->b->template data<U>(),
                      args->out->template data<T>(), [](T x, U y) { return Power(x, y); });
      return absl::OkStatus();
    });
  });
}

// The slope shape PRelu broadcasts: opset < 7 allows a 1-D slope of one value per channel
// (dim 1 of X), which becomes [C, 1, ..., 1].
Shape PReluSlopeShape(const KernelContext& ctx, const ir::Tensor& x, const ir::Tensor& slope) {
  Shape shape = slope.shape();
  if (ctx.node.opset < 7 && x.rank() >= 2 && shape.size() == 1 && shape[0] != 1 && shape[0] == x.shape()[1]) {
    shape.resize(x.rank() - 1, 1);
  }
  return shape;
}

absl::Status PRelu(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* slope = ctx.input(1);
  Shape slope_shape;
  if (x != nullptr && slope != nullptr) slope_shape = PReluSlopeShape(ctx, *x, *slope);
  absl::StatusOr<BinaryArgs> args = GetBinaryArgs(ctx, /*same_dtype=*/true, &slope_shape);
  if (!args.ok()) return args.status();
  if (args->out->shape() != args->a->shape()) {
    return absl::InvalidArgumentError("PRelu: output shape must equal X's shape");
  }
  return DispatchNumeric(args->a->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    BroadcastBinary(args->plan, args->a->template data<T>(), args->b->template data<T>(), args->out->template data<T>(),
                    [](T v, T s) { return v < T{} ? Convert<T>(s * v) : v; });
    return absl::OkStatus();
  });
}

// out = op(...op(op(x0, x1), x2)..., xn) with broadcasting; op takes and returns the element type.
template <typename Op>
absl::Status Variadic(KernelContext& ctx, Op op) {
  absl::StatusOr<ir::Tensor*> out = RequireOutput(ctx, 0);
  if (!out.ok()) return out.status();
  if (ctx.inputs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": needs at least one input"));
  }
  const Shape& out_shape = (*out)->shape();
  std::vector<const ir::Tensor*> inputs;
  std::vector<BroadcastPlan> plans;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    absl::StatusOr<const ir::Tensor*> x = RequireInput(ctx, i);
    if (!x.ok()) return x.status();
    if (absl::Status s = ExpectDTypeIs(ctx, **x, (*out)->dtype(), absl::StrCat("input ", i).c_str()); !s.ok()) {
      return s;
    }
    std::vector<absl::Span<const int64_t>> shapes = {(*x)->shape()};
    if (i > 0) shapes.insert(shapes.begin(), out_shape);  // accumulate in place into out
    absl::StatusOr<BroadcastPlan> plan = MakeBroadcastPlan(out_shape, shapes);
    if (!plan.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": ", plan.status().message()));
    }
    inputs.push_back(*x);
    plans.push_back(*std::move(plan));
  }
  return DispatchNumeric((*out)->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    T* y = (*out)->template data<T>();
    const T* x0 = inputs[0]->template data<T>();
    ForEachRun<1>(plans[0],
                  [&](int64_t o, const std::array<int64_t, 1>& off, int64_t n, const std::array<int64_t, 1>& step) {
                    for (int64_t i = 0; i < n; ++i) y[o + i] = x0[off[0] + i * step[0]];
                  });
    for (size_t k = 1; k < inputs.size(); ++k) {
      BroadcastBinary(plans[k], y, inputs[k]->template data<T>(), y, [&](T a, T b) { return op(a, b); });
    }
    return absl::OkStatus();
  });
}

// True for a floating-point NaN (never for integers).
template <typename T>
bool IsNan(T v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    return std::isnan(static_cast<ComputeType<T>>(v));
  }
}

absl::Status Min(KernelContext& ctx) {
  return Variadic(ctx, [](auto a, auto b) { return IsNan(a) || a < b ? a : b; });
}

absl::Status Max(KernelContext& ctx) {
  return Variadic(ctx, [](auto a, auto b) { return IsNan(a) || a > b ? a : b; });
}

absl::Status Sum(KernelContext& ctx) {
  return Variadic(ctx, [](auto a, auto b) { return Arithmetic(a, b, std::plus<>()); });
}

}  // namespace

std::vector<KernelDef> BinaryKernels() {
  return {
      {"Add", Add}, {"Sub", Sub}, {"Mul", Mul}, {"Div", Div},     {"Pow", Pow},
      {"Min", Min}, {"Max", Max}, {"Sum", Sum}, {"PRelu", PRelu},
  };
}

}  // namespace kernels::cpu::elementwise
