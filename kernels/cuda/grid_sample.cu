// GridSample kernel (see grid_sample.h): per output element, the two coordinates denormalized and
// padded, the 1 / 2x2 / 4x4 stencil of padded pixel indices and weights, the weighted sum in double.
#include <cmath>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/grid_sample.h"
#include "kernels/cuda/launch.h"

namespace kernels::cuda {
namespace {

// One spatial axis: its extent and the range reflection folds into.
struct Axis {
  int64_t extent;
  double lo, hi;  // align_corners: [0, extent - 1], else [-0.5, extent - 0.5]
};

__device__ Axis MakeAxis(int64_t extent, bool align_corners) {
  return align_corners ? Axis{extent, 0.0, static_cast<double>(extent - 1)}
                       : Axis{extent, -0.5, static_cast<double>(extent) - 0.5};
}

__device__ double Denormalize(double g, int64_t extent, bool align_corners) {
  return align_corners ? (g + 1) / 2 * static_cast<double>(extent - 1) : ((g + 1) * extent - 1) / 2;
}

__device__ double Reflect(double v, double lo, double hi) {
  const double range = hi - lo;
  if (!(range > 0)) return lo;
  const double period = 2 * range;
  double d = fmod(v - lo, period);
  if (d < 0) d += period;
  return d <= range ? lo + d : hi - (d - range);
}

__device__ double PadCoordinate(double v, const Axis& axis, GridPadding padding) {
  if (axis.extent == 0) return 0;
  if (padding == GridPadding::kZeros) return fmin(fmax(v, -4.0), static_cast<double>(axis.extent) + 4.0);
  if (v >= axis.lo && v <= axis.hi) return v;
  if (padding == GridPadding::kBorder) return fmin(fmax(v, 0.0), static_cast<double>(axis.extent - 1));
  return isfinite(v) ? Reflect(v, axis.lo, axis.hi) : axis.lo;
}

// Pixel i's index after padding, or -1 (zeros padding outside the image).
__device__ int64_t PadIndex(int64_t i, const Axis& axis, GridPadding padding) {
  if (i >= 0 && i < axis.extent) return i;
  if (padding == GridPadding::kZeros) return -1;
  const int64_t j =
      padding == GridPadding::kBorder ? i : static_cast<int64_t>(Reflect(static_cast<double>(i), axis.lo, axis.hi));
  return j < 0 ? 0 : (j > axis.extent - 1 ? axis.extent - 1 : j);
}

// The first pixel and the weights of the taps along one axis at padded coordinate `pos`.
__device__ int Taps(GridMode mode, double pos, int64_t& first, double w[4]) {
  const double f = floor(pos), t = pos - f;
  if (mode == GridMode::kNearest) {
    first = static_cast<int64_t>(rint(pos));
    w[0] = 1;
    return 1;
  }
  if (mode == GridMode::kLinear) {
    first = static_cast<int64_t>(f);
    w[0] = 1 - t;
    w[1] = t;
    return 2;
  }
  constexpr double a = -0.75;  // Keys cubic convolution
  auto near = [&](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  auto far = [&](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  first = static_cast<int64_t>(f) - 1;
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
  return 4;
}

// The padded coordinate along one axis from grid value g (NaN stays NaN).
__device__ double Position(double g, const Axis& axis, const GridSampleParams& p) {
  double v = Denormalize(g, axis.extent, p.align_corners);
  if (p.mode == GridMode::kNearest && !isnan(v)) v = rint(fmin(fmax(v, -1e15), 1e15));
  return isnan(v) ? v : PadCoordinate(v, axis, p.padding);
}

template <typename T, typename G>
__global__ void GridSampleKernel(const T* __restrict__ x, const G* __restrict__ grid, T* __restrict__ y,
                                 GridSampleParams p, int64_t total) {
  const Axis ax_h = MakeAxis(p.h, p.align_corners), ax_w = MakeAxis(p.w, p.align_corners);
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    const int64_t point = linear % (p.out_h * p.out_w), c = (linear / (p.out_h * p.out_w)) % p.c;
    const int64_t b = linear / (p.out_h * p.out_w * p.c);
    const G* g = grid + (b * p.out_h * p.out_w + point) * 2;  // (x, y): W's coordinate first
    const double pos_w = Position(ToFloat(g[0]), ax_w, p), pos_h = Position(ToFloat(g[1]), ax_h, p);
    double v = 0;
    if (isnan(pos_w) || isnan(pos_h)) {
      v = NAN;
    } else if (p.h > 0 && p.w > 0) {
      int64_t first_h = 0, first_w = 0;
      double wh[4], ww[4];
      const int taps_h = Taps(p.mode, pos_h, first_h, wh), taps_w = Taps(p.mode, pos_w, first_w, ww);
      const T* plane = x + b * p.x_strides[0] + c * p.x_strides[1];
      for (int i = 0; i < taps_h; ++i) {
        const int64_t row = PadIndex(first_h + i, ax_h, p.padding);
        for (int j = 0; j < taps_w; ++j) {
          const int64_t col = PadIndex(first_w + j, ax_w, p.padding);
          if (row >= 0 && col >= 0) {
            v += wh[i] * ww[j] * static_cast<double>(ToFloat(plane[row * p.x_strides[2] + col * p.x_strides[3]]));
          }
        }
      }
    }
    y[linear] = FromFloat<T>(static_cast<float>(v));
  }
}

}  // namespace

cudaError_t GridSample(FloatType x_type, FloatType grid_type, const void* x, const void* grid, void* y,
                       const GridSampleParams& params, cudaStream_t stream) {
  if (params.n < 0 || params.c < 0 || params.h < 0 || params.w < 0 || params.out_h < 0 || params.out_w < 0) {
    return cudaErrorInvalidValue;
  }
  const int64_t total = params.n * params.c * params.out_h * params.out_w;
  if (total == 0) return cudaSuccess;
  return DispatchFloatType(x_type, [&](auto x_tag) {
    return DispatchFloatType(grid_type, [&](auto grid_tag) {
      using T = decltype(x_tag);
      using G = decltype(grid_tag);
      GridSampleKernel<<<GridSize(total), kBlockSize, 0, stream>>>(
          static_cast<const T*>(x), static_cast<const G*>(grid), static_cast<T*>(y), params, total);
      return cudaGetLastError();
    });
  });
}

}  // namespace kernels::cuda
