// Owns the float32 2-D MaxPool fast path (see max_pool_2d.h): per output, the window's valid tap
// range is clipped once per row and column, then a plain scan.
#include "kernels/cpu/max_pool_2d.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/cpu/parallel.h"

namespace kernels::cpu::nn {
namespace {

// The in-bounds taps [first, last) of each output position along one dim.
struct TapRange {
  std::vector<int64_t> first, last;
};

TapRange ClipTaps(int64_t grid, int64_t image, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad) {
  TapRange r{std::vector<int64_t>(grid), std::vector<int64_t>(grid)};
  for (int64_t o = 0; o < grid; ++o) {
    const int64_t start = o * stride - pad;
    int64_t first = 0, last = kernel;
    while (first < kernel && start + first * dilation < 0) ++first;
    while (last > first && start + (last - 1) * dilation >= image) --last;
    r.first[o] = first;
    r.last[o] = last;
  }
  return r;
}

}  // namespace

void MaxPool2dFloat(const float* x, int64_t planes, const WindowGeometry& geo, float* y) {
  const int64_t in_h = geo.image[0], in_w = geo.image[1], out_h = geo.grid[0], out_w = geo.grid[1];
  const int64_t dh = geo.dilations[0], dw = geo.dilations[1];
  const TapRange rows = ClipTaps(out_h, in_h, geo.kernel[0], geo.strides[0], dh, geo.pad_begin[0]);
  const TapRange cols = ClipTaps(out_w, in_w, geo.kernel[1], geo.strides[1], dw, geo.pad_begin[1]);
  const int64_t out_size = out_h * out_w;
  const int64_t min_planes = ItemsForWork(out_size * geo.kernel[0] * geo.kernel[1], 1 << 14);
  ParallelFor(planes, min_planes, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const float* plane = x + p * in_h * in_w;
      float* out = y + p * out_size;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        const int64_t row0 = oh * geo.strides[0] - geo.pad_begin[0];
        for (int64_t ow = 0; ow < out_w; ++ow) {
          const int64_t col0 = ow * geo.strides[1] - geo.pad_begin[1];
          if (rows.first[oh] >= rows.last[oh] || cols.first[ow] >= cols.last[ow]) {
            out[oh * out_w + ow] = std::numeric_limits<float>::lowest();
            continue;
          }
          float best = plane[(row0 + rows.first[oh] * dh) * in_w + col0 + cols.first[ow] * dw];
          for (int64_t i = rows.first[oh]; i < rows.last[oh]; ++i) {
            const float* line = plane + (row0 + i * dh) * in_w + col0;
            for (int64_t j = cols.first[ow]; j < cols.last[ow]; ++j) {
              const float v = line[j * dw];
              best = v > best ? v : best;  // NaN never wins; a NaN first tap stays
            }
          }
          out[oh * out_w + ow] = best;
        }
      }
    }
  });
}

}  // namespace kernels::cpu::nn
