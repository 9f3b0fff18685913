// Owns the helpers shared by the elementwise CPU kernel files: checked access to inputs and
// outputs, dtype conversion through float for ir::Half, and the per-file kernel tables that
// kernels/cpu/elementwise.cc concatenates.
#ifndef ONNXRUN_KERNELS_CPU_ELEMENTWISE_UTIL_H_
#define ONNXRUN_KERNELS_CPU_ELEMENTWISE_UTIL_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/half.h"
#include "ir/tensor.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/parallel.h"

namespace kernels::cpu::elementwise {

// Kernel tables of the elementwise family, one per file.
std::vector<KernelDef> UnaryKernels();   // activations and unary math
std::vector<KernelDef> BinaryKernels();  // Add..Pow, Min, Max, Sum, PRelu

// Fewest elements per ParallelFor chunk of an elementwise loop (smaller loops run on the caller).
inline constexpr int64_t kElementwiseChunk = int64_t{1} << 15;

// The type float code computes in for element type T: double for double, float otherwise.
template <typename T>
using ComputeType = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Value conversion between element types; ir::Half and ir::BFloat16 go through float.
using ir::kIsHalfLike;

// Floating point to an integer type: truncates toward zero; NaN gives 0 and values outside the
// type's range saturate (a plain static_cast would be undefined behaviour there).
template <typename To>
To FloatToInteger(double value) {
  if (std::isnan(value)) return To{};
  // min and max as doubles are exact or round up to a power of two, so the bounds are safe.
  if (value <= static_cast<double>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
  if (value >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
  return static_cast<To>(value);
}

template <typename To, typename From>
To Convert(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (std::is_integral_v<To> && !std::is_same_v<To, bool> &&
                       (std::is_floating_point_v<From> || kIsHalfLike<From>)) {
    if constexpr (kIsHalfLike<From>) {
      return FloatToInteger<To>(static_cast<float>(value));
    } else {
      return FloatToInteger<To>(static_cast<double>(value));
    }
  } else if constexpr (kIsHalfLike<To>) {
    if constexpr (std::is_same_v<From, double>) {
      return To(value);
    } else {
      return To(static_cast<float>(value));
    }
  } else if constexpr (kIsHalfLike<From>) {
    return static_cast<To>(static_cast<float>(value));
  } else {
    return static_cast<To>(value);
  }
}

// Input i, or an error when it is absent.
inline absl::StatusOr<const ir::Tensor*> RequireInput(const KernelContext& ctx, size_t i) {
  const ir::Tensor* t = ctx.input(i);
  if (t == nullptr || !t->valid()) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": input ", i, " is missing"));
  }
  return t;
}

// Output i, or an error when it is absent.
inline absl::StatusOr<ir::Tensor*> RequireOutput(const KernelContext& ctx, size_t i) {
  ir::Tensor* t = ctx.output(i);
  if (t == nullptr || !t->valid()) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": output ", i, " is missing"));
  }
  return t;
}

// An error unless `t` has `dtype`.
inline absl::Status ExpectDTypeIs(const KernelContext& ctx, const ir::Tensor& t, ir::DType dtype, const char* what) {
  if (t.dtype() == dtype) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": ", what, " has dtype ", ir::DTypeName(t.dtype()),
                                                 ", expected ", ir::DTypeName(dtype)));
}

// An error unless `out` has the dtype and element count of `in` (unary ops).
inline absl::Status ExpectSameLayout(const KernelContext& ctx, const ir::Tensor& in, const ir::Tensor& out) {
  if (absl::Status s = ExpectDTypeIs(ctx, out, in.dtype(), "output"); !s.ok()) return s;
  if (in.num_elements() != out.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": output shape ", ir::ShapeToString(out.shape()),
                                                   " does not match input shape ", ir::ShapeToString(in.shape())));
  }
  return absl::OkStatus();
}

}  // namespace kernels::cpu::elementwise

#endif  // ONNXRUN_KERNELS_CPU_ELEMENTWISE_UTIL_H_
