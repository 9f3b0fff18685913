// CPU kernels of the reduce_resize family: the Reduce* ops (Mean, Sum, Max, Min, Prod, L1, L2,
// LogSum, LogSumExp, SumSquare), ArgMax, ArgMin, Softmax, LogSoftmax (here) and Resize
// (kernels/cpu/reduce_resize_resize.cc).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/shape.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/elementwise_util.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/reduce_resize_resize.h"
#include "ops/reduce_attrs.h"

namespace kernels::cpu {
namespace {

using ir::DType;

enum class ReduceOp { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// Ops whose result is not an integer: integer inputs accumulate in double for them.
constexpr bool NeedsFloatAccumulator(ReduceOp op) {
  return op == ReduceOp::kL2 || op == ReduceOp::kLogSum || op == ReduceOp::kLogSumExp;
}

// An element widened for accumulation: int64 for integers, double for floating point.
template <typename T>
auto Widen(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<int64_t>(v);
  } else if constexpr (ir::kIsHalfLike<T>) {
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
absl::StatusOr<std::optional<std::vector<bool>>> ReducedAxes(const KernelContext& ctx, int64_t rank) {
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
      return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " out of range or repeated for rank ", rank));
    }
    mask[a] = true;
  }
  return std::optional<std::vector<bool>>(mask);
}

// For each input axis, the stride of the matching output element (0 for reduced axes).
absl::StatusOr<std::vector<int64_t>> OutputStrides(const std::vector<int64_t>& in_shape, const std::vector<bool>& mask,
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
    return absl::InvalidArgumentError(
        absl::StrCat("output shape ", ir::ShapeToString(out.shape()), " does not match the reduction"));
  }
  return strides;
}

