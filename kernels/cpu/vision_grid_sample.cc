// CPU kernel of GridSample for 4-D X [N, C, H, W] and grid [N, H_out, W_out, 2] of (x, y) in
// [-1, 1]: linear, nearest (ties to even) or cubic (Keys, a = -0.75) interpolation; zeros, border
// or reflection padding; align_corners maps -1 and 1 to the corner pixel centres, else to the
// image's outer edges. A NaN coordinate gives NaN.
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

using ops::GridSampleAttrs;
using ops::GridSampleMode;
using ops::GridSamplePadding;

// One spatial axis of the image: its extent and the coordinate range reflection folds into.
struct Axis {
  int64_t extent;
  double lo, hi;  // align_corners: [0, extent - 1], else [-0.5, extent - 0.5]
};

Axis MakeAxis(int64_t extent, bool align_corners) {
  return align_corners ? Axis{extent, 0.0, static_cast<double>(extent - 1)}
                       : Axis{extent, -0.5, static_cast<double>(extent) - 0.5};
}

double Denormalize(double g, int64_t extent, bool align_corners) {
  return align_corners ? (g + 1) / 2 * static_cast<double>(extent - 1) : ((g + 1) * extent - 1) / 2;
}

// v folded into [lo, hi] by repeated reflection at its ends (v finite).
double Reflect(double v, double lo, double hi) {
  const double range = hi - lo;
  if (!(range > 0)) return lo;
  const double period = 2 * range;
  double d = std::fmod(v - lo, period);
  if (d < 0) d += period;
  return d <= range ? lo + d : hi - (d - range);
}

// The coordinate after padding. Outside [lo, hi], border clamps to the pixel centres and
// reflection folds it back; zeros keeps it (clamped just past the image, which changes no
// zero-padded result and keeps the integers derived from it small).
double PadCoordinate(double v, const Axis& axis, GridSamplePadding padding) {
  if (axis.extent == 0) return 0;
  if (padding == GridSamplePadding::kZeros) return std::clamp(v, -4.0, static_cast<double>(axis.extent) + 4.0);
  if (v >= axis.lo && v <= axis.hi) return v;
  if (padding == GridSamplePadding::kBorder) return std::clamp(v, 0.0, static_cast<double>(axis.extent - 1));
  return std::isfinite(v) ? Reflect(v, axis.lo, axis.hi) : axis.lo;
}

// The index of pixel i along an axis after padding, or -1 (zeros padding outside the image).
int64_t PadIndex(int64_t i, const Axis& axis, GridSamplePadding padding) {
  if (i >= 0 && i < axis.extent) return i;
  switch (padding) {
    case GridSamplePadding::kZeros: return -1;
    case GridSamplePadding::kBorder: return std::clamp<int64_t>(i, 0, axis.extent - 1);
    case GridSamplePadding::kReflection:
      return std::clamp<int64_t>(static_cast<int64_t>(Reflect(static_cast<double>(i), axis.lo, axis.hi)), 0,
                                 axis.extent - 1);
  }
  return -1;
}

// Keys cubic convolution weights of the 4 pixels around a point at fraction t past the second.
void CubicWeights(double t, double w[4]) {
  constexpr double a = -0.75;
  auto near = [&](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };       // |d| <= 1
  auto far = [&](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

template <typename T>
class Sampler {
 public:
  Sampler(const GridSampleAttrs& a, const T* plane, const Axis& ax, const Axis& ay)
      : a_(a), plane_(plane), ax_(ax), ay_(ay) {}

  double Pixel(int64_t row, int64_t col) const {
    const int64_t r = PadIndex(row, ay_, a_.padding), c = PadIndex(col, ax_, a_.padding);
    return r < 0 || c < 0 ? 0.0 : static_cast<double>(plane_[r * ax_.extent + c]);
  }

  // The value at denormalized, padded (x, y).
  double At(double x, double y) const {
    switch (a_.mode) {
      case GridSampleMode::kNearest:
        return Pixel(static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x)));
      case GridSampleMode::kLinear: {
        const double fx = std::floor(x), fy = std::floor(y);
        const int64_t c = static_cast<int64_t>(fx), r = static_cast<int64_t>(fy);
        const double tx = x - fx, ty = y - fy;
        return (1 - ty) * ((1 - tx) * Pixel(r, c) + tx * Pixel(r, c + 1)) +
               ty * ((1 - tx) * Pixel(r + 1, c) + tx * Pixel(r + 1, c + 1));
      }
      case GridSampleMode::kCubic: {
        const double fx = std::floor(x), fy = std::floor(y);
        const int64_t c = static_cast<int64_t>(fx) - 1, r = static_cast<int64_t>(fy) - 1;
        double wx[4], wy[4];
        CubicWeights(x - fx, wx);
        CubicWeights(y - fy, wy);
        double sum = 0;
        for (int i = 0; i < 4; ++i) {
          double row = 0;
          for (int j = 0; j < 4; ++j) row += wx[j] * Pixel(r + i, c + j);
          sum += wy[i] * row;
        }
        return sum;
      }
    }
    return 0;
  }

 private:
  const GridSampleAttrs& a_;
  const T* plane_;
  const Axis &ax_, &ay_;
};

