// The CPU Resize kernel of the reduce_resize family: per-axis sampling plans (source indices and
// weights for every output coordinate), applied as a gather (nearest) or separably, one axis at a
// time in double precision (linear, cubic).
#include "kernels/cpu/reduce_resize_resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/shape.h"
#include "kernels/cpu/dispatch.h"
#include "ops/reduce_resize_resize.h"

namespace kernels::cpu {
namespace {

using ir::DType;

enum class Mode { kNearest, kLinear, kCubic };

struct ResizeParams {
  Mode mode = Mode::kNearest;
  std::string ctm;  // coordinate_transformation_mode
  std::string nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;  // linear and cubic: the filter widened by 1 / scale when downsampling
  double extrapolation = 0;
};

// One axis: lengths, scale and (tf_crop_and_resize) region of interest.
struct Axis {
  int64_t in_len = 0;
  int64_t out_len = 0;
  double scale = 1;
  double roi_start = 0;
  double roi_end = 1;
};

// For each output coordinate of an axis: `taps` (source index, weight) pairs, or `outside` (the
// extrapolation value).
struct AxisPlan {
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;
};

absl::StatusOr<ResizeParams> ReadParams(const ir::Attributes& attrs) {
  ResizeParams p;
  const std::string mode = attrs.GetString("mode", "nearest");
  if (mode == "nearest") {
    p.mode = Mode::kNearest;
  } else if (mode == "linear") {
    p.mode = Mode::kLinear;
  } else if (mode == "cubic") {
    p.mode = Mode::kCubic;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown mode \"", mode, "\""));
  }
  p.ctm = attrs.GetString("coordinate_transformation_mode", "half_pixel");
  p.nearest_mode = attrs.GetString("nearest_mode", "round_prefer_floor");
  p.cubic_a = attrs.GetFloat("cubic_coeff_a", -0.75f);
  p.exclude_outside = attrs.GetInt("exclude_outside", 0) != 0;
  p.extrapolation = attrs.GetFloat("extrapolation_value", 0.0f);
  p.antialias = p.mode != Mode::kNearest && attrs.GetInt("antialias", 0) != 0;
  return p;
}

// The source coordinate of output coordinate x along an axis.
absl::StatusOr<double> SourceCoord(const ResizeParams& p, const Axis& a, int64_t x) {
  const double xr = static_cast<double>(x);
  const double in = static_cast<double>(a.in_len), out = static_cast<double>(a.out_len);
  if (p.ctm == "half_pixel") return (xr + 0.5) / a.scale - 0.5;
  if (p.ctm == "pytorch_half_pixel") return a.out_len > 1 ? (xr + 0.5) / a.scale - 0.5 : 0.0;
  if (p.ctm == "align_corners") return a.out_len > 1 ? xr * (in - 1) / (out - 1) : 0.0;
  if (p.ctm == "asymmetric") return xr / a.scale;
  if (p.ctm == "tf_half_pixel_for_nn") return (xr + 0.5) / a.scale;
  if (p.ctm == "tf_crop_and_resize") {
    // The roi extent is taken in float32, as ONNX's reference does: samples that land exactly on
    // the input's border then agree with it about being inside.
    const double extent = static_cast<float>(a.roi_end) - static_cast<float>(a.roi_start);
    if (a.out_len == 1) return a.roi_start * (in - 1) + extent * (in - 1) / 2;
    return a.roi_start * (in - 1) + xr * extent * (in - 1) / (out - 1);
  }
  if (p.ctm == "half_pixel_symmetric") {
    const double adjustment = out / (a.scale * in);
    const double offset = in / 2 * (1 - adjustment);
    return offset + (xr + 0.5) / a.scale - 0.5;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown coordinate_transformation_mode \"", p.ctm, "\""));
}

