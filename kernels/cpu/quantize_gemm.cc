// CPU kernels of the quantized matmul and conv ops: MatMulInteger, ConvInteger, QLinearMatMul and
// QLinearConv. The integer data minus its zero points becomes float64 (every product and every sum
// of int8/uint8 products is exact there) and runs through the MatMul and Conv reference kernels;
// the accumulators then become int32 (wrapping like int32 arithmetic) or are requantized:
// saturate(round(acc * a_scale * b_scale / y_scale) + y_zero_point), the scale product in float
// (float16 and bfloat16 scales widen to it exactly).
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/nn_util.h"
#include "kernels/cpu/quantize_util.h"

namespace kernels::cpu {
namespace {

using quant::Param;
using quant::ReadParam;

bool IsInt8(const ir::Tensor* t) {
  return t != nullptr && (t->dtype() == ir::DType::kUint8 || t->dtype() == ir::DType::kInt8);
}

// q - zero_point as float64.
absl::StatusOr<ir::Tensor> Centered(const ir::Tensor& q, const Param& zero) {
  absl::StatusOr<ir::Tensor> out = ir::Tensor::Create(ir::DType::kFloat64, q.shape());
  if (!out.ok()) return out.status();
  double* dst = out->data<double>();
  if (q.dtype() == ir::DType::kUint8) {
    for (int64_t i = 0; i < q.num_elements(); ++i) dst[i] = q.data<uint8_t>()[i] - zero.at(i);
  } else {
    for (int64_t i = 0; i < q.num_elements(); ++i) dst[i] = q.data<int8_t>()[i] - zero.at(i);
  }
  return out;
}

// Runs `fn` (MatMul or Conv) on float64 inputs; the result has shape `shape`.
absl::StatusOr<ir::Tensor> RunFloat64(const KernelContext& ctx, KernelFn fn, const ir::Tensor& a, const ir::Tensor& b,
                                      const std::vector<int64_t>& shape) {
  absl::StatusOr<ir::Tensor> acc = ir::Tensor::Create(ir::DType::kFloat64, shape);
  if (!acc.ok()) return acc.status();
  KernelContext sub{ctx.node, {&a, &b}, {&*acc}};
  if (absl::Status s = fn(sub); !s.ok()) return s;
  return acc;
}

// The accumulators of (a - a_zero) op (b - b_zero) in the shape of output 0.
absl::StatusOr<ir::Tensor> Accumulate(const KernelContext& ctx, KernelFn fn, const ir::Tensor& a, const Param& a_zero,
                                      const ir::Tensor& b, const Param& b_zero) {
  if (!IsInt8(&a) || !IsInt8(&b)) return absl::InvalidArgumentError("the data inputs must be uint8 or int8");
  absl::StatusOr<ir::Tensor> ac = Centered(a, a_zero);
  if (!ac.ok()) return ac.status();
  absl::StatusOr<ir::Tensor> bc = Centered(b, b_zero);
  if (!bc.ok()) return bc.status();
  return RunFloat64(ctx, fn, *ac, *bc, ctx.output(0)->shape());
}

absl::Status StoreInt32(const ir::Tensor& acc, ir::Tensor& y) {
  if (y.dtype() != ir::DType::kInt32) return absl::InvalidArgumentError("the output must be int32");
  for (int64_t i = 0; i < acc.num_elements(); ++i) {
    const int64_t v = static_cast<int64_t>(acc.data<double>()[i]);  // exact: |v| < 2^53
    y.data<int32_t>()[i] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  }
  return absl::OkStatus();
}

absl::Status RequireInputs(const KernelContext& ctx, std::initializer_list<size_t> required) {
  for (size_t i : required) {
    if (ctx.input(i) == nullptr) return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing"));
  }
  if (ctx.output(0) == nullptr) return absl::InvalidArgumentError("the output is missing");
  return absl::OkStatus();
}

// Zero points: A per row (axis -2), B per column (axis -1).
absl::Status MatMulInteger(KernelContext& ctx) {
  if (absl::Status s = RequireInputs(ctx, {0, 1}); !s.ok()) return s;
  const ir::Tensor &a = *ctx.input(0), &b = *ctx.input(1);
  absl::StatusOr<Param> a_zero = ReadParam(ctx.input(2), a.shape(), -2, 0, "a_zero_point");
  if (!a_zero.ok()) return a_zero.status();
  absl::StatusOr<Param> b_zero = ReadParam(ctx.input(3), b.shape(), -1, 0, "b_zero_point");
  if (!b_zero.ok()) return b_zero.status();
  absl::StatusOr<ir::Tensor> acc = Accumulate(ctx, nn::MatMul, a, *a_zero, b, *b_zero);
  if (!acc.ok()) return acc.status();
  return StoreInt32(*acc, *ctx.output(0));
}

// Zero points: X per tensor, W per output channel (axis 0).
absl::Status ConvInteger(KernelContext& ctx) {
  if (absl::Status s = RequireInputs(ctx, {0, 1}); !s.ok()) return s;
  const ir::Tensor &x = *ctx.input(0), &w = *ctx.input(1);
  absl::StatusOr<Param> x_zero = ReadParam(ctx.input(2), {}, 0, 0, "x_zero_point");
  if (!x_zero.ok()) return x_zero.status();
  absl::StatusOr<Param> w_zero = ReadParam(ctx.input(3), w.shape(), 0, 0, "w_zero_point");
  if (!w_zero.ok()) return w_zero.status();
  absl::StatusOr<ir::Tensor> acc = Accumulate(ctx, nn::Conv, x, *x_zero, w, *w_zero);
  if (!acc.ok()) return acc.status();
  return StoreInt32(*acc, *ctx.output(0));
}

// y[i] = saturate(round((acc[i] + bias(i)) * in_scale(i) * w_scale(i) / y_scale(i)) + y_zero(i)).
template <typename Q>
void Requantize(const ir::Tensor& acc, const std::vector<double>& bias, const Param& in_scale, const Param& w_scale,
                const Param& y_scale, const Param& y_zero, ir::Tensor& y) {
  for (int64_t i = 0; i < acc.num_elements(); ++i) {
    const float multiplier =
        static_cast<float>(in_scale.at(i)) * static_cast<float>(w_scale.at(i)) / static_cast<float>(y_scale.at(i));
    const double sum = acc.data<double>()[i] + (bias.empty() ? 0.0 : bias[i]);
    y.data<Q>()[i] = quant::Saturate<Q>(static_cast<float>(sum) * multiplier, y_zero.at(i));
  }
}

// QLinearMatMul: a's scale and zero point per row, b's per column, y's per tensor or per row.
absl::Status QLinearMatMul(KernelContext& ctx) {
  if (absl::Status s = RequireInputs(ctx, {0, 1, 3, 4, 6}); !s.ok()) return s;
  const ir::Tensor &a = *ctx.input(0), &b = *ctx.input(3);
  ir::Tensor& y = *ctx.output(0);
  absl::StatusOr<Param> a_zero = ReadParam(ctx.input(2), a.shape(), -2, 0, "a_zero_point");
  absl::StatusOr<Param> b_zero = ReadParam(ctx.input(5), b.shape(), -1, 0, "b_zero_point");
  if (!a_zero.ok()) return a_zero.status();
  if (!b_zero.ok()) return b_zero.status();
  absl::StatusOr<ir::Tensor> acc = Accumulate(ctx, nn::MatMul, a, *a_zero, b, *b_zero);
  if (!acc.ok()) return acc.status();
  // Row parameters index the output's dim -2, column parameters its dim -1.
  const std::vector<int64_t>& ys = y.shape();
  const bool has_rows = a.rank() >= 2 && ys.size() >= 2;
  const int64_t rows_axis = has_rows ? static_cast<int64_t>(ys.size()) - 2 : 0;
  auto row_param = [&](size_t i, double absent, const char* name) -> absl::StatusOr<Param> {
    if (!has_rows && ctx.input(i) != nullptr && ctx.input(i)->num_elements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be per-tensor for a 1-D a"));
    }
    return ReadParam(ctx.input(i), ys, rows_axis, absent, name);
  };
  absl::StatusOr<Param> a_scale = row_param(1, 1, "a_scale");
  absl::StatusOr<Param> y_scale = row_param(6, 1, "y_scale");
  absl::StatusOr<Param> y_zero = row_param(7, 0, "y_zero_point");
  absl::StatusOr<Param> b_scale =
      ReadParam(ctx.input(4), b.rank() >= 2 ? ys : std::vector<int64_t>{}, -1, 1, "b_scale");
  for (const auto* p : {&a_scale, &y_scale, &y_zero, &b_scale}) {
    if (!p->ok()) return p->status();
  }
  switch (y.dtype()) {
    case ir::DType::kUint8: Requantize<uint8_t>(*acc, {}, *a_scale, *b_scale, *y_scale, *y_zero, y); break;
    case ir::DType::kInt8: Requantize<int8_t>(*acc, {}, *a_scale, *b_scale, *y_scale, *y_zero, y); break;
    default: return absl::InvalidArgumentError("y must be uint8 or int8");
  }
  return absl::OkStatus();
}

// QLinearConv: x and y per tensor, w's scale and zero point per output channel, bias int32 [M].
absl::Status QLinearConv(KernelContext& ctx) {
  if (absl::Status s = RequireInputs(ctx, {0, 1, 3, 4, 6}); !s.ok()) return s;
  const ir::Tensor &x = *ctx.input(0), &w = *ctx.input(3);
  ir::Tensor& y = *ctx.output(0);
  absl::StatusOr<Param> x_zero = ReadParam(ctx.input(2), {}, 0, 0, "x_zero_point");
  absl::StatusOr<Param> w_zero = ReadParam(ctx.input(5), w.shape(), 0, 0, "w_zero_point");
  if (!x_zero.ok()) return x_zero.status();
  if (!w_zero.ok()) return w_zero.status();
  absl::StatusOr<ir::Tensor> acc = Accumulate(ctx, nn::Conv, x, *x_zero, w, *w_zero);
  if (!acc.ok()) return acc.status();
  if (y.rank() < 2) return absl::InvalidArgumentError("y must have rank >= 2");
  absl::StatusOr<Param> x_scale = ReadParam(ctx.input(1), {}, 0, 1, "x_scale");
  absl::StatusOr<Param> w_scale = ReadParam(ctx.input(4), y.shape(), 1, 1, "w_scale");
  absl::StatusOr<Param> y_scale = ReadParam(ctx.input(6), {}, 0, 1, "y_scale");
  absl::StatusOr<Param> y_zero = ReadParam(ctx.input(7), {}, 0, 0, "y_zero_point");
  for (const auto* p : {&x_scale, &w_scale, &y_scale, &y_zero}) {
    if (!p->ok()) return p->status();
  }
  std::vector<double> bias;
  if (const ir::Tensor* b = ctx.input(8); b != nullptr) {
    if (b->dtype() != ir::DType::kInt32 || b->rank() != 1 || b->shape()[0] != y.shape()[1]) {
      return absl::InvalidArgumentError(absl::StrCat("B must be int32 [", y.shape()[1], "]"));
    }
    absl::StatusOr<Param> per_channel = ReadParam(b, y.shape(), 1, 0, "B");
    if (!per_channel.ok()) return per_channel.status();
    bias.resize(y.num_elements());
    for (int64_t i = 0; i < y.num_elements(); ++i) bias[i] = per_channel->at(i);
  }
  switch (y.dtype()) {
    case ir::DType::kUint8: Requantize<uint8_t>(*acc, bias, *x_scale, *w_scale, *y_scale, *y_zero, y); break;
    case ir::DType::kInt8: Requantize<int8_t>(*acc, bias, *x_scale, *w_scale, *y_scale, *y_zero, y); break;
    default: return absl::InvalidArgumentError("y must be uint8 or int8");
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> QuantizeGemmKernels() {
  return {
      {"MatMulInteger", MatMulInteger},
      {"ConvInteger", ConvInteger},
      {"QLinearMatMul", QLinearMatMul},
      {"QLinearConv", QLinearConv},
  };
}

}  // namespace kernels::cpu
