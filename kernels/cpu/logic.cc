// Owns the CPU kernels of the logic family (ops/logic.h): comparisons with a bool result, boolean
// Not/And/Or/Xor, IsInf, IsNaN, Sign, Mod, BitShift and BitwiseAnd/Or/Xor/Not. Binary ops broadcast
// through kernels/cpu/elementwise_broadcast.h; float16 compares and computes through float; Equal
// also compares strings.
#include "ops/logic.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
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

using elementwise::BroadcastBinary;
using elementwise::BroadcastPlan;
using elementwise::ComputeType;
using elementwise::Convert;
using elementwise::RequireInput;
using elementwise::RequireOutput;

// The value an element compares and computes as: float for float16, itself otherwise.
template <typename T>
auto Value(T v) {
  if constexpr (elementwise::kIsHalfLike<T>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

// The inputs and output of a two-input op of one input dtype, with their broadcast plan.
struct BinaryArgs {
  const ir::Tensor* a = nullptr;
  const ir::Tensor* b = nullptr;
  ir::Tensor* out = nullptr;
  BroadcastPlan plan;
};

// Checks presence, that a and b share a dtype and the output has `out_dtype` (a's when undefined).
absl::StatusOr<BinaryArgs> GetBinaryArgs(const KernelContext& ctx, ir::DType out_dtype) {
  absl::StatusOr<const ir::Tensor*> a = RequireInput(ctx, 0);
  if (!a.ok()) return a.status();
  absl::StatusOr<const ir::Tensor*> b = RequireInput(ctx, 1);
  if (!b.ok()) return b.status();
  absl::StatusOr<ir::Tensor*> out = RequireOutput(ctx, 0);
  if (!out.ok()) return out.status();
  if ((*a)->dtype() != (*b)->dtype()) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": inputs have dtypes ",
                                                   ir::DTypeName((*a)->dtype()), " and ", ir::DTypeName((*b)->dtype()),
                                                   " (they must match)"));
  }
  if (out_dtype == ir::DType::kUndefined) out_dtype = (*a)->dtype();
  if (absl::Status s = elementwise::ExpectDTypeIs(ctx, **out, out_dtype, "output"); !s.ok()) return s;
  absl::StatusOr<BroadcastPlan> plan = elementwise::MakeBroadcastPlan((*out)->shape(), {(*a)->shape(), (*b)->shape()});
  if (!plan.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": ", plan.status().message()));
  }
  return BinaryArgs{*a, *b, *out, *std::move(plan)};
}

// out (bool) = op(Value(a), Value(b)).
template <typename Op>
absl::Status Compare(KernelContext& ctx, Op op) {
  absl::StatusOr<BinaryArgs> args = GetBinaryArgs(ctx, ir::DType::kBool);
  if (!args.ok()) return args.status();
  return DispatchNumeric(args->a->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    BroadcastBinary(args->plan, args->a->template data<T>(), args->b->template data<T>(),
                    args->out->template data<uint8_t>(),
                    [&](T x, T y) -> uint8_t { return op(Value(x), Value(y)) ? 1 : 0; });
    return absl::OkStatus();
  });
}

// Strings compare byte for byte (opset 19); other dtypes as Compare does.
absl::Status Equal(KernelContext& ctx) {
  if (ctx.input(0) != nullptr && ctx.input(0)->dtype() == ir::DType::kString) {
    absl::StatusOr<BinaryArgs> args = GetBinaryArgs(ctx, ir::DType::kBool);
    if (!args.ok()) return args.status();
    if (args->a->strings() == nullptr || args->b->strings() == nullptr) {
      return absl::InvalidArgumentError("Equal: string inputs must be dense string tensors");
    }
    BroadcastBinary(args->plan, args->a->strings(), args->b->strings(), args->out->data<uint8_t>(),
                    [](const std::string& x, const std::string& y) -> uint8_t { return x == y ? 1 : 0; });
    return absl::OkStatus();
  }
  return Compare(ctx, [](auto x, auto y) { return x == y; });
}
absl::Status Greater(KernelContext& ctx) {
  return Compare(ctx, [](auto x, auto y) { return x > y; });
}
absl::Status GreaterOrEqual(KernelContext& ctx) {
  return Compare(ctx, [](auto x, auto y) { return x >= y; });
}
absl::Status Less(KernelContext& ctx) {
  return Compare(ctx, [](auto x, auto y) { return x < y; });
}
absl::Status LessOrEqual(KernelContext& ctx) {
  return Compare(ctx, [](auto x, auto y) { return x <= y; });
}

// And, Or, Xor over bool inputs (stored as uint8; any nonzero byte is true).
template <typename Op>
absl::Status Logic(KernelContext& ctx, Op op) {
  absl::StatusOr<BinaryArgs> args = GetBinaryArgs(ctx, ir::DType::kBool);
  if (!args.ok()) return args.status();
  if (absl::Status s = elementwise::ExpectDTypeIs(ctx, *args->a, ir::DType::kBool, "input 0"); !s.ok()) {
    return s;
  }
  BroadcastBinary(args->plan, args->a->data<uint8_t>(), args->b->data<uint8_t>(), args->out->data<uint8_t>(),
                  [&](uint8_t x, uint8_t y) -> uint8_t { return op(x != 0, y != 0) ? 1 : 0; });
  return absl::OkStatus();
}

