// CPU kernels of BatchNormalization (inference, and training_mode batch statistics),
// InstanceNormalization, LayerNormalization (with optional Mean / InvStdDev outputs),
// GroupNormalization and RMSNormalization (ops/group_rms_norm.h).
// Statistics are accumulated in double; parameters may have another float dtype than X.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/nn_util.h"
#include "ops/group_rms_norm.h"

namespace kernels::cpu::nn {
namespace {

// The elements of a parameter tensor of exactly `count` elements, as doubles.
absl::StatusOr<std::vector<double>> ReadParam(const ir::Tensor* t, int64_t count, const char* name) {
  if (t == nullptr) return absl::InvalidArgumentError(absl::StrCat(name, " is required"));
  if (!ir::IsFloatingPoint(t->dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(name, " must be floating point"));
  }
  if (t->num_elements() != count || t->rank() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has shape ", ir::ShapeToString(t->shape()), ", expected [", count, "]"));
  }
  std::vector<double> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = t->GetAsDouble(i);
  return v;
}

// Writes v into element i of a floating-point tensor.
void StoreDouble(ir::Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case ir::DType::kFloat32: t.data<float>()[i] = static_cast<float>(v); break;
    case ir::DType::kFloat64: t.data<double>()[i] = v; break;
    case ir::DType::kFloat16: t.data<ir::Half>()[i] = ir::Half(v); break;
    case ir::DType::kBFloat16: t.data<ir::BFloat16>()[i] = ir::BFloat16(v); break;
    default: break;
  }
}

absl::Status CheckSameShape(const ir::Tensor* x, const ir::Tensor* y) {
  if (x == nullptr || y == nullptr) return absl::InvalidArgumentError("X and Y are required");
  if (y->dtype() != x->dtype()) return absl::InvalidArgumentError("Y dtype differs from X");
  return ExpectShape(*y, x->shape(), "Y");
}

// Mean and biased variance of each channel of x [N, C, rest], over N and rest.
template <typename T>
void ChannelStats(const T* x, int64_t n, int64_t c, int64_t rest, std::vector<double>& mean, std::vector<double>& var) {
  mean.assign(c, 0.0);
  var.assign(c, 0.0);
  const double count = static_cast<double>(n * rest);
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t b = 0; b < n; ++b) {
      const T* p = x + (b * c + ch) * rest;
      for (int64_t i = 0; i < rest; ++i) sum += static_cast<double>(p[i]);
    }
    const double m = count > 0 ? sum / count : 0.0;
    for (int64_t b = 0; b < n; ++b) {
      const T* p = x + (b * c + ch) * rest;
      for (int64_t i = 0; i < rest; ++i) {
        const double d = static_cast<double>(p[i]) - m;
        sq += d * d;
      }
    }
    mean[ch] = m;
    var[ch] = count > 0 ? sq / count : 0.0;
  }
}

// y = x * a[ch] + b[ch] over x [N, C, rest].
template <typename T>
void ChannelAffine(const T* x, int64_t n, int64_t c, int64_t rest, const std::vector<double>& a,
                   const std::vector<double>& b, T* y) {
  for (int64_t bt = 0; bt < n; ++bt) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t off = (bt * c + ch) * rest;
      const Acc<T> scale = static_cast<Acc<T>>(a[ch]), shift = static_cast<Acc<T>>(b[ch]);
      for (int64_t i = 0; i < rest; ++i) {
        y[off + i] = static_cast<T>(static_cast<Acc<T>>(x[off + i]) * scale + shift);
      }
    }
  }
}

// scale * (x - mean) / sqrt(var + eps) + bias as a * x + b, per channel.
void NormalizeAffine(const std::vector<double>& scale, const std::vector<double>& bias, const std::vector<double>& mean,
                     const std::vector<double>& var, double eps, std::vector<double>& a, std::vector<double>& b) {
  a.resize(scale.size());
  b.resize(scale.size());
  for (size_t i = 0; i < scale.size(); ++i) {
    a[i] = scale[i] / std::sqrt(var[i] + eps);
    b[i] = bias[i] - mean[i] * a[i];
  }
}

