// Owns the elementwise family's CPU kernel table (ElementwiseKernels) and the kernels of Where,
// Clip, Cast, BitCast and Identity; unary and broadcasting arithmetic kernels live in
// elementwise_unary.cc and elementwise_binary.cc.
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/narrow.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/elementwise_broadcast.h"
#include "kernels/cpu/elementwise_util.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/string_cast.h"

namespace kernels::cpu {
namespace elementwise {
namespace {

// Where(cond, X, Y): cond ? X : Y with broadcasting of all three.
absl::Status Where(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> cond = RequireInput(ctx, 0);
  if (!cond.ok()) return cond.status();
  absl::StatusOr<const ir::Tensor*> x = RequireInput(ctx, 1);
  if (!x.ok()) return x.status();
  absl::StatusOr<const ir::Tensor*> y = RequireInput(ctx, 2);
  if (!y.ok()) return y.status();
  absl::StatusOr<ir::Tensor*> out = RequireOutput(ctx, 0);
  if (!out.ok()) return out.status();
  if (absl::Status s = ExpectDTypeIs(ctx, **cond, ir::DType::kBool, "condition"); !s.ok()) return s;
  if (absl::Status s = ExpectDTypeIs(ctx, **y, (*x)->dtype(), "input 2"); !s.ok()) return s;
  if (absl::Status s = ExpectDTypeIs(ctx, **out, (*x)->dtype(), "output"); !s.ok()) return s;
  absl::StatusOr<BroadcastPlan> plan =
      MakeBroadcastPlan((*out)->shape(), {(*cond)->shape(), (*x)->shape(), (*y)->shape()});
  if (!plan.ok()) return absl::InvalidArgumentError(absl::StrCat("Where: ", plan.status().message()));
  return DispatchNumeric((*x)->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    BroadcastTernary(*plan, (*cond)->template data<uint8_t>(), (*x)->template data<T>(), (*y)->template data<T>(),
                     (*out)->template data<T>(), [](uint8_t c, T a, T b) { return c != 0 ? a : b; });
    return absl::OkStatus();
  });
}

// Optional Clip bound i: nullptr when absent; an error unless it is one element of x's dtype.
absl::StatusOr<const ir::Tensor*> ClipBound(const KernelContext& ctx, size_t i, ir::DType dtype) {
  const ir::Tensor* bound = ctx.input(i);
  if (bound == nullptr || !bound->valid()) return nullptr;
  const char* name = i == 1 ? "min" : "max";
  if (absl::Status s = ExpectDTypeIs(ctx, *bound, dtype, name); !s.ok()) return s;
  if (bound->num_elements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Clip: ", name, " must be a scalar, got shape ", ir::ShapeToString(bound->shape())));
  }
  return bound;
}

// Clip(x, min?, max?): min(max(x, min), max); NaN stays NaN; min > max gives max.
// The largest (or lowest) value of T: infinities for the floating types.
template <typename T>
T Extreme(bool largest) {
  if constexpr (ir::kIsHalfLike<T>) {
    return T(largest ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity());
  } else if constexpr (std::is_floating_point_v<T>) {
    return largest ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  } else {
    return largest ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
  }
}

absl::Status Clip(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> x = RequireInput(ctx, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<ir::Tensor*> out = RequireOutput(ctx, 0);
  if (!out.ok()) return out.status();
  if (absl::Status s = ExpectSameLayout(ctx, **x, **out); !s.ok()) return s;
  absl::StatusOr<const ir::Tensor*> lo = ClipBound(ctx, 1, (*x)->dtype());
  if (!lo.ok()) return lo.status();
  absl::StatusOr<const ir::Tensor*> hi = ClipBound(ctx, 2, (*x)->dtype());
  if (!hi.ok()) return hi.status();
  return DispatchNumeric((*x)->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* in = (*x)->template data<T>();
    T* y = (*out)->template data<T>();
    const int64_t n = (*x)->num_elements();
    // An absent bound is the dtype's extreme, so the loop has no branch (NaN compares false: kept).
    const T lo_value = *lo != nullptr ? (*lo)->template data<T>()[0] : Extreme<T>(false);
    const T hi_value = *hi != nullptr ? (*hi)->template data<T>()[0] : Extreme<T>(true);
    ParallelFor(n, kElementwiseChunk, [in, y, lo_value, hi_value](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {  // copies of the bounds: y (maybe in itself) cannot alias them
        const T v = in[i];
        y[i] = v < lo_value ? lo_value : (v > hi_value ? hi_value : v);
      }
    });
    return absl::OkStatus();
  });
}

// Converts n elements of From to To; bool targets get x != 0.
template <typename From, typename To>
void CastElements(const From* in, To* out, int64_t n, bool to_bool) {
  if (to_bool) {
    for (int64_t i = 0; i < n; ++i) out[i] = Convert<To>(Convert<float>(in[i]) != 0 ? 1 : 0);
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = Convert<To>(in[i]);
}

// Cast to or from bfloat16 (storage only): through float, bool targets get x != 0.
absl::Status CastBFloat16(const ir::Tensor& x, ir::Tensor& out) {
  const int64_t n = x.num_elements();
  if (out.dtype() == ir::DType::kBFloat16) {
    for (int64_t i = 0; i < n; ++i) {
      out.data<uint16_t>()[i] = ir::FloatToBFloat16Bits(static_cast<float>(x.GetAsDouble(i)));
    }
    return absl::OkStatus();
  }
  const bool to_bool = out.dtype() == ir::DType::kBool;
  return DispatchNumeric(out.dtype(), [&](auto to_tag) -> absl::Status {
    using To = decltype(to_tag);
    const uint16_t* in = x.data<uint16_t>();
    for (int64_t i = 0; i < n; ++i) {
      const float v = ir::BFloat16BitsToFloat(in[i]);
      out.data<To>()[i] = Convert<To>(to_bool ? (v != 0 ? 1.0f : 0.0f) : v);
    }
    return absl::OkStatus();
  });
}

// Cast to or from one of ONNX's narrow types (ir/narrow.h), through double: `saturate` (default 1)
// clamps float8 overflow, `round_mode` rounds float8e8m0 ("up" by default).
absl::Status CastNarrow(const KernelContext& ctx, const ir::Tensor& x, ir::Tensor& out) {
  const int64_t n = x.num_elements();
  if (ir::IsNarrowDType(out.dtype())) {
    const bool saturate = ctx.attrs().GetInt("saturate", 1) != 0;
    const std::string mode = ctx.attrs().GetString("round_mode", "up");
    const ir::NarrowRounding rounding = mode == "nearest" ? ir::NarrowRounding::kNearestEven
                                        : mode == "down"  ? ir::NarrowRounding::kDown
                                                          : ir::NarrowRounding::kUp;
    for (int64_t i = 0; i < n; ++i) {
      out.data<uint8_t>()[i] = ir::DoubleToNarrow(out.dtype(), x.GetAsDouble(i), saturate, rounding);
    }
    return absl::OkStatus();
  }
  if (out.dtype() == ir::DType::kBFloat16) return CastBFloat16(x, out);
  const bool to_bool = out.dtype() == ir::DType::kBool;
  return DispatchNumeric(out.dtype(), [&](auto to_tag) -> absl::Status {
    using To = decltype(to_tag);
    for (int64_t i = 0; i < n; ++i) {
      const double v = x.GetAsDouble(i);
      out.data<To>()[i] = Convert<To>(to_bool ? (v != 0 ? 1.0 : 0.0) : v);
    }
    return absl::OkStatus();
  });
}

absl::Status Cast(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> x = RequireInput(ctx, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<ir::Tensor*> out = RequireOutput(ctx, 0);
  if (!out.ok()) return out.status();
  const ir::DType to = (*out)->dtype();
  if (ctx.attrs().Has("to") && static_cast<ir::DType>(ctx.attrs().GetInt("to", 0)) != to) {
    return absl::InvalidArgumentError(
        absl::StrCat("Cast: output dtype ", ir::DTypeName(to), " does not match attribute 'to'"));
  }
  if ((*x)->num_elements() != (*out)->num_elements()) {
    return absl::InvalidArgumentError("Cast: output shape does not match input shape");
  }
  if (to == ir::DType::kString) return CastToString(**x, **out);
  if ((*x)->dtype() == ir::DType::kString) return CastFromString(**x, **out);
  if (ir::IsNarrowDType(to) || ir::IsNarrowDType((*x)->dtype())) return CastNarrow(ctx, **x, **out);
  const bool to_bool = to == ir::DType::kBool;
  if (to == ir::DType::kBFloat16 || (*x)->dtype() == ir::DType::kBFloat16) {
    return CastBFloat16(**x, **out);
  }
  return DispatchNumeric((*x)->dtype(), [&](auto from_tag) -> absl::Status {
    using From = decltype(from_tag);
    return DispatchNumeric(to, [&](auto to_tag) -> absl::Status {
      using To = decltype(to_tag);
      CastElements((*x)->template data<From>(), (*out)->template data<To>(), (*x)->num_elements(), to_bool);
      return absl::OkStatus();
    });
  });
}

// Copies input 0 into output 0 (same dtype and element count; strings too).
absl::Status CopyInputToOutput(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> x = RequireInput(ctx, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<ir::Tensor*> out = RequireOutput(ctx, 0);
  if (!out.ok()) return out.status();
  if (absl::Status s = ExpectSameLayout(ctx, **x, **out); !s.ok()) return s;
  return (*out)->CopyDataFrom(**x);
}

// A sequence or an empty optional is immutable: the output shares it.
absl::Status Identity(KernelContext& ctx) {
  if (ctx.input(0) != nullptr && !ctx.input(0)->is_dense()) {
    *ctx.output(0) = *ctx.input(0);
    return absl::OkStatus();
  }
  return CopyInputToOutput(ctx);
}

// BitCast: the input's bytes, unchanged, under the output's dtype (inference checked the widths).
absl::Status BitCast(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> x = RequireInput(ctx, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<ir::Tensor*> out = RequireOutput(ctx, 0);
  if (!out.ok()) return out.status();
  if ((*out)->byte_size() != (*x)->byte_size()) return absl::InvalidArgumentError("BitCast changes the byte size");
  std::memcpy((*out)->raw_data(), (*x)->raw_data(), (*x)->byte_size());
  return absl::OkStatus();
}

}  // namespace
}  // namespace elementwise

std::vector<KernelDef> ElementwiseKernels() {
  std::vector<KernelDef> kernels = {
      {"Where", elementwise::Where},     {"Clip", elementwise::Clip},         {"Cast", elementwise::Cast},
      {"BitCast", elementwise::BitCast}, {"Identity", elementwise::Identity},
  };
  for (auto family : {elementwise::UnaryKernels, elementwise::BinaryKernels}) {
    for (const KernelDef& def : family()) kernels.push_back(def);
  }
  return kernels;
}

}  // namespace kernels::cpu
