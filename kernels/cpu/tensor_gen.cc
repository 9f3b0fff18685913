// CPU kernels of the generator ops and their kernel table: ConstantOfShape, Range, EyeLike, Tile,
// Trilu, Size, OneHot, HannWindow, HammingWindow and BlackmanWindow. Sizes and attributes are read
// through ops/tensor_gen_attrs.h, as the inference functions read them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/tensor_ops_util.h"
#include "ops/tensor_gen_attrs.h"

namespace kernels::cpu {
namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

// Fills every element of `out` with the one element of `value` (same dtype).
void FillWith(ir::Tensor& out, const ir::Tensor& value) {
  const size_t es = ir::DTypeSize(out.dtype());
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  for (int64_t i = 0; i < out.num_elements(); ++i) std::memcpy(dst + i * es, value.raw_data(), es);
}

absl::Status ConstantOfShapeKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  absl::StatusOr<ir::Tensor> value = ops::ParseConstantOfShapeValue(ctx.attrs());
  if (!value.ok()) return value.status();
  const std::vector<int64_t> dims = ctx.input(0)->ToInt64Vector();
  if (absl::Status s = CheckOutput(ctx, 0, value->dtype(), dims); !s.ok()) return s;
  FillWith(*ctx.output(0), *value);
  return absl::OkStatus();
}

// out[i] = start + i * delta for i < count; the values stay between start and limit.
template <typename T>
void FillIntRange(T* out, int64_t count, int64_t start, int64_t delta) {
  int64_t v = start;
  for (int64_t i = 0; i < count; ++i) {
    out[i] = static_cast<T>(v);
    if (i + 1 < count) v += delta;
  }
}

absl::Status RangeKernel(KernelContext& ctx) {
  for (size_t i = 0; i < 3; ++i) {
    if (absl::Status s = RequireInput(ctx, i); !s.ok()) return s;
  }
  const ir::Tensor &start = *ctx.input(0), &delta = *ctx.input(2);
  absl::StatusOr<int64_t> count = ops::RangeCount(start, *ctx.input(1), delta);
  if (!count.ok()) return count.status();
  if (absl::Status s = CheckOutput(ctx, 0, start.dtype(), {*count}); !s.ok()) return s;
  ir::Tensor& out = *ctx.output(0);
  if (ir::IsFloatingPoint(start.dtype())) {
    // float16 / bfloat16 (opset 27): start + i * delta in float (stash_type 1, the default) or
    // rounded to the type at each step.
    const bool stash_float = ctx.attrs().GetInt("stash_type", 1) == 1;
    return DispatchFloat(start.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const double s = start.GetAsDouble(0), d = delta.GetAsDouble(0);
      for (int64_t i = 0; i < *count; ++i) {
        if constexpr (ir::kIsHalfLike<T>) {
          const float step =
              stash_float ? static_cast<float>(i) * static_cast<float>(d)
                          : static_cast<float>(T(static_cast<float>(T(static_cast<float>(i))) * static_cast<float>(d)));
          out.data<T>()[i] = T(static_cast<float>(s) + step);
        } else {
          out.data<T>()[i] = static_cast<T>(s + static_cast<double>(i) * d);
        }
      }
      return absl::OkStatus();
    });
  }
  // Every value lies between start and limit, so it fits the dtype and int64 cannot overflow.
  const int64_t s = start.GetAsInt64(0), d = delta.GetAsInt64(0);
  switch (start.dtype()) {
    case ir::DType::kInt16: FillIntRange(out.data<int16_t>(), *count, s, d); break;
    case ir::DType::kInt32: FillIntRange(out.data<int32_t>(), *count, s, d); break;
    case ir::DType::kInt64: FillIntRange(out.data<int64_t>(), *count, s, d); break;
    default: return Invalid(absl::StrCat("unsupported dtype ", ir::DTypeName(start.dtype())));
  }
  return absl::OkStatus();
}