absl::Status BatchNormImpl(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  ir::Tensor* y = ctx.output(0);
  if (absl::Status s = CheckSameShape(x, y); !s.ok()) return s;
  if (x->rank() < 2) return absl::InvalidArgumentError("X must have rank >= 2");
  const int64_t n = x->shape()[0], c = x->shape()[1];
  const int64_t rest = n * c == 0 ? 0 : x->num_elements() / (n * c);
  const double eps = ctx.attrs().GetFloat("epsilon", 1e-5f);
  absl::StatusOr<std::vector<double>> scale = ReadParam(ctx.input(1), c, "scale");
  absl::StatusOr<std::vector<double>> bias = ReadParam(ctx.input(2), c, "B");
  absl::StatusOr<std::vector<double>> mean = ReadParam(ctx.input(3), c, "mean");
  absl::StatusOr<std::vector<double>> var = ReadParam(ctx.input(4), c, "var");
  for (const auto* p : {&scale, &bias, &mean, &var}) {
    if (!p->ok()) return p->status();
  }
  const bool training = ctx.attrs().GetInt("training_mode", 0) != 0;
  return DispatchFloat(x->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    std::vector<double> use_mean = *mean, use_var = *var;
    if (training) {
      ChannelStats(x->data<T>(), n, c, rest, use_mean, use_var);
      const double momentum = ctx.attrs().GetFloat("momentum", 0.9f);
      for (size_t o = 1; o <= 2; ++o) {
        ir::Tensor* running = ctx.output(o);
        if (running == nullptr) continue;
        if (running->num_elements() != c || !ir::IsFloatingPoint(running->dtype())) {
          return absl::InvalidArgumentError("running statistics output must have C elements");
        }
        const std::vector<double>& prev = o == 1 ? *mean : *var;
        const std::vector<double>& cur = o == 1 ? use_mean : use_var;
        for (int64_t i = 0; i < c; ++i) {
          StoreDouble(*running, i, prev[i] * momentum + cur[i] * (1 - momentum));
        }
      }
    }
    std::vector<double> a, b;
    NormalizeAffine(*scale, *bias, use_mean, use_var, eps, a, b);
    ChannelAffine(x->data<T>(), n, c, rest, a, b, y->data<T>());
    return absl::OkStatus();
  });
}

absl::Status InstanceNormImpl(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  ir::Tensor* y = ctx.output(0);
  if (absl::Status s = CheckSameShape(x, y); !s.ok()) return s;
  if (x->rank() < 2) return absl::InvalidArgumentError("X must have rank >= 2");
  const int64_t n = x->shape()[0], c = x->shape()[1];
  const int64_t rest = n * c == 0 ? 0 : x->num_elements() / (n * c);
  const double eps = ctx.attrs().GetFloat("epsilon", 1e-5f);
  absl::StatusOr<std::vector<double>> scale = ReadParam(ctx.input(1), c, "scale");
  if (!scale.ok()) return scale.status();
  absl::StatusOr<std::vector<double>> bias = ReadParam(ctx.input(2), c, "B");
  if (!bias.ok()) return bias.status();
  return DispatchFloat(x->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    for (int64_t bt = 0; bt < n; ++bt) {
      const T* xb = x->data<T>() + bt * c * rest;
      std::vector<double> mean, var;
      ChannelStats(xb, 1, c, rest, mean, var);
      std::vector<double> a, b;
      NormalizeAffine(*scale, *bias, mean, var, eps, a, b);
      ChannelAffine(xb, 1, c, rest, a, b, y->data<T>() + bt * c * rest);
    }
    return absl::OkStatus();
  });
}

