// CPU kernels of the reduce_resize family: ReduceMean, ReduceSum, ReduceMax, Softmax, LogSoftmax
// (here) and Resize (kernels/cpu/reduce_resize_resize.cc).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/shape.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/reduce_resize_resize.h"

namespace kernels::cpu {
namespace {

using ir::DType;

enum class ReduceOp { kSum, kMean, kMax };

// An element widened for accumulation: int64 for integers, double for floating point.
template <typename T>
auto Widen(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<int64_t>(v);
  } else if constexpr (std::is_same_v<T, ir::Half>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

absl::Status CheckIO(const KernelContext& ctx) {
  if (ctx.input(0) == nullptr || ctx.output(0) == nullptr) {
    return absl::InvalidArgumentError("missing input or output tensor");
  }
  if (ctx.input(0)->dtype() != ctx.output(0)->dtype()) {
    return absl::InvalidArgumentError("output dtype differs from the input's");
  }
  return absl::OkStatus();
}

template <typename Acc>
bool IsNan(Acc v) {
  if constexpr (std::is_integral_v<Acc>) {
    return false;
  } else {
    return std::isnan(v);
  }
}

// The per-axis reduced mask (all axes when axes is absent or empty); nullopt for a no-op.
absl::StatusOr<std::optional<std::vector<bool>>> ReducedAxes(const KernelContext& ctx,
                                                             int64_t rank) {
  std::vector<int64_t> axes;
  if (const ir::Tensor* t = ctx.input(1)) {
    if (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32) {
      return absl::InvalidArgumentError("axes must be int64");
    }
    axes = t->ToInt64Vector();
  }
  if (axes.empty()) {
    if (ctx.attrs().GetInt("noop_with_empty_axes", 0) != 0) {
      return std::optional<std::vector<bool>>();
    }
    return std::optional<std::vector<bool>>(std::vector<bool>(rank, true));
  }
  std::vector<bool> mask(rank, false);
  for (int64_t axis : axes) {
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank || mask[a]) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", axis, " out of range or repeated for rank ", rank));
    }
    mask[a] = true;
  }
  return std::optional<std::vector<bool>>(mask);
}

// For each input axis, the stride of the matching output element (0 for reduced axes).
absl::StatusOr<std::vector<int64_t>> OutputStrides(const std::vector<int64_t>& in_shape,
                                                   const std::vector<bool>& mask,
                                                   const ir::Tensor& out) {
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  std::vector<int64_t> kept, strides(rank, 0);
  for (int64_t i = 0; i < rank; ++i) kept.push_back(mask[i] ? 1 : in_shape[i]);
  int64_t count = 1, stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    strides[i] = mask[i] ? 0 : stride;
    stride *= kept[i];
    count *= kept[i];
  }
  if (count != out.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat("output shape ", ir::ShapeToString(out.shape()),
                                                   " does not match the reduction"));
  }
  return strides;
}

template <typename T>
void ReduceInto(const ir::Tensor& in, const std::vector<int64_t>& out_strides, ReduceOp op,
                ir::Tensor& out) {
  using Acc = decltype(Widen(T{}));
  const int64_t n_out = out.num_elements();
  const Acc init = op == ReduceOp::kMax
                       ? (std::is_integral_v<T> ? std::numeric_limits<Acc>::lowest()
                                                : -std::numeric_limits<Acc>::infinity())
                       : Acc{0};
  std::vector<Acc> acc(n_out, init);
  const std::vector<int64_t>& shape = in.shape();
  const int64_t rank = in.rank();
  std::vector<int64_t> index(rank, 0);
  const T* x = in.data<T>();
  int64_t o = 0;
  for (int64_t i = 0; i < in.num_elements(); ++i) {
    const Acc v = Widen(x[i]);
    if (op == ReduceOp::kMax) {
      if (v > acc[o] || IsNan(v)) acc[o] = v;
    } else if constexpr (std::is_integral_v<Acc>) {  // wraps modulo 2^64, never signed overflow
      acc[o] = static_cast<Acc>(static_cast<uint64_t>(acc[o]) + static_cast<uint64_t>(v));
    } else {
      acc[o] += v;
    }
    for (int64_t d = rank - 1; d >= 0; --d) {  // advance the index and the output offset
      o += out_strides[d];
      if (++index[d] < shape[d]) break;
      o -= out_strides[d] * shape[d];
      index[d] = 0;
    }
  }
  const double count = n_out == 0 ? 1.0 : static_cast<double>(in.num_elements()) / n_out;
  T* y = out.data<T>();
  for (int64_t k = 0; k < n_out; ++k) {
    if (op == ReduceOp::kMean && std::is_integral_v<Acc>) {
      y[k] = static_cast<T>(acc[k] / static_cast<int64_t>(count));  // truncates, stays in range
    } else if (op == ReduceOp::kMean) {
      y[k] = static_cast<T>(static_cast<double>(acc[k]) / count);
    } else {
      y[k] = static_cast<T>(acc[k]);
    }
  }
}