absl::Status EyeLikeKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  absl::StatusOr<ops::EyeLikeAttrs> attrs = ops::ParseEyeLikeAttrs(ctx.attrs(), in.dtype());
  if (!attrs.ok()) return attrs.status();
  if (in.rank() != 2) return Invalid(absl::StrCat("input must be 2-D, has rank ", in.rank()));
  if (absl::Status s = CheckOutput(ctx, 0, attrs->dtype, in.shape()); !s.ok()) return s;
  const int64_t rows = in.shape()[0], cols = in.shape()[1];
  // Clamped so that row + k cannot overflow; a diagonal past the matrix sets nothing.
  const int64_t k = std::clamp<int64_t>(attrs->k, -rows - 1, cols + 1);
  ir::Tensor& out = *ctx.output(0);
  return DispatchNumeric(attrs->dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t r = std::max<int64_t>(0, -k); r < rows && r + k < cols; ++r) {
      out.data<T>()[r * cols + r + k] = static_cast<T>(1.0);
    }
    return absl::OkStatus();
  });
}

absl::Status TileKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  if (absl::Status s = RequireInput(ctx, 1); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  const std::vector<int64_t> repeats = ctx.input(1)->ToInt64Vector();
  if (static_cast<int64_t>(repeats.size()) != in.rank()) {
    return Invalid(absl::StrCat("repeats has ", repeats.size(), " entries for input rank ", in.rank()));
  }
  // The output viewed as [r0, d0, r1, d1, ...] reads the input with stride 0 along each r.
  const std::vector<int64_t> in_strides = ContiguousStrides(in.shape());
  std::vector<int64_t> out_shape, view_shape, view_strides;
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (repeats[i] < 0) return Invalid(absl::StrCat("negative repeat ", repeats[i]));
    out_shape.push_back(in.shape()[i] * repeats[i]);  // bounded: the output was allocated
    view_shape.insert(view_shape.end(), {repeats[i], in.shape()[i]});
    view_strides.insert(view_strides.end(), {0, in_strides[i]});
  }
  if (absl::Status s = CheckOutput(ctx, 0, in.dtype(), out_shape); !s.ok()) return s;
  if (ctx.output(0)->num_elements() == 0) return absl::OkStatus();
  StridedCopy(ctx.output(0)->raw_data(), in.raw_data(), ir::DTypeSize(in.dtype()), view_shape, view_strides);
  return absl::OkStatus();
}

absl::Status TriluKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& in = *ctx.input(0);
  if (in.rank() < 2) return Invalid(absl::StrCat("input must have rank >= 2, has ", in.rank()));
  int64_t k = 0;
  if (const ir::Tensor* kt = ctx.input(1); kt != nullptr && kt->valid()) {
    if (kt->num_elements() != 1 || kt->dtype() != ir::DType::kInt64) return Invalid("k must be one int64");
    k = kt->GetAsInt64(0);
  }
  if (absl::Status s = CheckOutput(ctx, 0, in.dtype(), in.shape()); !s.ok()) return s;
  const int64_t rows = in.shape()[in.rank() - 2], cols = in.shape()[in.rank() - 1];
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
  const bool upper = ctx.attrs().GetInt("upper", 1) != 0;
  const size_t es = ir::DTypeSize(in.dtype());
  if (in.byte_size() == 0) return absl::OkStatus();
  std::memcpy(ctx.output(0)->raw_data(), in.raw_data(), in.byte_size());
  auto* out = static_cast<uint8_t*>(ctx.output(0)->raw_data());
  const int64_t matrices = in.num_elements() / (rows * cols);
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t r = 0; r < rows; ++r) {
      // Zero columns [begin, end) of this row: below diagonal k for upper, above it for lower.
      const int64_t begin = upper ? 0 : std::clamp<int64_t>(r + k + 1, 0, cols);
      const int64_t end = upper ? std::clamp<int64_t>(r + k, 0, cols) : cols;
      if (end > begin) std::memset(out + ((m * rows + r) * cols + begin) * es, 0, (end - begin) * es);
    }
  }
  return absl::OkStatus();
}

absl::Status SizeKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  if (absl::Status s = CheckOutput(ctx, 0, ir::DType::kInt64, {}); !s.ok()) return s;
  ctx.output(0)->data<int64_t>()[0] = ctx.input(0)->num_elements();
  return absl::OkStatus();
}

