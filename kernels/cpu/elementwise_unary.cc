// Owns the CPU kernels of the unary elementwise ops: activations (Relu, LeakyRelu, Elu, Selu,
// Sigmoid, Tanh, HardSigmoid, HardSwish, Softplus, Gelu) and unary math (Erf, Sqrt, Exp, Log,
// Reciprocal, Neg, Abs). Float16 computes through float.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/elementwise_util.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu::elementwise {
namespace {

// y = fn(x) over a floating-point tensor; fn takes and returns ComputeType<T>.
template <typename Fn>
absl::Status UnaryFloat(KernelContext& ctx, Fn fn) {
  absl::StatusOr<const ir::Tensor*> x = RequireInput(ctx, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<ir::Tensor*> y = RequireOutput(ctx, 0);
  if (!y.ok()) return y.status();
  if (absl::Status s = ExpectSameLayout(ctx, **x, **y); !s.ok()) return s;
  return DispatchFloat((*x)->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* in = (*x)->template data<T>();
    T* out = (*y)->template data<T>();
    const int64_t n = (*x)->num_elements();
    ParallelFor(n, kElementwiseChunk, [in, out, fn](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = Convert<T>(fn(static_cast<C>(in[i])));
    });
    return absl::OkStatus();
  });
}

// y = fn(x) over a numeric tensor; fn takes and returns the element type T.
template <typename Fn>
absl::Status UnaryNumeric(KernelContext& ctx, Fn fn) {
  absl::StatusOr<const ir::Tensor*> x = RequireInput(ctx, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<ir::Tensor*> y = RequireOutput(ctx, 0);
  if (!y.ok()) return y.status();
  if (absl::Status s = ExpectSameLayout(ctx, **x, **y); !s.ok()) return s;
  return DispatchNumeric((*x)->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* in = (*x)->template data<T>();
    T* out = (*y)->template data<T>();
    const int64_t n = (*x)->num_elements();
    ParallelFor(n, kElementwiseChunk, [in, out, fn](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = fn(in[i]);
    });
    return absl::OkStatus();
  });
}

// -v, wrapping for integers (no signed overflow), exact for float16 (sign bit flip).
template <typename T>
T Negate(T v) {
  if constexpr (ir::kIsHalfLike<T>) {
    v.bits ^= 0x8000;
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(v)));
  } else {
    return -v;
  }
}

template <typename T>
T Absolute(T v) {
  if constexpr (ir::kIsHalfLike<T>) {
    v.bits &= 0x7fff;
    return v;
  } else if constexpr (std::is_unsigned_v<T>) {
    return v;
  } else {
    return v < T{} ? Negate(v) : v;
  }
}

template <typename C>
C StableSigmoid(C x) {
  if (x >= 0) return C{1} / (C{1} + std::exp(-x));
  const C e = std::exp(x);
  return e / (C{1} + e);
}

absl::Status Relu(KernelContext& ctx) {
  return UnaryNumeric(ctx, [](auto v) {
    using T = decltype(v);
    return v < T{} ? T{} : v;  // keeps NaN
  });
}

absl::Status Neg(KernelContext& ctx) {
  return UnaryNumeric(ctx, [](auto v) { return Negate(v); });
}

absl::Status Abs(KernelContext& ctx) {
  return UnaryNumeric(ctx, [](auto v) { return Absolute(v); });
}

absl::Status LeakyRelu(KernelContext& ctx) {
  const double alpha = ctx.attrs().GetFloat("alpha", 0.01f);
  return UnaryFloat(ctx, [alpha](auto x) {
    using C = decltype(x);
    return x < 0 ? static_cast<C>(alpha) * x : x;
  });
}

absl::Status Elu(KernelContext& ctx) {
  const double alpha = ctx.attrs().GetFloat("alpha", 1.0f);
  return UnaryFloat(ctx, [alpha](auto x) {
    using C = decltype(x);
    return x < 0 ? static_cast<C>(alpha) * std::expm1(x) : x;
  });
}

