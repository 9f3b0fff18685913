// CPU kernels of RoiAlign (avg/max over bilinear samples of each output bin; half_pixel or
// output_half_pixel coordinates) and MaxRoiPool (max over the integer cells of each bin, Caffe's
// rounding). Coordinates come from data: NaN and huge values are clamped before any integer
// conversion, and the sample count is bounded.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/nn_util.h"
#include "kernels/cpu/vision.h"
#include "ops/vision_attrs.h"

namespace kernels::cpu::vision {
namespace {

// Bound on the bilinear samples one RoiAlign evaluates (rois x channels x bins x samples per bin).
constexpr double kMaxRoiAlignSamples = 1ull << 34;

// One axis of a bilinear sample: the two neighbouring cells and their weights (valid false when
// the sample lies outside [-1, extent], which contributes 0).
struct AxisSample {
  bool valid = false;
  int64_t lo = 0, hi = 0;
  double w_lo = 0, w_hi = 0;
};

AxisSample SampleAxis(double v, int64_t extent) {
  AxisSample s;
  if (std::isnan(v) || v < -1.0 || v > static_cast<double>(extent) || extent == 0) return s;
  v = std::max(v, 0.0);
  s.valid = true;
  s.lo = static_cast<int64_t>(v);
  if (s.lo >= extent - 1) {
    s.lo = s.hi = extent - 1;
    v = static_cast<double>(s.lo);
  } else {
    s.hi = s.lo + 1;
  }
  s.w_hi = v - static_cast<double>(s.lo);
  s.w_lo = 1.0 - s.w_hi;
  return s;
}

// The samples of bin `b` along one axis: start + b * bin + (i + 0.5) * bin / grid, i < grid.
std::vector<AxisSample> BinSamples(double start, double bin, int64_t b, int64_t grid, int64_t extent) {
  std::vector<AxisSample> out;
  for (int64_t i = 0; i < grid; ++i) {
    out.push_back(SampleAxis(start + b * bin + (i + 0.5) * bin / static_cast<double>(grid), extent));
  }
  return out;
}

// Samples per bin along an axis: sampling_ratio, else ceil(roi extent / bins) (0 for an empty or
// NaN extent); an error past the window bound.
absl::StatusOr<int64_t> GridSize(int64_t sampling_ratio, double roi_extent, int64_t bins) {
  if (sampling_ratio > 0) return sampling_ratio;
  const double g = std::ceil(roi_extent / static_cast<double>(bins));
  if (!(g > 0)) return 0;
  if (g > static_cast<double>(nn::kMaxWindowValue)) {
    return absl::InvalidArgumentError(absl::StrCat("a roi of extent ", roi_extent, " needs too many samples"));
  }
  return static_cast<int64_t>(g);
}

template <typename T>
absl::Status RoiAlignTyped(const ops::RoiAlignAttrs& a, const ir::Tensor& x, const ir::Tensor& rois,
                           const ir::Tensor& batch_indices, ir::Tensor& y) {
  const int64_t n = x.shape()[0], channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
  const int64_t num_rois = rois.shape()[0], oh = a.output_height, ow = a.output_width;
  const T* xd = x.data<T>();
  T* yd = y.data<T>();
  const double offset = a.half_pixel ? 0.5 : 0.0;
  for (int64_t r = 0; r < num_rois; ++r) {
    const int64_t batch = batch_indices.GetAsInt64(r);
    if (batch < 0 || batch >= n) {
      return absl::InvalidArgumentError(absl::StrCat("batch_indices[", r, "] = ", batch, " outside [0, ", n, ")"));
    }
    double roi[4];
    for (int k = 0; k < 4; ++k) roi[k] = static_cast<double>(rois.data<T>()[r * 4 + k]) * a.spatial_scale - offset;
    double roi_w = roi[2] - roi[0], roi_h = roi[3] - roi[1];
    if (!a.half_pixel) {
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    const double bin_h = roi_h / oh, bin_w = roi_w / ow;
    absl::StatusOr<int64_t> grid_h = GridSize(a.sampling_ratio, roi_h, oh);
    absl::StatusOr<int64_t> grid_w = GridSize(a.sampling_ratio, roi_w, ow);
    if (!grid_h.ok()) return grid_h.status();
    if (!grid_w.ok()) return grid_w.status();
    if (static_cast<double>(*grid_h) * *grid_w * oh * ow * channels * num_rois > kMaxRoiAlignSamples) {
      return absl::ResourceExhaustedError("RoiAlign needs too many samples");
    }
    const double count = std::max<double>(static_cast<double>(*grid_h * *grid_w), 1.0);
    for (int64_t ph = 0; ph < oh; ++ph) {
      const std::vector<AxisSample> ys = BinSamples(roi[1], bin_h, ph, *grid_h, height);
      for (int64_t pw = 0; pw < ow; ++pw) {
        const std::vector<AxisSample> xs = BinSamples(roi[0], bin_w, pw, *grid_w, width);
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = xd + (batch * channels + c) * height * width;
          double sum = 0, best = 0;
          bool any = false;
          for (const AxisSample& sy : ys) {
            for (const AxisSample& sx : xs) {
              double v1 = 0, v2 = 0, v3 = 0, v4 = 0;
              if (sy.valid && sx.valid) {
                v1 = sy.w_lo * sx.w_lo * static_cast<double>(plane[sy.lo * width + sx.lo]);
                v2 = sy.w_lo * sx.w_hi * static_cast<double>(plane[sy.lo * width + sx.hi]);
                v3 = sy.w_hi * sx.w_lo * static_cast<double>(plane[sy.hi * width + sx.lo]);
                v4 = sy.w_hi * sx.w_hi * static_cast<double>(plane[sy.hi * width + sx.hi]);
              }
              if (a.max) {  // the largest weighted neighbour (ONNX's reference definition)
                const double v = std::max(std::max(std::max(v1, v2), v3), v4);
                best = any ? std::max(best, v) : v;
                any = true;
              } else {
                sum += v1 + v2 + v3 + v4;
              }
            }
          }
          yd[((r * channels + c) * oh + ph) * ow + pw] = static_cast<T>(a.max ? best : sum / count);
        }
      }
    }
  }
  return absl::OkStatus();
}

// round(v) as an int64 clamped to +-2^40 (NaN: 0).
int64_t ClampedRound(double v) {
  if (std::isnan(v)) return 0;
  return static_cast<int64_t>(std::round(std::clamp(v, -1099511627776.0, 1099511627776.0)));
}

template <typename T>
absl::Status MaxRoiPoolTyped(const ops::MaxRoiPoolAttrs& a, const ir::Tensor& x, const ir::Tensor& rois,
                             ir::Tensor& y) {
  const int64_t n = x.shape()[0], channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
  const int64_t ph_n = a.pooled_height, pw_n = a.pooled_width;
  const T* xd = x.data<T>();
  T* yd = y.data<T>();
  for (int64_t r = 0; r < rois.shape()[0]; ++r) {
    const T* roi = rois.data<T>() + r * 5;
    const int64_t batch = ClampedRound(static_cast<double>(roi[0]));
    if (batch < 0 || batch >= n) {
      return absl::InvalidArgumentError(absl::StrCat("roi ", r, " has batch index ", batch, " outside [0, ", n, ")"));
    }
    int64_t c0[4];
    for (int k = 0; k < 4; ++k) c0[k] = ClampedRound(static_cast<double>(roi[k + 1]) * a.spatial_scale);
    const int64_t start_w = c0[0], start_h = c0[1];
    const double bin_h = static_cast<double>(std::max<int64_t>(c0[3] - start_h + 1, 1)) / ph_n;
    const double bin_w = static_cast<double>(std::max<int64_t>(c0[2] - start_w + 1, 1)) / pw_n;
    for (int64_t ph = 0; ph < ph_n; ++ph) {
      const int64_t h0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(ph * bin_h)) + start_h, 0, height);
      const int64_t h1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((ph + 1) * bin_h)) + start_h, 0, height);
      for (int64_t pw = 0; pw < pw_n; ++pw) {
        const int64_t w0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(pw * bin_w)) + start_w, 0, width);
        const int64_t w1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((pw + 1) * bin_w)) + start_w, 0, width);
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = xd + (batch * channels + c) * height * width;
          double best = h1 > h0 && w1 > w0 ? std::numeric_limits<double>::lowest() : 0.0;
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) best = std::max(best, static_cast<double>(plane[h * width + w]));
          }
          yd[((r * channels + c) * ph_n + ph) * pw_n + pw] = static_cast<T>(best);
        }
      }
    }
  }
  return absl::OkStatus();
}