// Calls fn(i, o) for every input element i (row-major) with o its output element's offset.
template <typename Fn>
void ForEachReduced(const std::vector<int64_t>& shape, const std::vector<int64_t>& out_strides, int64_t num_elements,
                    Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> index(rank, 0);
  int64_t o = 0;
  for (int64_t i = 0; i < num_elements; ++i) {
    fn(i, o);
    for (int64_t d = rank - 1; d >= 0; --d) {  // advance the index and the output offset
      o += out_strides[d];
      if (++index[d] < shape[d]) break;
      o -= out_strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

// a + b for accumulators; integers wrap modulo 2^64 (never signed overflow).
template <typename Acc>
Acc AddWrap(Acc a, Acc b) {
  if constexpr (std::is_integral_v<Acc>) {
    return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}

template <typename Acc>
Acc MulWrap(Acc a, Acc b) {
  if constexpr (std::is_integral_v<Acc>) {
    return static_cast<Acc>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

template <typename Acc>
Acc InitialValue(ReduceOp op) {
  constexpr bool kInt = std::is_integral_v<Acc>;
  switch (op) {
    case ReduceOp::kMax: return kInt ? std::numeric_limits<Acc>::lowest() : -std::numeric_limits<Acc>::infinity();
    case ReduceOp::kMin: return kInt ? std::numeric_limits<Acc>::max() : std::numeric_limits<Acc>::infinity();
    case ReduceOp::kProd: return Acc{1};
    default: return Acc{0};
  }
}

// acc combined with one element v; `shift` is LogSumExp's per-output maximum.
template <typename Acc>
Acc Combine(ReduceOp op, Acc acc, Acc v, double shift) {
  switch (op) {
    case ReduceOp::kMax: return v > acc || IsNan(v) ? v : acc;
    case ReduceOp::kMin: return v < acc || IsNan(v) ? v : acc;
    case ReduceOp::kProd: return MulWrap(acc, v);
    case ReduceOp::kL1: return AddWrap(acc, v < Acc{0} ? MulWrap(v, Acc{-1}) : v);
    case ReduceOp::kL2:
    case ReduceOp::kSumSquare: return AddWrap(acc, MulWrap(v, v));
    case ReduceOp::kLogSumExp:
      if constexpr (std::is_integral_v<Acc>) {
        return acc;  // never: integer inputs accumulate in double for LogSumExp
      } else {
        return acc + std::exp(v - shift);
      }
    default: return AddWrap(acc, v);
  }
}

// The reduced value from the accumulator; `count` elements were reduced.
template <typename Acc>
double FinishFloat(ReduceOp op, Acc acc, double count, double shift) {
  const double a = static_cast<double>(acc);
  switch (op) {
    case ReduceOp::kMean: return a / count;
    case ReduceOp::kL2: return std::sqrt(a);
    case ReduceOp::kLogSum: return std::log(a);
    case ReduceOp::kLogSumExp: return std::isinf(shift) ? shift : shift + std::log(a);
    default: return a;
  }
}

// Reduces `in` (element type T) into `out` accumulating in Acc (int64 or double).
template <typename T, typename Acc>
void ReduceInto(const ir::Tensor& in, const std::vector<int64_t>& out_strides, ReduceOp op, ir::Tensor& out) {
  const int64_t n_out = out.num_elements();
  const T* x = in.data<T>();
  auto value = [&](int64_t i) { return static_cast<Acc>(Widen(x[i])); };
  std::vector<double> shift;
  if (op == ReduceOp::kLogSumExp) {  // per-output maximum, subtracted before exp; a NaN makes it NaN
    shift.assign(n_out, -std::numeric_limits<double>::infinity());
    ForEachReduced(in.shape(), out_strides, in.num_elements(), [&](int64_t i, int64_t o) {
      const double v = static_cast<double>(value(i));
      shift[o] = std::isnan(v) || v > shift[o] ? v : shift[o];
    });
  }
  std::vector<Acc> acc(n_out, InitialValue<Acc>(op));
  ForEachReduced(in.shape(), out_strides, in.num_elements(),
                 [&](int64_t i, int64_t o) { acc[o] = Combine(op, acc[o], value(i), shift.empty() ? 0.0 : shift[o]); });
  const double count = n_out == 0 ? 1.0 : static_cast<double>(in.num_elements()) / n_out;
  T* y = out.data<T>();
  for (int64_t k = 0; k < n_out; ++k) {
    if constexpr (std::is_integral_v<Acc>) {
      y[k] = op == ReduceOp::kMean ? static_cast<T>(count == 0 ? 0 : acc[k] / static_cast<int64_t>(count))
                                   : static_cast<T>(acc[k]);  // truncates modulo 2^bits
    } else {
      y[k] = elementwise::Convert<T>(FinishFloat(op, acc[k], count, shift.empty() ? 0.0 : shift[k]));
    }
  }
}

// ReduceMax (any) or ReduceMin (all) of bools, false < true; an empty set gives the identity:
// false for Max, true for Min. Any nonzero byte reads as true; the output holds 0 or 1.
void ReduceBool(const ir::Tensor& in, const std::vector<int64_t>& out_strides, bool max, ir::Tensor& out) {
  const uint8_t* x = in.data<uint8_t>();
  uint8_t* y = out.data<uint8_t>();
  std::fill_n(y, out.num_elements(), max ? 0 : 1);
  ForEachReduced(in.shape(), out_strides, in.num_elements(), [&](int64_t i, int64_t o) {
    if ((x[i] != 0) == max) y[o] = max ? 1 : 0;
  });
}

template <ReduceOp kOp>
absl::Status Reduce(KernelContext& ctx) {
  if (absl::Status st = CheckIO(ctx); !st.ok()) return st;
  const ir::Tensor& in = *ctx.input(0);
  ir::Tensor& out = *ctx.output(0);
  absl::StatusOr<std::optional<std::vector<bool>>> mask = ReducedAxes(ctx, in.rank());
  if (!mask.ok()) return mask.status();
  if (!mask->has_value()) {
    if (out.byte_size() != in.byte_size()) return absl::InvalidArgumentError("output size mismatch");
    std::copy_n(static_cast<const uint8_t*>(in.raw_data()), in.byte_size(), static_cast<uint8_t*>(out.raw_data()));
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<int64_t>> strides = OutputStrides(in.shape(), **mask, out);
  if (!strides.ok()) return strides.status();
  auto run = [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    using Acc = std::conditional_t<std::is_integral_v<T> && !NeedsFloatAccumulator(kOp), int64_t, double>;
    ReduceInto<T, Acc>(in, *strides, kOp, out);
    return absl::OkStatus();
  };
  switch (in.dtype()) {
    case DType::kBool:
      if constexpr (kOp != ReduceOp::kMax && kOp != ReduceOp::kMin) {
        return absl::InvalidArgumentError("only ReduceMax and ReduceMin take bool");
      } else {
        ReduceBool(in, *strides, kOp == ReduceOp::kMax, out);
        return absl::OkStatus();
      }
    case DType::kInt8: return run(int8_t{});
    case DType::kUint8: return run(uint8_t{});
    case DType::kInt32: return run(int32_t{});
    case DType::kInt64: return run(int64_t{});
    default: return DispatchFloat(in.dtype(), run);
  }
}

// The index of the maximum (kMax) or minimum along `n` elements spaced `inner` apart; the first
// such index, or the last with `last`. NaN counts as the extreme (it wins once seen).
template <bool kMax, typename T>
int64_t ArgExtreme(const T* x, int64_t n, int64_t inner, bool last) {
  int64_t best = 0;
  auto best_v = Widen(x[0]);
  for (int64_t k = 1; k < n && !IsNan(best_v); ++k) {
    const auto v = Widen(x[k * inner]);
    const bool better = IsNan(v) || (kMax ? v > best_v : v < best_v) || (last && v == best_v);
    if (better) {
      best = k;
      best_v = v;
    }
  }
  return best;
}

template <bool kMax>
absl::Status ArgReduce(KernelContext& ctx) {
  if (ctx.input(0) == nullptr || ctx.output(0) == nullptr) {
    return absl::InvalidArgumentError("missing input or output tensor");
  }
  const ir::Tensor& in = *ctx.input(0);
  ir::Tensor& out = *ctx.output(0);
  absl::StatusOr<ops::ArgReduceAttrs> attrs = ops::ParseArgReduceAttrs(ctx.node, in.rank());
  if (!attrs.ok()) return attrs.status();
  int64_t outer = 1, n = in.shape()[attrs->axis], inner = 1;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (d < attrs->axis) outer *= in.shape()[d];
    if (d > attrs->axis) inner *= in.shape()[d];
  }
  if (out.dtype() != DType::kInt64 || out.num_elements() != outer * inner) {
    return absl::InvalidArgumentError("output must be int64 with the reduced shape");
  }
  if (out.num_elements() == 0) return absl::OkStatus();
  if (n == 0) return absl::InvalidArgumentError("cannot take the index of an extreme over an empty axis");
  auto run = [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* x = in.data<T>();
    int64_t* y = out.data<int64_t>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        y[o * inner + i] = ArgExtreme<kMax>(x + o * n * inner + i, n, inner, attrs->select_last_index);
      }
    }
    return absl::OkStatus();
  };
  switch (in.dtype()) {
    case DType::kInt8: return run(int8_t{});
    case DType::kUint8: return run(uint8_t{});
    case DType::kInt32: return run(int32_t{});
    case DType::kInt64: return run(int64_t{});
    default: return DispatchFloat(in.dtype(), run);
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
      {"ReduceMean", Reduce<ReduceOp::kMean>},
      {"ReduceSum", Reduce<ReduceOp::kSum>},
      {"ReduceMax", Reduce<ReduceOp::kMax>},
      {"ReduceMin", Reduce<ReduceOp::kMin>},
      {"ReduceProd", Reduce<ReduceOp::kProd>},
      {"ReduceL1", Reduce<ReduceOp::kL1>},
      {"ReduceL2", Reduce<ReduceOp::kL2>},
      {"ReduceLogSum", Reduce<ReduceOp::kLogSum>},
      {"ReduceLogSumExp", Reduce<ReduceOp::kLogSumExp>},
      {"ReduceSumSquare", Reduce<ReduceOp::kSumSquare>},
      {"ArgMax", ArgReduce<true>},
      {"ArgMin", ArgReduce<false>},
      {"Softmax", Softmax<false>},
      {"LogSoftmax", Softmax<true>},
      {"Resize", ResizeKernel},
  };
}

}  // namespace kernels::cpu