// Scale or B of LayerNormalization broadcast (unidirectionally) to the normalized dims, as doubles;
// all ones / zeros when absent.
absl::StatusOr<std::vector<double>> BroadcastParam(const ir::Tensor* t, absl::Span<const int64_t> dims, double fill,
                                                   const char* name) {
  const int64_t size = Product(dims);
  if (t == nullptr) return std::vector<double>(size, fill);
  if (!ir::IsFloatingPoint(t->dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(name, " must be floating point"));
  }
  if (t->rank() > static_cast<int64_t>(dims.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has rank ", t->rank(), " above the normalized rank ", dims.size()));
  }
  const size_t skip = dims.size() - t->shape().size();
  std::vector<int64_t> src_stride(dims.size(), 0);
  int64_t stride = 1;
  for (size_t j = dims.size(); j-- > skip;) {
    const int64_t d = t->shape()[j - skip];
    if (d != 1 && d != dims[j]) {
      return absl::InvalidArgumentError(absl::StrCat(name, " shape ", ir::ShapeToString(t->shape()),
                                                     " does not broadcast to the normalized dims ",
                                                     ir::ShapeToString(dims)));
    }
    src_stride[j] = d == 1 ? 0 : stride;
    stride *= d;
  }
  std::vector<double> v(size);
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t i = 0; i < size; ++i) {
    int64_t src = 0;
    for (size_t j = 0; j < dims.size(); ++j) src += idx[j] * src_stride[j];
    v[i] = t->GetAsDouble(src);
    for (size_t j = dims.size(); j-- > 0;) {
      if (++idx[j] < dims[j]) break;
      idx[j] = 0;
    }
  }
  return v;
}

absl::Status LayerNormImpl(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  ir::Tensor* y = ctx.output(0);
  if (absl::Status s = CheckSameShape(x, y); !s.ok()) return s;
  const int64_t rank = x->rank();
  int64_t axis = ctx.attrs().GetInt("axis", -1);
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " out of range for rank ", rank));
  }
  if (axis < 0) axis += rank;
  absl::Span<const int64_t> norm_dims = absl::MakeConstSpan(x->shape()).subspan(axis);
  const int64_t inner = Product(norm_dims);
  const int64_t outer = Product(absl::MakeConstSpan(x->shape()).subspan(0, axis));
  const double eps = ctx.attrs().GetFloat("epsilon", 1e-5f);
  absl::StatusOr<std::vector<double>> scale = BroadcastParam(ctx.input(1), norm_dims, 1.0, "Scale");
  if (!scale.ok()) return scale.status();
  absl::StatusOr<std::vector<double>> bias = BroadcastParam(ctx.input(2), norm_dims, 0.0, "B");
  if (!bias.ok()) return bias.status();
  for (size_t o = 1; o <= 2; ++o) {
    const ir::Tensor* t = ctx.output(o);
    if (t != nullptr && (t->num_elements() != outer || !ir::IsFloatingPoint(t->dtype()))) {
      return absl::InvalidArgumentError(
          absl::StrCat("Mean/InvStdDev output must be floating point with ", outer, " elements"));
    }
  }
  return DispatchFloat(x->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* xd = x->data<T>();
    T* yd = y->data<T>();
    for (int64_t r = 0; r < outer; ++r) {
      const T* xr = xd + r * inner;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < inner; ++i) sum += static_cast<double>(xr[i]);
      const double mean = inner > 0 ? sum / inner : 0.0;
      for (int64_t i = 0; i < inner; ++i) {
        const double d = static_cast<double>(xr[i]) - mean;
        sq += d * d;
      }
      const double inv_std = 1.0 / std::sqrt((inner > 0 ? sq / inner : 0.0) + eps);
      for (int64_t i = 0; i < inner; ++i) {
        const double v = (static_cast<double>(xr[i]) - mean) * inv_std;
        yd[r * inner + i] = static_cast<T>(v * (*scale)[i] + (*bias)[i]);
      }
      if (ctx.output(1) != nullptr) StoreDouble(*ctx.output(1), r, mean);
      if (ctx.output(2) != nullptr) StoreDouble(*ctx.output(2), r, inv_std);
    }
    return absl::OkStatus();
  });
}