absl::Status And(KernelContext& ctx) {
  return Logic(ctx, [](bool x, bool y) { return x && y; });
}
absl::Status Or(KernelContext& ctx) {
  return Logic(ctx, [](bool x, bool y) { return x || y; });
}
absl::Status Xor(KernelContext& ctx) {
  return Logic(ctx, [](bool x, bool y) { return x != y; });
}

// The input and output of a unary op, checked for presence, element count and output dtype.
struct UnaryArgs {
  const ir::Tensor* x = nullptr;
  ir::Tensor* y = nullptr;
};

absl::StatusOr<UnaryArgs> GetUnaryArgs(const KernelContext& ctx, ir::DType out_dtype) {
  absl::StatusOr<const ir::Tensor*> x = RequireInput(ctx, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<ir::Tensor*> y = RequireOutput(ctx, 0);
  if (!y.ok()) return y.status();
  if (out_dtype == ir::DType::kUndefined) out_dtype = (*x)->dtype();
  if (absl::Status s = elementwise::ExpectDTypeIs(ctx, **y, out_dtype, "output"); !s.ok()) return s;
  if ((*x)->num_elements() != (*y)->num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": output shape ",
                                                   ir::ShapeToString((*y)->shape()), " does not match input shape ",
                                                   ir::ShapeToString((*x)->shape())));
  }
  return UnaryArgs{*x, *y};
}

absl::Status Not(KernelContext& ctx) {
  absl::StatusOr<UnaryArgs> args = GetUnaryArgs(ctx, ir::DType::kBool);
  if (!args.ok()) return args.status();
  if (absl::Status s = elementwise::ExpectDTypeIs(ctx, *args->x, ir::DType::kBool, "input 0"); !s.ok()) {
    return s;
  }
  const uint8_t* x = args->x->data<uint8_t>();
  uint8_t* y = args->y->data<uint8_t>();
  for (int64_t i = 0; i < args->x->num_elements(); ++i) y[i] = x[i] == 0 ? 1 : 0;
  return absl::OkStatus();
}

// y (bool) = pred(x) over a floating-point input; pred takes float or double.
template <typename Pred>
absl::Status FloatPredicate(KernelContext& ctx, Pred pred) {
  absl::StatusOr<UnaryArgs> args = GetUnaryArgs(ctx, ir::DType::kBool);
  if (!args.ok()) return args.status();
  return DispatchFloat(args->x->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* x = args->x->template data<T>();
    uint8_t* y = args->y->template data<uint8_t>();
    for (int64_t i = 0; i < args->x->num_elements(); ++i) {
      y[i] = pred(static_cast<ComputeType<T>>(x[i])) ? 1 : 0;
    }
    return absl::OkStatus();
  });
}

absl::Status IsNaN(KernelContext& ctx) {
  return FloatPredicate(ctx, [](auto v) { return std::isnan(v); });
}

absl::Status IsInf(KernelContext& ctx) {
  absl::StatusOr<ops::IsInfAttrs> attrs = ops::ParseIsInfAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  return FloatPredicate(
      ctx, [&](auto v) { return std::isinf(v) && (v > 0 ? attrs->detect_positive : attrs->detect_negative); });
}

// y = fn(x) with y of x's dtype; fn takes and returns the element type.
template <typename Fn>
absl::Status SameTypeUnary(KernelContext& ctx, Fn fn) {
  absl::StatusOr<UnaryArgs> args = GetUnaryArgs(ctx, ir::DType::kUndefined);
  if (!args.ok()) return args.status();
  return DispatchNumeric(args->x->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* x = args->x->template data<T>();
    T* y = args->y->template data<T>();
    for (int64_t i = 0; i < args->x->num_elements(); ++i) {
      absl::StatusOr<T> v = fn(x[i]);
      if (!v.ok()) return v.status();
      y[i] = *v;
    }
    return absl::OkStatus();
  });
}

// -1, 0 or 1 (NaN stays NaN).
template <typename T>
T SignOf(T v) {
  const auto x = Value(v);
  if constexpr (!std::is_integral_v<decltype(x)>) {
    if (std::isnan(x)) return v;
  }
  if (x > 0) return Convert<T>(1);
  if constexpr (std::is_signed_v<decltype(x)> || !std::is_integral_v<decltype(x)>) {
    if (x < 0) return Convert<T>(-1);
  }
  return Convert<T>(0);
}

absl::Status Sign(KernelContext& ctx) {
  return SameTypeUnary(ctx, [](auto v) -> absl::StatusOr<decltype(v)> { return SignOf(v); });
}

absl::Status BitwiseNot(KernelContext& ctx) {
  return SameTypeUnary(ctx, [&](auto v) -> absl::StatusOr<decltype(v)> {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(~v);
    } else {
      return absl::InvalidArgumentError("BitwiseNot: integer inputs only");
    }
  });
}