// Nearest mode's source coordinate: in float32 arithmetic for the coordinate modes ONNX Runtime and
// PyTorch compute that way, so that floor / ceil agree with theirs where the coordinate lands within
// a float32 rounding of an integer (torch's scale_factor 1/3 exports scales 0.33333334: a float32
// x / scale gives 3x, a double one 3x - 1e-7, whose floor is one pixel early); the other modes as
// SourceCoord.
absl::StatusOr<double> NearestSourceCoord(const ResizeParams& p, const Axis& a, int64_t x) {
  const float xr = static_cast<float>(x), scale = static_cast<float>(a.scale);
  const float in = static_cast<float>(a.in_len), out = static_cast<float>(a.out_len);
  if (p.ctm == "half_pixel") return (xr + 0.5f) / scale - 0.5f;
  if (p.ctm == "pytorch_half_pixel") return a.out_len > 1 ? (xr + 0.5f) / scale - 0.5f : 0.0f;
  if (p.ctm == "align_corners") return a.out_len > 1 ? xr * (in - 1) / (out - 1) : 0.0f;
  if (p.ctm == "asymmetric") return xr / scale;
  if (p.ctm == "tf_half_pixel_for_nn") return (xr + 0.5f) / scale;
  return SourceCoord(p, a, x);
}

// The nearest source index (before clamping) of a source coordinate along an axis of `scale`.
// "simple" is Upsample's and Resize-10's rounding (the importer sets it; ONNX Runtime's): floor
// when enlarging, ceil when shrinking.
absl::StatusOr<int64_t> NearestIndex(const std::string& nearest_mode, double x, double scale) {
  const double lo = std::floor(x);
  if (x == lo) return static_cast<int64_t>(lo);
  const double frac = x - lo;
  bool up;
  if (nearest_mode == "round_prefer_floor") {
    up = frac > 0.5;
  } else if (nearest_mode == "round_prefer_ceil") {
    up = frac >= 0.5;
  } else if (nearest_mode == "floor") {
    up = false;
  } else if (nearest_mode == "ceil") {
    up = true;
  } else if (nearest_mode == "simple") {
    up = scale < 1;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown nearest_mode \"", nearest_mode, "\""));
  }
  return static_cast<int64_t>(lo) + (up ? 1 : 0);
}

// Keys cubic convolution kernel at distance s.
double CubicWeight(double s, double a) {
  s = std::fabs(s);
  if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
  if (s < 2) return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  return 0;
}

// Taps of one source coordinate: first index and weights of consecutive source indices.
int64_t Taps(const ResizeParams& p, double x, double* w) {
  const double lo = std::floor(x);
  const double t = x - lo;
  const int64_t base = static_cast<int64_t>(lo);
  if (p.mode == Mode::kLinear) {
    w[0] = 1 - t;
    w[1] = t;
    return base;
  }
  w[0] = CubicWeight(1 + t, p.cubic_a);
  w[1] = CubicWeight(t, p.cubic_a);
  w[2] = CubicWeight(1 - t, p.cubic_a);
  w[3] = CubicWeight(2 - t, p.cubic_a);
  return base - 1;
}

// Antialiased taps when downsampling (ONNX's antialias): the linear (triangle) or cubic filter
// stretched by 1 / scale, over the source indices nearest x, normalised to sum 1. Returns the
// first index; `w` gets AntialiasTaps(p, scale) weights.
int64_t AntialiasedTaps(const ResizeParams& p, double scale, double x, double* w) {
  const double s = std::min(scale, 1.0);
  const int64_t first = static_cast<int64_t>(std::ceil(x)) - 1;  // x - first is in (0, 1]
  const double ratio = x - static_cast<double>(first);
  const int64_t start = static_cast<int64_t>(std::floor((p.mode == Mode::kLinear ? -1 : -2) / s)) + 1;
  const int64_t taps = 2 - 2 * start;
  double sum = 0;
  for (int64_t k = 0; k < taps; ++k) {
    const double arg = s * (static_cast<double>(start + k) - ratio);
    w[k] = p.mode == Mode::kLinear ? std::clamp(1 - std::fabs(arg), 0.0, 1.0) : CubicWeight(arg, p.cubic_a);
    sum += w[k];
  }
  for (int64_t k = 0; k < taps; ++k) w[k] /= sum;
  return first + start;
}

// Taps per output coordinate along an axis of this scale.
int TapCount(const ResizeParams& p, double scale) {
  if (p.mode == Mode::kNearest) return 1;
  const int base = p.mode == Mode::kLinear ? 2 : 4;
  if (!p.antialias || scale >= 1) return base;
  const int64_t start = static_cast<int64_t>(std::floor(-(base / 2) / scale)) + 1;
  return static_cast<int>(2 - 2 * start);
}