// X [N, C, H, W], rois [R, roi_size] of X's dtype, Y [R, C, out_h, out_w].
absl::Status CheckRoiShapes(const KernelContext& ctx, int64_t roi_size, int64_t out_h, int64_t out_w) {
  const ir::Tensor *x = ctx.input(0), *rois = ctx.input(1);
  const ir::Tensor* y = ctx.output(0);
  if (x == nullptr || rois == nullptr || y == nullptr) return absl::InvalidArgumentError("X, rois and Y are required");
  if (x->rank() != 4) return absl::InvalidArgumentError("X must be 4-D");
  if (rois->dtype() != x->dtype() || y->dtype() != x->dtype()) return absl::InvalidArgumentError("dtypes differ");
  if (rois->rank() != 2 || rois->shape()[1] != roi_size) {
    return absl::InvalidArgumentError(absl::StrCat("rois must be [num_rois, ", roi_size, "]"));
  }
  return nn::ExpectShape(*y, {rois->shape()[0], x->shape()[1], out_h, out_w}, "Y");
}

}  // namespace

absl::Status RoiAlign(KernelContext& ctx) {
  absl::StatusOr<ops::RoiAlignAttrs> a = ops::ParseRoiAlignAttrs(ctx.node);
  if (!a.ok()) return a.status();
  if (absl::Status s = CheckRoiShapes(ctx, 4, a->output_height, a->output_width); !s.ok()) return s;
  const ir::Tensor* batch_indices = ctx.input(2);
  if (batch_indices == nullptr || batch_indices->rank() != 1 || batch_indices->shape()[0] != ctx.input(1)->shape()[0]) {
    return absl::InvalidArgumentError("batch_indices must be [num_rois]");
  }
  return DispatchFloat(ctx.input(0)->dtype(), [&](auto tag) {
    return RoiAlignTyped<decltype(tag)>(*a, *ctx.input(0), *ctx.input(1), *batch_indices, *ctx.output(0));
  });
}

absl::Status MaxRoiPool(KernelContext& ctx) {
  absl::StatusOr<ops::MaxRoiPoolAttrs> a = ops::ParseMaxRoiPoolAttrs(ctx.node);
  if (!a.ok()) return a.status();
  if (absl::Status s = CheckRoiShapes(ctx, 5, a->pooled_height, a->pooled_width); !s.ok()) return s;
  return DispatchFloat(ctx.input(0)->dtype(), [&](auto tag) {
    return MaxRoiPoolTyped<decltype(tag)>(*a, *ctx.input(0), *ctx.input(1), *ctx.output(0));
  });
}

}  // namespace kernels::cpu::vision