absl::Status OneHotKernel(KernelContext& ctx) {
  for (size_t i = 0; i < 3; ++i) {
    if (absl::Status s = RequireInput(ctx, i); !s.ok()) return s;
  }
  const ir::Tensor &indices = *ctx.input(0), &values = *ctx.input(2);
  absl::StatusOr<int64_t> depth = ops::OneHotDepth(*ctx.input(1));
  if (!depth.ok()) return depth.status();
  if (values.num_elements() != 2) return Invalid("values must have two elements");
  const int64_t rank = indices.rank() + 1;
  int64_t axis = ctx.attrs().GetInt("axis", -1);
  if (axis < -rank || axis >= rank) return Invalid(absl::StrCat("axis ", axis, " out of range for rank ", rank));
  if (axis < 0) axis += rank;
  std::vector<int64_t> shape = indices.shape();
  shape.insert(shape.begin() + axis, *depth);
  if (absl::Status s = CheckOutput(ctx, 0, values.dtype(), shape); !s.ok()) return s;
  int64_t inner = 1;
  for (int64_t i = axis; i < indices.rank(); ++i) inner *= indices.shape()[i];
  const size_t es = ir::DTypeSize(values.dtype());
  const auto* off_on = static_cast<const uint8_t*>(values.raw_data());
  ir::Tensor& out = *ctx.output(0);
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  for (int64_t i = 0; i < out.num_elements(); ++i) std::memcpy(dst + i * es, off_on, es);
  const double d = static_cast<double>(*depth);
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    const double v = indices.GetAsDouble(i);
    if (!(v >= -d && v < d)) continue;  // out of range (or NaN): all off
    int64_t index = static_cast<int64_t>(v);
    if (index < 0) index += *depth;
    const int64_t outer = i / inner, within = i % inner;
    std::memcpy(dst + ((outer * *depth + index) * inner + within) * es, off_on + es, es);
  }
  return absl::OkStatus();
}

// Generalised cosine windows: sum_j a_j * (-1)^j * cos(2 pi j n / N).
absl::Status CosineWindowKernel(KernelContext& ctx, std::initializer_list<double> coefficients) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  absl::StatusOr<ops::WindowFnAttrs> attrs = ops::ParseWindowFnAttrs(ctx.attrs());
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<int64_t> size = ops::WindowLength(*ctx.input(0));
  if (!size.ok()) return size.status();
  if (absl::Status s = CheckOutput(ctx, 0, attrs->dtype, {*size}); !s.ok()) return s;
  const int64_t period = attrs->periodic ? *size : *size - 1;
  ir::Tensor& out = *ctx.output(0);
  return DispatchNumeric(attrs->dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t n = 0; n < *size; ++n) {
      double w = 1.0;  // the one-point symmetric window
      if (period > 0) {
        w = 0;
        double sign = 1;
        int j = 0;
        for (double a : coefficients) {
          w += sign * a * std::cos(2 * std::numbers::pi * j * static_cast<double>(n) / static_cast<double>(period));
          sign = -sign;
          ++j;
        }
      }
      out.data<T>()[n] = static_cast<T>(w);
    }
    return absl::OkStatus();
  });
}

absl::Status HannWindowKernel(KernelContext& ctx) { return CosineWindowKernel(ctx, {0.5, 0.5}); }
absl::Status HammingWindowKernel(KernelContext& ctx) { return CosineWindowKernel(ctx, {25.0 / 46, 21.0 / 46}); }
absl::Status BlackmanWindowKernel(KernelContext& ctx) { return CosineWindowKernel(ctx, {0.42, 0.5, 0.08}); }

}  // namespace

std::vector<KernelDef> TensorGenKernels() {
  return {
      {"ConstantOfShape", ConstantOfShapeKernel},
      {"Range", RangeKernel},
      {"EyeLike", EyeLikeKernel},
      {"Tile", TileKernel},
      {"Trilu", TriluKernel},
      {"Size", SizeKernel},
      {"OneHot", OneHotKernel},
      {"HannWindow", HannWindowKernel},
      {"HammingWindow", HammingWindowKernel},
      {"BlackmanWindow", BlackmanWindowKernel},
  };
}

}  // namespace kernels::cpu