absl::StatusOr<AxisPlan> PlanAxis(const ResizeParams& p, const Axis& a) {
  AxisPlan plan;
  plan.taps = TapCount(p, a.scale);
  plan.index.resize(a.out_len * plan.taps);
  plan.weight.resize(a.out_len * plan.taps);
  plan.outside.assign(a.out_len, 0);
  const int64_t last = a.in_len - 1;
  for (int64_t x = 0; x < a.out_len; ++x) {
    absl::StatusOr<double> src = p.mode == Mode::kNearest ? NearestSourceCoord(p, a, x) : SourceCoord(p, a, x);
    if (!src.ok()) return src.status();
    if (!std::isfinite(*src) || std::fabs(*src) > 1e15) {
      return absl::InvalidArgumentError("Resize source coordinate out of range");
    }
    if (p.ctm == "tf_crop_and_resize" && (*src < 0 || *src > static_cast<double>(last))) {
      plan.outside[x] = 1;
    }
    int64_t* idx = &plan.index[x * plan.taps];
    double* w = &plan.weight[x * plan.taps];
    if (p.mode == Mode::kNearest) {
      absl::StatusOr<int64_t> i = NearestIndex(p.nearest_mode, *src, a.scale);
      if (!i.ok()) return i.status();
      idx[0] = std::clamp<int64_t>(*i, 0, last);
      w[0] = 1;
      continue;
    }
    const int64_t first = p.antialias ? AntialiasedTaps(p, a.scale, *src, w) : Taps(p, *src, w);
    double sum = 0;
    for (int k = 0; k < plan.taps; ++k) {
      idx[k] = first + k;
      if (p.exclude_outside && (idx[k] < 0 || idx[k] > last)) w[k] = 0;
      sum += w[k];
      idx[k] = std::clamp<int64_t>(idx[k], 0, last);
    }
    if (p.exclude_outside && sum != 0) {
      for (int k = 0; k < plan.taps; ++k) w[k] /= sum;
    }
  }
  return plan;
}

// True when the plan maps every output coordinate to the same input coordinate.
bool IsIdentity(const Axis& a, const AxisPlan& plan) {
  if (a.in_len != a.out_len) return false;
  for (int64_t x = 0; x < a.out_len; ++x) {
    if (plan.outside[x]) return false;
    for (int k = 0; k < plan.taps; ++k) {
      const double w = plan.weight[x * plan.taps + k];
      if (w != 0 && !(w == 1 && plan.index[x * plan.taps + k] == x)) return false;
    }
  }
  return true;
}

// The scales (or sizes) input, one element per resized axis.
absl::StatusOr<const ir::Tensor*> ScalesOrSizes(const KernelContext& ctx, bool& is_scales) {
  const ir::Tensor* scales = ctx.input(2);
  if (scales != nullptr && scales->num_elements() == 0) scales = nullptr;
  const ir::Tensor* sizes = ctx.input(3);
  if (scales != nullptr && sizes != nullptr && sizes->num_elements() != 0) {
    return absl::InvalidArgumentError("only one of scales and sizes may be given");
  }
  if (scales == nullptr && sizes == nullptr) {
    return absl::InvalidArgumentError("one of scales and sizes is required");
  }
  is_scales = scales != nullptr;
  return is_scales ? scales : sizes;
}

// Length and scale of resized axis `a` from its scale.
absl::Status ScaleAxis(double scale, Axis& a) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    return absl::InvalidArgumentError(absl::StrCat("scales must be positive, got ", scale));
  }
  const double out_len = ops::ResizedLength(a.in_len, scale);
  if (out_len > static_cast<double>(int64_t{1} << 50)) {
    return absl::InvalidArgumentError(absl::StrCat("scale ", scale, " is too large"));
  }
  a.scale = scale;
  a.out_len = static_cast<int64_t>(out_len);
  return absl::OkStatus();
}

// Lengths and scales of the listed axes from the sizes input and keep_aspect_ratio_policy.
absl::Status SizeAxes(const ir::Attributes& attrs, const ir::Tensor& sizes, const std::vector<int64_t>& listed,
                      std::vector<Axis>& axes) {
  std::vector<int64_t> in_lengths, size_values;
  for (size_t i = 0; i < listed.size(); ++i) {
    in_lengths.push_back(axes[listed[i]].in_len);
    size_values.push_back(sizes.GetAsInt64(i));
    if (size_values.back() < 0) return absl::InvalidArgumentError(absl::StrCat("negative size ", size_values.back()));
  }
  absl::StatusOr<ops::AspectFit> fit = ops::FitSizes(attrs, in_lengths, size_values);
  if (!fit.ok()) return fit.status();
  for (size_t i = 0; i < listed.size(); ++i) {
    axes[listed[i]].out_len = fit->lengths[i];
    axes[listed[i]].scale = fit->scales[i];
  }
  return absl::OkStatus();
}