absl::Status Selu(KernelContext& ctx) {
  const double alpha = ctx.attrs().GetFloat("alpha", 1.67326319217681884765625f);
  const double gamma = ctx.attrs().GetFloat("gamma", 1.05070102214813232421875f);
  return UnaryFloat(ctx, [alpha, gamma](auto x) {
    using C = decltype(x);
    const C a = static_cast<C>(alpha), g = static_cast<C>(gamma);
    return x <= 0 ? g * (a * std::exp(x) - a) : g * x;
  });
}

absl::Status Sigmoid(KernelContext& ctx) {
  return UnaryFloat(ctx, [](auto x) { return StableSigmoid(x); });
}

absl::Status Tanh(KernelContext& ctx) {
  return UnaryFloat(ctx, [](auto x) { return std::tanh(x); });
}

absl::Status HardSigmoid(KernelContext& ctx) {
  const double alpha = ctx.attrs().GetFloat("alpha", 0.2f);
  const double beta = ctx.attrs().GetFloat("beta", 0.5f);
  return UnaryFloat(ctx, [alpha, beta](auto x) {
    using C = decltype(x);
    const C v = static_cast<C>(alpha) * x + static_cast<C>(beta);
    return std::isnan(v) ? v : std::clamp(v, C{0}, C{1});
  });
}

absl::Status HardSwish(KernelContext& ctx) {
  return UnaryFloat(ctx, [](auto x) {
    using C = decltype(x);
    const C v = x / C{6} + C{0.5};
    return std::isnan(v) ? v : x * std::clamp(v, C{0}, C{1});
  });
}

absl::Status Softplus(KernelContext& ctx) {
  return UnaryFloat(ctx, [](auto x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); });
}

absl::Status Gelu(KernelContext& ctx) {
  const std::string approximate = ctx.attrs().GetString("approximate", "none");
  if (approximate == "tanh") {
    return UnaryFloat(ctx, [](auto x) {
      using C = decltype(x);
      const C k = static_cast<C>(0.79788456080286535588);  // sqrt(2 / pi)
      return C{0.5} * x * (C{1} + std::tanh(k * (x + static_cast<C>(0.044715) * x * x * x)));
    });
  }
  if (approximate != "none") {
    return absl::InvalidArgumentError("Gelu: approximate must be \"none\" or \"tanh\"");
  }
  return UnaryFloat(ctx, [](auto x) {
    using C = decltype(x);
    return C{0.5} * x * (C{1} + std::erf(x * static_cast<C>(0.70710678118654752440)));
  });
}

absl::Status Erf(KernelContext& ctx) {
  return UnaryFloat(ctx, [](auto x) { return std::erf(x); });
}

absl::Status Sqrt(KernelContext& ctx) {
  return UnaryFloat(ctx, [](auto x) { return std::sqrt(x); });
}

absl::Status Exp(KernelContext& ctx) {
  return UnaryFloat(ctx, [](auto x) { return std::exp(x); });
}

absl::Status Log(KernelContext& ctx) {
  return UnaryFloat(ctx, [](auto x) { return std::log(x); });
}

absl::Status Reciprocal(KernelContext& ctx) {
  return UnaryFloat(ctx, [](auto x) { return decltype(x){1} / x; });
}

}  // namespace

std::vector<KernelDef> UnaryKernels() {
  return {
      {"Relu", Relu},
      {"LeakyRelu", LeakyRelu},
      {"Elu", Elu},
      {"Selu", Selu},
      {"Sigmoid", Sigmoid},
      {"Tanh", Tanh},
      {"HardSigmoid", HardSigmoid},
      {"HardSwish", HardSwish},
      {"Softplus", Softplus},
      {"Gelu", Gelu},
      {"Erf", Erf},
      {"Sqrt", Sqrt},
      {"Exp", Exp},
      {"Log", Log},
      {"Reciprocal", Reciprocal},
      {"Neg", Neg},
      {"Abs", Abs},
  };
}

}  // namespace kernels::cpu::elementwise