// GroupNormalization: per sample and group, statistics over the group's channels and spatial
// positions; scale and bias per channel (opset 21+) or per group (opset 18-20).
absl::Status GroupNormImpl(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  ir::Tensor* y = ctx.output(0);
  if (absl::Status s = CheckSameShape(x, y); !s.ok()) return s;
  if (x->rank() < 2) return absl::InvalidArgumentError("GroupNormalization: X must be [N, C, ...]");
  const int64_t n = x->shape()[0], channels = x->shape()[1];
  const int64_t spatial = Product(absl::MakeConstSpan(x->shape()).subspan(2));
  absl::StatusOr<ops::GroupNormAttrs> attrs = ops::ParseGroupNormAttrs(ctx.node, channels);
  if (!attrs.ok()) return attrs.status();
  const int64_t groups = attrs->num_groups, per_group = channels / groups;
  const int64_t params = attrs->per_channel_affine ? channels : groups;
  absl::StatusOr<std::vector<double>> scale = ReadParam(ctx.input(1), params, "scale");
  if (!scale.ok()) return scale.status();
  absl::StatusOr<std::vector<double>> bias = ReadParam(ctx.input(2), params, "bias");
  if (!bias.ok()) return bias.status();
  const int64_t group_size = per_group * spatial;
  return DispatchFloat(x->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* xd = x->data<T>();
    T* yd = y->data<T>();
    for (int64_t g = 0; g < n * groups; ++g) {
      const T* xg = xd + g * group_size;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < group_size; ++i) sum += static_cast<double>(xg[i]);
      const double mean = group_size > 0 ? sum / group_size : 0.0;
      for (int64_t i = 0; i < group_size; ++i)
        sq += (static_cast<double>(xg[i]) - mean) * (static_cast<double>(xg[i]) - mean);
      const double inv_std = 1.0 / std::sqrt((group_size > 0 ? sq / group_size : 0.0) + attrs->epsilon);
      for (int64_t i = 0; i < group_size; ++i) {
        const int64_t channel = (g % groups) * per_group + i / spatial;
        const int64_t p = attrs->per_channel_affine ? channel : g % groups;
        yd[g * group_size + i] =
            static_cast<T>((static_cast<double>(xg[i]) - mean) * inv_std * (*scale)[p] + (*bias)[p]);
      }
    }
    return absl::OkStatus();
  });
}

// RMSNormalization: x / sqrt(mean(x^2) + epsilon) * scale over the dims from `axis` on; Y has
// scale's dtype.
absl::Status RmsNormImpl(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  ir::Tensor* y = ctx.output(0);
  if (x == nullptr || y == nullptr || x->shape() != y->shape()) {
    return absl::InvalidArgumentError("RMSNormalization: Y must have X's shape");
  }
  absl::StatusOr<ops::RmsNormAttrs> attrs = ops::ParseRmsNormAttrs(ctx.node, x->rank());
  if (!attrs.ok()) return attrs.status();
  absl::Span<const int64_t> norm_dims = absl::MakeConstSpan(x->shape()).subspan(attrs->axis);
  const int64_t inner = Product(norm_dims);
  const int64_t outer = Product(absl::MakeConstSpan(x->shape()).subspan(0, attrs->axis));
  absl::StatusOr<std::vector<double>> scale = BroadcastParam(ctx.input(1), norm_dims, 1.0, "scale");
  if (!scale.ok()) return scale.status();
  std::vector<double> row(inner);
  return DispatchFloat(y->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    T* yd = y->data<T>();
    for (int64_t r = 0; r < outer; ++r) {
      double sq = 0;
      for (int64_t i = 0; i < inner; ++i) {
        row[i] = x->GetAsDouble(r * inner + i);
        sq += row[i] * row[i];
      }
      const double inv_rms = 1.0 / std::sqrt((inner > 0 ? sq / inner : 0.0) + attrs->epsilon);
      for (int64_t i = 0; i < inner; ++i) yd[r * inner + i] = static_cast<T>(row[i] * inv_rms * (*scale)[i]);
    }
    return absl::OkStatus();
  });
}

}  // namespace

absl::Status BatchNormalization(KernelContext& ctx) { return BatchNormImpl(ctx); }
absl::Status InstanceNormalization(KernelContext& ctx) { return InstanceNormImpl(ctx); }
absl::Status LayerNormalization(KernelContext& ctx) { return LayerNormImpl(ctx); }
absl::Status GroupNormalization(KernelContext& ctx) { return GroupNormImpl(ctx); }
absl::Status RMSNormalization(KernelContext& ctx) { return RmsNormImpl(ctx); }

}  // namespace kernels::cpu::nn