// tf_crop_and_resize: the region of interest of each listed axis (the whole axis elsewhere).
absl::Status ReadRoi(const KernelContext& ctx, const std::vector<int64_t>& listed, std::vector<Axis>& axes) {
  const int64_t count = static_cast<int64_t>(listed.size());
  const ir::Tensor* roi = ctx.input(1);
  if (roi == nullptr || roi->num_elements() != 2 * count) {
    return absl::InvalidArgumentError(absl::StrCat("tf_crop_and_resize needs a roi of 2 * ", count, " elements"));
  }
  for (int64_t i = 0; i < count; ++i) {
    axes[listed[i]].roi_start = roi->GetAsDouble(i);
    axes[listed[i]].roi_end = roi->GetAsDouble(count + i);
  }
  return absl::OkStatus();
}

// Scales and lengths of every axis (the listed ones from scales, or from sizes under the
// keep_aspect_ratio_policy; the others unchanged); checks that the pre-allocated output has the
// size these give.
absl::StatusOr<std::vector<Axis>> ReadAxes(const KernelContext& ctx, const ResizeParams& p) {
  const ir::Tensor& x = *ctx.input(0);
  const ir::Tensor& y = *ctx.output(0);
  const int64_t rank = x.rank();
  bool is_scales = false;
  absl::StatusOr<const ir::Tensor*> given = ScalesOrSizes(ctx, is_scales);
  if (!given.ok()) return given.status();
  absl::StatusOr<std::vector<int64_t>> listed = ops::ResizeAxes(ctx.attrs(), rank);
  if (!listed.ok()) return listed.status();
  if ((*given)->num_elements() != static_cast<int64_t>(listed->size()) || y.rank() != rank) {
    return absl::InvalidArgumentError(absl::StrCat(is_scales ? "scales" : "sizes", " has ", (*given)->num_elements(),
                                                   " elements, expected one per resized axis (", listed->size(), ")"));
  }
  std::vector<Axis> axes(rank);
  for (int64_t d = 0; d < rank; ++d) axes[d].in_len = axes[d].out_len = x.shape()[d];
  for (size_t i = 0; i < listed->size() && is_scales; ++i) {
    if (absl::Status st = ScaleAxis((*given)->GetAsDouble(i), axes[(*listed)[i]]); !st.ok()) return st;
  }
  if (!is_scales) {
    if (absl::Status st = SizeAxes(ctx.attrs(), **given, *listed, axes); !st.ok()) return st;
  }
  for (int64_t d = 0; d < rank; ++d) {
    const Axis& a = axes[d];
    if (a.out_len != y.shape()[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat("output shape ", ir::ShapeToString(y.shape()), " does not match the resize"));
    }
    if (a.in_len == 0 && a.out_len > 0) {
      return absl::InvalidArgumentError("cannot resize an empty dimension to a non-empty one");
    }
    if (a.out_len > 0 && !(a.scale > 0)) return absl::InvalidArgumentError("Resize scale must be positive");
  }
  if (p.ctm == "tf_crop_and_resize") {
    if (absl::Status st = ReadRoi(ctx, *listed, axes); !st.ok()) return st;
  }
  return axes;
}

template <typename T>
double ToDouble(T v) {
  if constexpr (ir::kIsHalfLike<T>) {
    return static_cast<float>(v);
  } else {
    return static_cast<double>(v);
  }
}

template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::nearbyint(v));
  } else {
    return static_cast<T>(v);
  }
}

// Nearest: out[o] = in[index_0[o_0], ..., index_{r-1}[o_{r-1}]], or the extrapolation value.
template <typename T>
void Gather(const ir::Tensor& x, const std::vector<Axis>& axes, const std::vector<AxisPlan>& plans,
            double extrapolation, ir::Tensor& y) {
  const int64_t rank = x.rank();
  std::vector<int64_t> in_strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * axes[d + 1].in_len;
  std::vector<int64_t> pos(rank, 0);
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  const T fill = FromDouble<T>(extrapolation);
  for (int64_t o = 0; o < y.num_elements(); ++o) {
    int64_t offset = 0;
    bool outside = false;
    for (int64_t d = 0; d < rank; ++d) {
      offset += plans[d].index[pos[d]] * in_strides[d];
      outside = outside || plans[d].outside[pos[d]];
    }
    dst[o] = outside ? fill : src[offset];
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++pos[d] < axes[d].out_len) break;
      pos[d] = 0;
    }
  }
}

