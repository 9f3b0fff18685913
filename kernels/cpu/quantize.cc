// CPU kernels of QuantizeLinear, DequantizeLinear (per-tensor, per-axis (`axis` default 1) or
// blocked (`block_size`, opset 21)) and
// DynamicQuantizeLinear (uint8, range always including 0). Rounding is to nearest, ties to even.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "ir/half.h"
#include "ir/narrow.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/quantize_util.h"

namespace kernels::cpu {
namespace {

using quant::Param;
using quant::ReadParam;
using quant::Saturate;

// Calls fn(Q{}) for a quantized dtype.
template <typename Fn>
absl::Status DispatchQuantized(ir::DType dtype, Fn&& fn) {
  switch (dtype) {
    case ir::DType::kUint8: return fn(uint8_t{});
    case ir::DType::kInt8: return fn(int8_t{});
    case ir::DType::kUint16: return fn(uint16_t{});
    case ir::DType::kInt16: return fn(int16_t{});
    case ir::DType::kInt32: return fn(int32_t{});
    default: return absl::UnimplementedError(absl::StrCat("quantized dtype ", ir::DTypeName(dtype), " not supported"));
  }
}

// Arithmetic type of x / scale: float for float and float16 data, double otherwise.
template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, float> || ir::kIsHalfLike<T>, float, double>;

struct ScaleAndZero {
  Param scale, zero;
};

absl::StatusOr<ScaleAndZero> ReadScaleAndZero(const KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr || ctx.input(1) == nullptr || ctx.output(0) == nullptr) {
    return absl::InvalidArgumentError("x, scale and y are required");
  }
  const int64_t axis = ctx.attrs().GetInt("axis", 1);
  const int64_t block = ctx.attrs().GetInt("block_size", 0);
  if (block < 0) return absl::InvalidArgumentError(absl::StrCat("block_size ", block, " < 0"));
  absl::StatusOr<Param> scale = ReadParam(ctx.input(1), x->shape(), axis, 1.0, "scale", block);
  if (!scale.ok()) return scale.status();
  absl::StatusOr<Param> zero = ReadParam(ctx.input(2), x->shape(), axis, 0.0, "zero_point", block);
  if (!zero.ok()) return zero.status();
  if (zero->values.size() != 1 && zero->values.size() != scale->values.size()) {
    return absl::InvalidArgumentError("zero_point and scale have different sizes");
  }
  return ScaleAndZero{*std::move(scale), *std::move(zero)};
}

// QuantizeLinear into a narrow type: integers round to nearest even and saturate; floats convert
// x / scale + zero_point (saturating unless saturate = 0).
absl::Status QuantizeNarrow(const KernelContext& ctx, const ScaleAndZero& p, const ir::Tensor& x, ir::Tensor& y) {
  const bool saturate = ctx.attrs().GetInt("saturate", 1) != 0;
  return DispatchNumeric(x.dtype(), [&](auto tag) {
    using C = Compute<decltype(tag)>;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const C scaled = static_cast<C>(x.GetAsDouble(i)) / static_cast<C>(p.scale.at(i));
      y.data<uint8_t>()[i] = ir::IsNarrowInteger(y.dtype())
                                 ? ir::SaturateToNarrowInteger(y.dtype(), std::nearbyint(scaled) + p.zero.at(i))
                                 : ir::DoubleToNarrow(y.dtype(), static_cast<double>(scaled) + p.zero.at(i), saturate);
    }
    return absl::OkStatus();
  });
}

absl::Status QuantizeLinear(KernelContext& ctx) {
  absl::StatusOr<ScaleAndZero> p = ReadScaleAndZero(ctx);
  if (!p.ok()) return p.status();
  const ir::Tensor& x = *ctx.input(0);
  ir::Tensor& y = *ctx.output(0);
  if (ir::IsNarrowDType(y.dtype())) return QuantizeNarrow(ctx, *p, x, y);
  return DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    return DispatchQuantized(y.dtype(), [&](auto qtag) {
      using Q = decltype(qtag);
      const T* in = x.data<T>();
      Q* out = y.data<Q>();
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        const C scale = static_cast<C>(p->scale.at(i));
        out[i] = Saturate<Q>(static_cast<C>(static_cast<double>(in[i])) / scale, p->zero.at(i));
      }
      return absl::OkStatus();
    });
  });
}

absl::Status DequantizeLinear(KernelContext& ctx) {
  absl::StatusOr<ScaleAndZero> p = ReadScaleAndZero(ctx);
  if (!p.ok()) return p.status();
  const ir::Tensor& x = *ctx.input(0);
  ir::Tensor& y = *ctx.output(0);
  if (ir::IsNarrowDType(x.dtype())) {  // (value - zero_point) * scale, the value decoded
    return DispatchFloat(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = Compute<T>;
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        y.data<T>()[i] =
            static_cast<T>(static_cast<C>(x.GetAsDouble(i) - p->zero.at(i)) * static_cast<C>(p->scale.at(i)));
      }
      return absl::OkStatus();
    });
  }
  return DispatchQuantized(x.dtype(), [&](auto qtag) {
    using Q = decltype(qtag);
    return DispatchFloat(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = Compute<T>;
      const Q* in = x.data<Q>();
      T* out = y.data<T>();
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        const C v = static_cast<C>(static_cast<double>(in[i]) - p->zero.at(i)) * static_cast<C>(p->scale.at(i));
        out[i] = static_cast<T>(v);
      }
      return absl::OkStatus();
    });
  });
}

// y = saturate(round(x / scale) + zero_point) with scale and zero_point chosen so that the range
// [min(x, 0), max(x, 0)] maps onto [0, 255].
absl::Status DynamicQuantizeLinear(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr || x->dtype() != ir::DType::kFloat32) return absl::InvalidArgumentError("x must be float32");
  const float* in = x->data<float>();
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < x->num_elements(); ++i) {
    if (std::isnan(in[i])) continue;
    lo = std::min(lo, in[i]);
    hi = std::max(hi, in[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  const bool usable = scale > 0 && std::isfinite(scale);
  const uint8_t zero = usable ? Saturate<uint8_t>(-lo / scale, 0.0) : 0;
  if (ir::Tensor* y = ctx.output(0); y != nullptr) {
    uint8_t* out = y->data<uint8_t>();
    for (int64_t i = 0; i < x->num_elements(); ++i) out[i] = usable ? Saturate<uint8_t>(in[i] / scale, zero) : 0;
  }
  if (ir::Tensor* s = ctx.output(1); s != nullptr) s->data<float>()[0] = scale;
  if (ir::Tensor* z = ctx.output(2); z != nullptr) z->data<uint8_t>()[0] = zero;
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> QuantizeKernels() {
  return {
      {"QuantizeLinear", QuantizeLinear},
      {"DequantizeLinear", DequantizeLinear},
      {"DynamicQuantizeLinear", DynamicQuantizeLinear},
  };
}

}  // namespace kernels::cpu
