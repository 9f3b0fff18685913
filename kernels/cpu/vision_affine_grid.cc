// CPU kernel of AffineGrid (opset 20): theta [N, r, r + 1] applied to every point of the evenly
// spaced grid over [-1, 1]^r that size [N, C, D1..Dr] describes (ops/vision_attrs.h), in double,
// giving grid [N, D1..Dr, r] in theta's dtype.
#include <algorithm>
#include <vector>

#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/tensor_ops_util.h"
#include "kernels/cpu/vision.h"
#include "ops/vision_attrs.h"

namespace kernels::cpu::vision {
namespace {

// The positions along one axis of `extent` points, as ONNX's reference computes them
// (numpy's arange: start + i * step).
std::vector<double> AxisPositions(int64_t extent, bool align_corners) {
  std::vector<double> positions(static_cast<size_t>(extent));
  const double n = static_cast<double>(extent);
  const double step = align_corners ? (extent > 1 ? 2.0 / (n - 1) : 0.0) : 2.0 / n;
  const double start = align_corners ? -1.0 : -1.0 + step / 2;
  for (int64_t i = 0; i < extent; ++i) positions[static_cast<size_t>(i)] = start + static_cast<double>(i) * step;
  return positions;
}

}  // namespace

absl::Status AffineGrid(KernelContext& ctx) {
  for (size_t i = 0; i < 2; ++i) {
    if (absl::Status s = RequireInput(ctx, i); !s.ok()) return s;
  }
  const ir::Tensor& theta = *ctx.input(0);
  absl::StatusOr<ops::AffineGridExtents> e = ops::AffineGridExtentsOf(ctx.node, theta.shape(), *ctx.input(1));
  if (!e.ok()) return e.status();
  const int64_t r = static_cast<int64_t>(e->spatial.size());
  std::vector<int64_t> out_dims = {e->batch};
  out_dims.insert(out_dims.end(), e->spatial.begin(), e->spatial.end());
  out_dims.push_back(r);
  if (absl::Status s = CheckOutput(ctx, 0, theta.dtype(), out_dims); !s.ok()) return s;
  // positions[k]: along spatial dim k (D1 first); a point's homogeneous coordinates list the last
  // spatial dim's position first: (x, y, 1) for [H, W], (x, y, z, 1) for [D, H, W].
  std::vector<std::vector<double>> positions;
  int64_t points = 1;
  for (int64_t d : e->spatial) {
    positions.push_back(AxisPositions(d, e->align_corners));
    points *= d;
  }
  return DispatchFloat(theta.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* th = theta.template data<T>();
    T* out = ctx.output(0)->template data<T>();
    std::vector<double> matrix(static_cast<size_t>(r * (r + 1)));
    std::vector<int64_t> index(static_cast<size_t>(r), 0);
    std::vector<double> point(static_cast<size_t>(r + 1), 1.0);
    for (int64_t n = 0; n < e->batch; ++n) {
      for (size_t k = 0; k < matrix.size(); ++k) matrix[k] = static_cast<double>(th[n * r * (r + 1) + k]);
      std::fill(index.begin(), index.end(), 0);
      for (int64_t p = 0; p < points; ++p) {
        for (int64_t k = 0; k < r; ++k) point[r - 1 - k] = positions[k][index[k]];
        T* y = out + (n * points + p) * r;
        for (int64_t row = 0; row < r; ++row) {
          double sum = 0;
          for (int64_t c = 0; c <= r; ++c) sum += matrix[row * (r + 1) + c] * point[c];
          y[row] = static_cast<T>(sum);
        }
        for (int64_t k = r - 1; k >= 0 && ++index[k] == e->spatial[k]; --k) index[k] = 0;
      }
    }
    return absl::OkStatus();
  });
}

}  // namespace kernels::cpu::vision