// Resamples axis d of `in` (shape `shape`) with `plan`; updates shape[d].
std::vector<double> ResampleAxis(const std::vector<double>& in, std::vector<int64_t>& shape, int64_t d, const Axis& a,
                                 const AxisPlan& plan, double extrapolation) {
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= shape[k];
  for (size_t k = d + 1; k < shape.size(); ++k) inner *= shape[k];
  std::vector<double> out(outer * a.out_len * inner, 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    const double* src = &in[o * a.in_len * inner];
    for (int64_t j = 0; j < a.out_len; ++j) {
      double* dst = &out[(o * a.out_len + j) * inner];
      if (plan.outside[j]) {
        std::fill(dst, dst + inner, extrapolation);
        continue;
      }
      for (int k = 0; k < plan.taps; ++k) {
        const double w = plan.weight[j * plan.taps + k];
        if (w == 0) continue;
        const double* row = src + plan.index[j * plan.taps + k] * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] += w * row[i];
      }
    }
  }
  shape[d] = a.out_len;
  return out;
}

// Shrinking axes first, then growing ones: no intermediate is larger than both input and output.
std::vector<size_t> PassOrder(const std::vector<Axis>& axes) {
  std::vector<size_t> order(axes.size());
  for (size_t d = 0; d < axes.size(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    // in > 0: ReadAxes checks it for non-empty outputs.
    return static_cast<double>(axes[a].out_len) / static_cast<double>(axes[a].in_len) <
           static_cast<double>(axes[b].out_len) / static_cast<double>(axes[b].in_len);
  });
  return order;
}

// Linear and cubic: one separable pass per axis that is not the identity.
template <typename T>
void Interpolate(const ir::Tensor& x, const std::vector<Axis>& axes, const std::vector<AxisPlan>& plans,
                 double extrapolation, ir::Tensor& y) {
  std::vector<double> buf(x.num_elements());
  const T* src = x.data<T>();
  for (int64_t i = 0; i < x.num_elements(); ++i) buf[i] = ToDouble(src[i]);
  std::vector<int64_t> shape = x.shape();
  for (size_t d : PassOrder(axes)) {
    if (IsIdentity(axes[d], plans[d])) continue;
    buf = ResampleAxis(buf, shape, d, axes[d], plans[d], extrapolation);
  }
  T* dst = y.data<T>();
  for (int64_t i = 0; i < y.num_elements(); ++i) dst[i] = FromDouble<T>(buf[i]);
}

}  // namespace

absl::Status ResizeKernel(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  ir::Tensor* y = ctx.output(0);
  if (x == nullptr || y == nullptr) return absl::InvalidArgumentError("missing X or Y");
  if (x->dtype() != y->dtype()) return absl::InvalidArgumentError("Y dtype differs from X's");
  absl::StatusOr<ResizeParams> params = ReadParams(ctx.attrs());
  if (!params.ok()) return params.status();
  absl::StatusOr<std::vector<Axis>> axes = ReadAxes(ctx, *params);
  if (!axes.ok()) return axes.status();
  if (y->num_elements() == 0) return absl::OkStatus();
  std::vector<AxisPlan> plans;
  for (const Axis& a : *axes) {
    absl::StatusOr<AxisPlan> plan = PlanAxis(*params, a);
    if (!plan.ok()) return plan.status();
    plans.push_back(*std::move(plan));
  }
  const double extrapolation = params->extrapolation;
  if (params->mode == Mode::kNearest) {
    return DispatchNumeric(x->dtype(), [&](auto tag) -> absl::Status {
      Gather<decltype(tag)>(*x, *axes, plans, extrapolation, *y);
      return absl::OkStatus();
    });
  }
  return DispatchFloat(x->dtype(), [&](auto tag) -> absl::Status {
    Interpolate<decltype(tag)>(*x, *axes, plans, extrapolation, *y);
    return absl::OkStatus();
  });
}

}  // namespace kernels::cpu
