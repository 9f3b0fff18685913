// Owns the float32 CPU depthwise conv (2-D, one input channel per group; see depthwise_conv.h).
// Each input plane is copied once into a zero-bordered scratch split by stride phase: sub-plane
// (a, b) holds the padded pixels (r, c) with r % stride_h == a and c % stride_w == b, rows Q wide.
// Then every tap (i, j) reads one sub-plane at a fixed offset, so the whole output plane (in rows
// Q wide, the columns past the output's width discarded) is one contiguous multiply-add per tap.
#include "kernels/cpu/depthwise_conv.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu/axpy.h"
#include "kernels/cpu/parallel.h"

namespace kernels::cpu::nn {
namespace {

// The scratch's shape for one plane.
struct PhaseLayout {
  int64_t sh, sw;              // strides
  int64_t padded_h, padded_w;  // padded pixels the taps read
  int64_t rows, q;             // rows and width of one sub-plane
  int64_t sub_size;            // rows * q
  int64_t total;               // sh * sw sub-planes plus slack for the discarded columns' reads
};

PhaseLayout MakeLayout(const WindowGeometry& geo) {
  PhaseLayout l;
  l.sh = geo.strides[0];
  l.sw = geo.strides[1];
  l.padded_h = (geo.grid[0] - 1) * l.sh + (geo.kernel[0] - 1) * geo.dilations[0] + 1;
  l.padded_w = (geo.grid[1] - 1) * l.sw + (geo.kernel[1] - 1) * geo.dilations[1] + 1;
  l.rows = (l.padded_h + l.sh - 1) / l.sh;
  l.q = (l.padded_w + l.sw - 1) / l.sw;
  l.sub_size = l.rows * l.q;
  l.total = l.sh * l.sw * l.sub_size + l.q + geo.kernel[1] * geo.dilations[1];
  return l;
}

// Copies input plane x (image dims) into the phase-split, zero-bordered scratch.
void FillPhases(const float* x, const WindowGeometry& geo, const PhaseLayout& l, float* scratch) {
  const int64_t in_h = geo.image[0], in_w = geo.image[1];
  std::fill(scratch, scratch + l.total, 0.0f);
  for (int64_t r = 0; r < l.padded_h; ++r) {
    const int64_t ih = r - geo.pad_begin[0];
    if (ih < 0 || ih >= in_h) continue;
    const float* row = x + ih * in_w;
    float* base = scratch + (r % l.sh) * l.sw * l.sub_size + (r / l.sh) * l.q;
    const int64_t c_begin = std::max<int64_t>(0, geo.pad_begin[1]);
    const int64_t c_end = std::min(l.padded_w, in_w + geo.pad_begin[1]);
    if (l.sw == 1) {
      std::copy(row + c_begin - geo.pad_begin[1], row + c_end - geo.pad_begin[1], base + c_begin);
      continue;
    }
    for (int64_t b = 0; b < l.sw; ++b) {  // padded columns c = q * sw + b
      float* phase = base + b * l.sub_size;
      const int64_t q_begin = (c_begin - b + l.sw - 1) / l.sw, q_end = (c_end - b + l.sw - 1) / l.sw;
      const float* src = row + q_begin * l.sw + b - geo.pad_begin[1];
      for (int64_t q = q_begin; q < q_end; ++q, src += l.sw) phase[q] = *src;
    }
  }
}

// One output plane: bias, then every tap over the phase scratch into acc (rows q wide), then the
// first grid[1] columns of each row to y.
void ConvPlane(const float* scratch, const float* w, float bias, const WindowGeometry& geo, const PhaseLayout& l,
               float* acc, float* y) {
  const int64_t out_h = geo.grid[0], out_w = geo.grid[1], n = out_h * l.q;
  std::fill(acc, acc + n, bias);
  for (int64_t i = 0; i < geo.kernel[0]; ++i) {
    const int64_t di = i * geo.dilations[0];
    for (int64_t j = 0; j < geo.kernel[1]; ++j) {
      const int64_t dj = j * geo.dilations[1];
      const float* sub = scratch + ((di % l.sh) * l.sw + dj % l.sw) * l.sub_size;
      Axpy(acc, sub + (di / l.sh) * l.q + dj / l.sw, w[i * geo.kernel[1] + j], n);
    }
  }
  for (int64_t oh = 0; oh < out_h; ++oh) std::copy(acc + oh * l.q, acc + oh * l.q + out_w, y + oh * out_w);
}

}  // namespace

void DepthwiseConv2dFloat(const float* x, const float* w, const float* bias, int64_t batch, int64_t channels,
                          int64_t multiplier, const WindowGeometry& geo, float* y) {
  if (batch * channels * multiplier == 0 || Product(geo.grid) == 0) return;
  const PhaseLayout layout = MakeLayout(geo);
  const int64_t in_size = geo.image[0] * geo.image[1], out_size = geo.grid[0] * geo.grid[1];
  const int64_t taps = geo.kernel[0] * geo.kernel[1], out_channels = channels * multiplier;
  const int64_t min_planes = ItemsForWork(out_size * taps, 1 << 14);
  ParallelFor(batch * channels, min_planes, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(layout.total), acc(geo.grid[0] * layout.q);
    for (int64_t plane = begin; plane < end; ++plane) {
      FillPhases(x + plane * in_size, geo, layout, scratch.data());
      const int64_t n = plane / channels, c = plane % channels;
      for (int64_t m = 0; m < multiplier; ++m) {
        const int64_t oc = c * multiplier + m;
        ConvPlane(scratch.data(), w + oc * taps, bias != nullptr ? bias[oc] : 0.0f, geo, layout, acc.data(),
                  y + (n * out_channels + oc) * out_size);
      }
    }
  });
}

}  // namespace kernels::cpu::nn