template <ReduceOp kOp>
absl::Status Reduce(KernelContext& ctx) {
  if (absl::Status st = CheckIO(ctx); !st.ok()) return st;
  const ir::Tensor& in = *ctx.input(0);
  ir::Tensor& out = *ctx.output(0);
  absl::StatusOr<std::optional<std::vector<bool>>> mask = ReducedAxes(ctx, in.rank());
  if (!mask.ok()) return mask.status();
  if (!mask->has_value()) {
    if (out.byte_size() != in.byte_size())
      return absl::InvalidArgumentError("output size mismatch");
    std::copy_n(static_cast<const uint8_t*>(in.raw_data()), in.byte_size(),
                static_cast<uint8_t*>(out.raw_data()));
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<int64_t>> strides = OutputStrides(in.shape(), **mask, out);
  if (!strides.ok()) return strides.status();
  auto run = [&](auto tag) -> absl::Status {
    ReduceInto<decltype(tag)>(in, *strides, kOp, out);
    return absl::OkStatus();
  };
  switch (in.dtype()) {
    case DType::kInt32:
      return run(int32_t{});
    case DType::kInt64:
      return run(int64_t{});
    default:
      return DispatchFloat(in.dtype(), run);
  }
}

// Softmax over rows of `n` elements spaced `inner` apart, `outer * inner` rows in all.
template <typename T>
void SoftmaxRows(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool log) {
  std::vector<double> row(n);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < n; ++k) {
        row[k] = Widen(x[base + k * inner]);
        max = std::max(max, row[k]);
      }
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        row[k] -= max;
        sum += std::exp(row[k]);
      }
      const double log_sum = std::log(sum);
      for (int64_t k = 0; k < n; ++k) {
        const double v = log ? row[k] - log_sum : std::exp(row[k] - log_sum);
        y[base + k * inner] = static_cast<T>(v);
      }
    }
  }
}

template <bool kLog>
absl::Status Softmax(KernelContext& ctx) {
  if (absl::Status st = CheckIO(ctx); !st.ok()) return st;
  const ir::Tensor& in = *ctx.input(0);
  ir::Tensor& out = *ctx.output(0);
  if (out.num_elements() != in.num_elements()) {
    return absl::InvalidArgumentError("output size differs from the input's");
  }
  const int64_t rank = in.rank();
  const bool legacy = ctx.node.opset < 13;
  int64_t axis = ctx.attrs().GetInt("axis", legacy ? 1 : -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank || (!legacy && axis == rank)) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", ctx.attrs().GetInt("axis", 0), " out of range for rank ", rank));
  }
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t& part = d < axis ? outer : (d == axis || legacy ? n : inner);
    part *= in.shape()[d];
  }
  if (in.num_elements() == 0) return absl::OkStatus();
  return DispatchFloat(in.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    SoftmaxRows<T>(in.data<T>(), out.data<T>(), outer, n, inner, kLog);
    return absl::OkStatus();
  });
}

}  // namespace

std::vector<KernelDef> ReduceResizeKernels() {
  return {
      {"ReduceMean", Reduce<ReduceOp::kMean>}, {"ReduceSum", Reduce<ReduceOp::kSum>},
      {"ReduceMax", Reduce<ReduceOp::kMax>},   {"Softmax", Softmax<false>},
      {"LogSoftmax", Softmax<true>},           {"Resize", ResizeKernel},
  };
}

}  // namespace kernels::cpu