// out = op(a, b) for two inputs of one integer dtype; op takes and returns the element type and
// may set `error` (division by zero).
template <typename Op>
absl::Status IntegerBinary(KernelContext& ctx, Op op) {
  absl::StatusOr<BinaryArgs> args = GetBinaryArgs(ctx, ir::DType::kUndefined);
  if (!args.ok()) return args.status();
  return DispatchNumeric(args->a->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      BroadcastBinary(args->plan, args->a->template data<T>(), args->b->template data<T>(),
                      args->out->template data<T>(), [&](T x, T y) { return static_cast<T>(op(x, y)); });
      return absl::OkStatus();
    } else {
      return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": integer inputs only"));
    }
  });
}

absl::Status BitwiseAnd(KernelContext& ctx) {
  return IntegerBinary(ctx, [](auto x, auto y) { return x & y; });
}
absl::Status BitwiseOr(KernelContext& ctx) {
  return IntegerBinary(ctx, [](auto x, auto y) { return x | y; });
}
absl::Status BitwiseXor(KernelContext& ctx) {
  return IntegerBinary(ctx, [](auto x, auto y) { return x ^ y; });
}

absl::Status BitShift(KernelContext& ctx) {
  absl::StatusOr<ops::BitShiftAttrs> attrs = ops::ParseBitShiftAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const bool left = attrs->left;
  // A shift by a negative amount or by the width or more leaves only the sign fill: -1 for a
  // right shift of a negative signed value, else 0. Signed right shifts are arithmetic; signed left
  // shifts drop the bits shifted past the sign bit (opset 28).
  return IntegerBinary(ctx, [left](auto x, auto y) {
    using T = decltype(x);
    using U = std::make_unsigned_t<T>;
    constexpr int kBits = std::numeric_limits<U>::digits;
    const bool negative_fill = !left && std::is_signed_v<T> && x < 0;
    if ((std::is_signed_v<T> && y < 0) || static_cast<U>(y) >= kBits) return negative_fill ? T(-1) : T{0};
    if (left) return static_cast<T>(static_cast<U>(static_cast<U>(x) << y));
    return static_cast<T>(x >> y);
  });
}

// Integer x mod y: with the divisor's sign (Python) unless fmod (C, the dividend's sign).
// Precondition: y != 0.
template <typename T>
T IntegerMod(T x, T y, bool fmod) {
  if constexpr (std::is_signed_v<T>) {
    if (y == -1) return T{0};  // avoids the INT_MIN % -1 trap
    const T r = static_cast<T>(x % y);
    if (!fmod && r != 0 && ((r < 0) != (y < 0))) return static_cast<T>(r + y);
    return r;
  } else {
    return static_cast<T>(x % y);
  }
}

// Floating-point x mod y: C's fmod, or with fmod = 0 numpy's mod (the divisor's sign; a zero
// remainder takes the divisor's sign too).
template <typename C>
C FloatMod(C x, C y, bool fmod) {
  const C r = std::fmod(x, y);
  if (fmod || std::isnan(r)) return r;
  if (r == 0) return std::copysign(C{0}, y);
  return (r < 0) != (y < 0) ? r + y : r;
}

absl::Status Mod(KernelContext& ctx) {
  absl::StatusOr<ops::ModAttrs> attrs = ops::ParseModAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const bool fmod = attrs->fmod;
  absl::StatusOr<BinaryArgs> args = GetBinaryArgs(ctx, ir::DType::kUndefined);
  if (!args.ok()) return args.status();
  std::atomic<bool> division_by_zero = false;  // set from ParallelFor's threads
  absl::Status status = DispatchNumeric(args->a->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      BroadcastBinary(args->plan, args->a->template data<T>(), args->b->template data<T>(),
                      args->out->template data<T>(), [&](T x, T y) {
                        if (y == 0) {
                          division_by_zero = true;
                          return T{0};
                        }
                        return IntegerMod(x, y, fmod);
                      });
      return absl::OkStatus();
    } else {
      using C = ComputeType<T>;
      BroadcastBinary(args->plan, args->a->template data<T>(), args->b->template data<T>(),
                      args->out->template data<T>(),
                      [fmod](T x, T y) { return Convert<T>(FloatMod(static_cast<C>(x), static_cast<C>(y), fmod)); });
      return absl::OkStatus();
    }
  });
  if (status.ok() && division_by_zero) return absl::InvalidArgumentError("Mod: integer division by zero");
  return status;
}

}  // namespace

std::vector<KernelDef> LogicKernels() {
  return {
      {"Equal", Equal},
      {"Greater", Greater},
      {"GreaterOrEqual", GreaterOrEqual},
      {"Less", Less},
      {"LessOrEqual", LessOrEqual},
      {"Not", Not},
      {"And", And},
      {"Or", Or},
      {"Xor", Xor},
      {"IsInf", IsInf},
      {"IsNaN", IsNaN},
      {"Sign", Sign},
      {"Mod", Mod},
      {"BitShift", BitShift},
      {"BitwiseAnd", BitwiseAnd},
      {"BitwiseOr", BitwiseOr},
      {"BitwiseXor", BitwiseXor},
      {"BitwiseNot", BitwiseNot},
  };
}

}  // namespace kernels::cpu
