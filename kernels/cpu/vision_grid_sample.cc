// CPU kernel of GridSample, N-d: X [N, C, D1..Dr] and grid [N, O1..Or, r] of normalized
// coordinates in [-1, 1], innermost dim first ((x, y) for 2-D); N-linear, nearest (ties to even) or
// N-cubic (Keys, a = -0.75) interpolation; zeros, border or reflection padding; align_corners maps
// -1 and 1 to the corner pixel centres, else to the image's outer edges. A NaN coordinate gives NaN.
#include <algorithm>
#include <array>
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

// One output point's interpolation: every neighbour pixel (plane offset, or -1 for a zero-padded
// one) and its weight.
struct Stencil {
  std::vector<int64_t> offsets;
  std::vector<double> weights;
};

// The neighbours of padded coordinates `pos` (one per spatial dim, X's dim order): per dim, the
// first index and the weights of 1 (nearest), 2 (linear) or 4 (cubic) consecutive pixels; the
// stencil is their product.
void MakeStencil(const GridSampleAttrs& a, const std::vector<double>& pos, const std::vector<Axis>& axes, Stencil& st) {
  const size_t nd = pos.size();
  const int taps = a.mode == GridSampleMode::kNearest ? 1 : a.mode == GridSampleMode::kLinear ? 2 : 4;
  std::vector<int64_t> first(nd);
  std::vector<std::array<double, 4>> w(nd);
  for (size_t k = 0; k < nd; ++k) {
    const double f = std::floor(pos[k]), t = pos[k] - f;
    switch (a.mode) {
      case GridSampleMode::kNearest:
        first[k] = static_cast<int64_t>(std::nearbyint(pos[k]));
        w[k][0] = 1;
        break;
      case GridSampleMode::kLinear:
        first[k] = static_cast<int64_t>(f);
        w[k][0] = 1 - t;
        w[k][1] = t;
        break;
      case GridSampleMode::kCubic:
        first[k] = static_cast<int64_t>(f) - 1;
        CubicWeights(t, w[k].data());
        break;
    }
  }
  st.offsets.clear();
  st.weights.clear();
  std::vector<int> tap(nd, 0);
  while (true) {
    int64_t offset = 0;
    double weight = 1;
    for (size_t k = 0; k < nd && offset >= 0; ++k) {
      const int64_t i = PadIndex(first[k] + tap[k], axes[k], a.padding);
      offset = i < 0 ? -1 : offset * axes[k].extent + i;
      weight *= w[k][tap[k]];
    }
    st.offsets.push_back(offset);
    st.weights.push_back(weight);
    size_t k = nd;
    while (k-- > 0 && ++tap[k] == taps) tap[k] = 0;
    if (k == static_cast<size_t>(-1)) break;
  }
}

// T: X's and Y's element type; G: the grid's (ONNX types them apart: an fp16 plan keeps a float32 grid).
template <typename T, typename G>
absl::Status GridSampleTyped(const GridSampleAttrs& a, const ir::Tensor& x, const ir::Tensor& grid, ir::Tensor& y) {
  const size_t nd = static_cast<size_t>(x.rank() - 2);
  const int64_t n = x.shape()[0], channels = x.shape()[1];
  const int64_t plane = nn::Product(absl::MakeConstSpan(x.shape()).subspan(2));
  const int64_t points = nn::Product(absl::MakeConstSpan(grid.shape()).subspan(1, nd));
  std::vector<Axis> axes;
  for (size_t k = 0; k < nd; ++k) axes.push_back(MakeAxis(x.shape()[k + 2], a.align_corners));
  const T* xd = x.data<T>();
  const G* gd = grid.data<G>();
  T* yd = y.data<T>();
  std::vector<double> pos(nd);
  Stencil st;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < points; ++i) {
      bool nan = false;
      for (size_t k = 0; k < nd; ++k) {  // the grid lists coordinates innermost dim first: (x, y, ...)
        const double g = static_cast<double>(gd[(b * points + i) * nd + (nd - 1 - k)]);
        nan = nan || std::isnan(g);
        double v = Denormalize(g, axes[k].extent, a.align_corners);
        if (a.mode == GridSampleMode::kNearest && !std::isnan(v)) v = std::nearbyint(std::clamp(v, -1e15, 1e15));
        pos[k] = std::isnan(v) ? v : PadCoordinate(v, axes[k], a.padding);
        nan = nan || std::isnan(pos[k]);
      }
      if (!nan && plane > 0) MakeStencil(a, pos, axes, st);
      for (int64_t c = 0; c < channels; ++c) {
        double v = nan ? std::numeric_limits<double>::quiet_NaN() : 0.0;
        if (!nan && plane > 0) {
          const T* xp = xd + (b * channels + c) * plane;
          for (size_t j = 0; j < st.offsets.size(); ++j) {
            if (st.offsets[j] >= 0) v += st.weights[j] * static_cast<double>(xp[st.offsets[j]]);
          }
        }
        yd[(b * channels + c) * points + i] = static_cast<T>(v);
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
  if (x->rank() < 3) return absl::InvalidArgumentError("X must have rank >= 3 (N, C, spatial...)");
  if (y->dtype() != x->dtype()) return absl::InvalidArgumentError("X and Y must have one dtype");
  const int64_t nd = x->rank() - 2;
  const int64_t taps = a->mode == GridSampleMode::kNearest ? 1 : a->mode == GridSampleMode::kLinear ? 2 : 4;
  if (std::pow(static_cast<double>(taps), static_cast<double>(nd)) > 4096) {
    return absl::InvalidArgumentError(absl::StrCat(nd, " spatial dims are too many for this mode"));
  }
  if (grid->rank() != x->rank() || grid->shape()[0] != x->shape()[0] || grid->shape().back() != nd) {
    return absl::InvalidArgumentError(absl::StrCat("grid has shape ", ir::ShapeToString(grid->shape()), ", expected [",
                                                   x->shape()[0], ", output spatial dims..., ", nd, "]"));
  }
  std::vector<int64_t> y_shape = {x->shape()[0], x->shape()[1]};
  y_shape.insert(y_shape.end(), grid->shape().begin() + 1, grid->shape().end() - 1);
  if (absl::Status s = nn::ExpectShape(*y, y_shape, "Y"); !s.ok()) return s;
  return DispatchFloat(x->dtype(), [&](auto x_tag) {
    return DispatchFloat(grid->dtype(), [&](auto grid_tag) {
      return GridSampleTyped<decltype(x_tag), decltype(grid_tag)>(*a, *x, *grid, *y);
    });
  });
}

}  // namespace kernels::cpu::vision