template <typename T>
absl::Status GridSampleTyped(const GridSampleAttrs& a, const ir::Tensor& x, const ir::Tensor& grid, ir::Tensor& y) {
  const int64_t n = x.shape()[0], channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
  const int64_t oh = grid.shape()[1], ow = grid.shape()[2];
  const Axis ax = MakeAxis(width, a.align_corners), ay = MakeAxis(height, a.align_corners);
  const T* xd = x.data<T>();
  const T* gd = grid.data<T>();
  T* yd = y.data<T>();
  const bool empty = height == 0 || width == 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < oh * ow; ++i) {
      const double gx = static_cast<double>(gd[(b * oh * ow + i) * 2]);
      const double gy = static_cast<double>(gd[(b * oh * ow + i) * 2 + 1]);
      const bool nan = std::isnan(gx) || std::isnan(gy);
      double px = Denormalize(gx, width, a.align_corners), py = Denormalize(gy, height, a.align_corners);
      if (a.mode == GridSampleMode::kNearest && !nan) {
        px = std::nearbyint(std::clamp(px, -1e15, 1e15));
        py = std::nearbyint(std::clamp(py, -1e15, 1e15));
      }
      if (!nan) {
        px = PadCoordinate(px, ax, a.padding);
        py = PadCoordinate(py, ay, a.padding);
      }
      for (int64_t c = 0; c < channels; ++c) {
        double v = std::numeric_limits<double>::quiet_NaN();
        if (!nan) v = empty ? 0.0 : Sampler<T>(a, xd + (b * channels + c) * height * width, ax, ay).At(px, py);
        yd[(b * channels + c) * oh * ow + i] = static_cast<T>(v);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status GridSample(KernelContext& ctx) {
  absl::StatusOr<GridSampleAttrs> a = ops::ParseGridSampleAttrs(ctx.node);
  if (!a.ok()) return a.status();
  const ir::Tensor *x = ctx.input(0), *grid = ctx.input(1);
  ir::Tensor* y = ctx.output(0);
  if (x == nullptr || grid == nullptr || y == nullptr) return absl::InvalidArgumentError("X, grid and Y are required");
  if (x->rank() != 4) return absl::UnimplementedError("GridSample supports 4-D X only (2 spatial dims)");
  if (grid->dtype() != x->dtype() || y->dtype() != x->dtype()) {
    return absl::InvalidArgumentError("X, grid and Y must have one dtype");
  }
  if (grid->rank() != 4 || grid->shape()[0] != x->shape()[0] || grid->shape()[3] != 2) {
    return absl::InvalidArgumentError(absl::StrCat("grid has shape ", ir::ShapeToString(grid->shape()), ", expected [",
                                                   x->shape()[0], ", H_out, W_out, 2]"));
  }
  if (absl::Status s = nn::ExpectShape(*y, {x->shape()[0], x->shape()[1], grid->shape()[1], grid->shape()[2]}, "Y");
      !s.ok()) {
    return s;
  }
  return DispatchFloat(x->dtype(), [&](auto tag) { return GridSampleTyped<decltype(tag)>(*a, *x, *grid, *y); });
}

}  // namespace kernels::cpu::vision
