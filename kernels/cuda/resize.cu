// Resize kernels: one thread per output element; per axis, the source coordinate, then the nearest
// index or the (up to 4) taps with their weights; zero-weight taps are skipped as on the host.
#include <cuda_fp16.h>

#include <cmath>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/resize.h"

namespace kernels::cuda {
namespace {

// One axis with the terms of its source coordinate that do not depend on the output index,
// computed on the host exactly as the host reference computes them.
struct Axis {
  int64_t in_len, out_len, in_stride;
  double scale;
  double symmetric_offset;  // half_pixel_symmetric
  double roi_base;          // tf_crop_and_resize: roi_start * (in - 1)
  double roi_extent;        // tf_crop_and_resize: float(roi_end) - float(roi_start)
};

struct Plan {
  ResizeMode mode;
  ResizeCoordinate coordinate;
  NearestRounding nearest;
  double cubic_a;
  bool exclude_outside;
  int rank;
  Axis axes[kMaxRank];
};

Plan MakePlan(const ResizeParams& p) {
  Plan plan{p.mode, p.coordinate, p.nearest, p.cubic_a, p.exclude_outside, p.rank, {}};
  for (int d = 0; d < p.rank; ++d) {
    const ResizeAxis& a = p.axes[d];
    const double in = static_cast<double>(a.in_len), out = static_cast<double>(a.out_len);
    const double adjustment = out / (a.scale * in);
    plan.axes[d] = Axis{a.in_len,
                        a.out_len,
                        a.in_stride,
                        a.scale,
                        in / 2 * (1 - adjustment),
                        a.roi_start * (in - 1),
                        static_cast<double>(static_cast<float>(a.roi_end) - static_cast<float>(a.roi_start))};
  }
  return plan;
}

// The source coordinate of output coordinate x (kernels/cpu SourceCoord). No term is a product
// added to something, so no fused multiply-add can change the rounding against the host.
__host__ __device__ double SourceCoord(ResizeCoordinate c, const Axis& a, int64_t x) {
  const double xr = static_cast<double>(x);
  const double in = static_cast<double>(a.in_len), out = static_cast<double>(a.out_len);
  switch (c) {
    case ResizeCoordinate::kHalfPixel: return (xr + 0.5) / a.scale - 0.5;
    case ResizeCoordinate::kPytorchHalfPixel: return a.out_len > 1 ? (xr + 0.5) / a.scale - 0.5 : 0.0;
    case ResizeCoordinate::kAlignCorners: return a.out_len > 1 ? xr * (in - 1) / (out - 1) : 0.0;
    case ResizeCoordinate::kAsymmetric: return xr / a.scale;
    case ResizeCoordinate::kTfHalfPixelForNn: return (xr + 0.5) / a.scale;
    case ResizeCoordinate::kTfCropAndResize:
      if (a.out_len == 1) return a.roi_base + a.roi_extent * (in - 1) / 2;
      return a.roi_base + xr * a.roi_extent * (in - 1) / (out - 1);
    case ResizeCoordinate::kHalfPixelSymmetric: return a.symmetric_offset + (xr + 0.5) / a.scale - 0.5;
  }
  return 0;
}

// Nearest mode's source coordinate (kernels/cpu NearestSourceCoord): in float32 for the modes ONNX
// Runtime and PyTorch compute that way, each operation rounded as on the host (no contraction).
__device__ double NearestSourceCoord(ResizeCoordinate c, const Axis& a, int64_t x) {
  const float xr = static_cast<float>(x), scale = static_cast<float>(a.scale);
  const float in = static_cast<float>(a.in_len), out = static_cast<float>(a.out_len);
  switch (c) {
    case ResizeCoordinate::kHalfPixel: return __fsub_rn(__fdiv_rn(__fadd_rn(xr, 0.5f), scale), 0.5f);
    case ResizeCoordinate::kPytorchHalfPixel:
      return a.out_len > 1 ? __fsub_rn(__fdiv_rn(__fadd_rn(xr, 0.5f), scale), 0.5f) : 0.0f;
    case ResizeCoordinate::kAlignCorners:
      return a.out_len > 1 ? __fdiv_rn(__fmul_rn(xr, __fsub_rn(in, 1.0f)), __fsub_rn(out, 1.0f)) : 0.0f;
    case ResizeCoordinate::kAsymmetric: return __fdiv_rn(xr, scale);
    case ResizeCoordinate::kTfHalfPixelForNn: return __fdiv_rn(__fadd_rn(xr, 0.5f), scale);
    default: return SourceCoord(c, a, x);
  }
}

// kSimple (Upsample's and Resize-10's rounding): floor when the axis enlarges, ceil when it shrinks.
__device__ int64_t NearestIndex(NearestRounding m, double x, double scale) {
  const double lo = floor(x);
  if (x == lo) return static_cast<int64_t>(lo);
  const double frac = x - lo;
  bool up = false;
  switch (m) {
    case NearestRounding::kRoundPreferFloor: up = frac > 0.5; break;
    case NearestRounding::kRoundPreferCeil: up = frac >= 0.5; break;
    case NearestRounding::kFloor: up = false; break;
    case NearestRounding::kCeil: up = true; break;
    case NearestRounding::kSimple: up = scale < 1; break;
  }
  return static_cast<int64_t>(lo) + (up ? 1 : 0);
}

__device__ __forceinline__ int64_t Clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

__device__ bool Outside(const Plan& p, double src, const Axis& a) {
  return p.coordinate == ResizeCoordinate::kTfCropAndResize && (src < 0 || src > static_cast<double>(a.in_len - 1));
}

// Keys cubic convolution kernel at distance s.
__device__ double CubicWeight(double s, double a) {
  s = fabs(s);
  if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
  if (s < 2) return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  return 0;
}

// The taps of one axis with nonzero weight: source offsets (index * stride) and weights.
struct Taps {
  int count;
  int64_t offset[4];
  double weight[4];
};

__device__ Taps AxisTaps(const Plan& p, const Axis& a, double x) {
  const double lo = floor(x);
  const double t = x - lo;
  const int64_t base = static_cast<int64_t>(lo);
  double w[4];
  int64_t first;
  int taps;
  if (p.mode == ResizeMode::kLinear) {
    w[0] = 1 - t;
    w[1] = t;
    first = base;
    taps = 2;
  } else {
    w[0] = CubicWeight(1 + t, p.cubic_a);
    w[1] = CubicWeight(t, p.cubic_a);
    w[2] = CubicWeight(1 - t, p.cubic_a);
    w[3] = CubicWeight(2 - t, p.cubic_a);
    first = base - 1;
    taps = 4;
  }
  const int64_t last = a.in_len - 1;
  int64_t index[4];
  double sum = 0;
  for (int k = 0; k < taps; ++k) {
    index[k] = first + k;
    if (p.exclude_outside && (index[k] < 0 || index[k] > last)) w[k] = 0;
    sum += w[k];
    index[k] = Clamp(index[k], 0, last);
  }
  Taps out{0, {}, {}};
  for (int k = 0; k < taps; ++k) {
    const double weight = p.exclude_outside && sum != 0 ? w[k] / sum : w[k];
    if (weight == 0) continue;
    out.offset[out.count] = index[k] * a.in_stride;
    out.weight[out.count] = weight;
    ++out.count;
  }
  return out;
}

template <typename T>
__global__ void NearestKernel(Plan p, const T* __restrict__ in, T* __restrict__ out, T outside_value, int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    int64_t rest = linear, offset = 0;
    bool outside = false;
    for (int d = p.rank - 1; d >= 0; --d) {
      const Axis& a = p.axes[d];
      const int64_t x = rest % a.out_len;
      rest /= a.out_len;
      const double src = NearestSourceCoord(p.coordinate, a, x);
      outside = outside || Outside(p, src, a);
      offset += Clamp(NearestIndex(p.nearest, src, a.scale), 0, a.in_len - 1) * a.in_stride;
    }
    out[linear] = outside ? outside_value : in[offset];
  }
}

template <typename T>
__device__ __forceinline__ void StoreDouble(T* p, double v) {
  *p = FromFloat<T>(static_cast<float>(v));
}

template <typename T>
__global__ void InterpolateKernel(Plan p, const T* __restrict__ in, T* __restrict__ out, double extrapolation,
                                  int64_t total) {
  for (int64_t linear = GlobalThreadIndex(); linear < total; linear += GlobalThreadCount()) {
    // Axes with one tap fold into a fixed offset and weight; the others are iterated.
    Taps taps[kMaxRank];
    int multi = 0;
    int64_t rest = linear, fixed_offset = 0;
    double fixed_weight = 1;
    bool outside = false, empty = false;
    for (int d = p.rank - 1; d >= 0; --d) {
      const Axis& a = p.axes[d];
      const int64_t x = rest % a.out_len;
      rest /= a.out_len;
      const double src = SourceCoord(p.coordinate, a, x);
      outside = outside || Outside(p, src, a);
      const Taps t = AxisTaps(p, a, src);
      if (t.count == 0) {
        empty = true;
      } else if (t.count == 1) {
        fixed_offset += t.offset[0];
        fixed_weight *= t.weight[0];
      } else {
        taps[multi++] = t;
      }
    }
    if (outside) {
      StoreDouble(&out[linear], extrapolation);
      continue;
    }
    double acc = 0;
    if (!empty) {
      int k[kMaxRank] = {};
      while (true) {
        int64_t offset = fixed_offset;
        double weight = fixed_weight;
        for (int m = 0; m < multi; ++m) {
          offset += taps[m].offset[k[m]];
          weight *= taps[m].weight[k[m]];
        }
        acc += weight * static_cast<double>(ToFloat(in[offset]));
        int m = 0;
        while (m < multi && ++k[m] == taps[m].count) k[m++] = 0;
        if (m == multi) break;
      }
    }
    StoreDouble(&out[linear], acc);
  }
}

int64_t OutputCount(const ResizeParams& p) {
  int64_t total = 1;
  for (int d = 0; d < p.rank; ++d) total *= p.axes[d].out_len;
  return total;
}

template <typename T>
cudaError_t LaunchNearest(const Plan& plan, const void* in, void* out, uint64_t bits, int64_t total,
                          cudaStream_t stream) {
  T value;
  memcpy(&value, &bits, sizeof(T));
  NearestKernel<T>
      <<<GridSize(total), kBlockSize, 0, stream>>>(plan, static_cast<const T*>(in), static_cast<T*>(out), value, total);
  return cudaGetLastError();
}

}  // namespace

bool ResizeCovered(const ResizeParams& params) {
  if (params.rank < 0 || params.rank > kMaxRank) return false;
  const Plan plan = MakePlan(params);
  for (int d = 0; d < params.rank; ++d) {
    const Axis& a = plan.axes[d];
    if (a.in_len < 0 || a.out_len < 0) return false;
    if (a.out_len == 0) continue;
    if (a.in_len == 0 || !(a.scale > 0) || !std::isfinite(a.scale)) return false;
    // Source coordinates are affine in the output index: the ends bound them.
    for (const int64_t x : {int64_t{0}, a.out_len - 1}) {
      const double src = SourceCoord(plan.coordinate, a, x);
      if (!std::isfinite(src) || std::fabs(src) > 1e15) return false;
    }
  }
  return true;
}

cudaError_t ResizeNearest(const ResizeParams& params, const void* in, void* out, int element_bytes,
                          uint64_t outside_bits, cudaStream_t stream) {
  if (!ResizeCovered(params)) return cudaErrorInvalidValue;
  const int64_t total = OutputCount(params);
  if (total == 0) return cudaSuccess;
  const Plan plan = MakePlan(params);
  return DispatchElementBytes(element_bytes, [&](auto tag) {
    return LaunchNearest<decltype(tag)>(plan, in, out, outside_bits, total, stream);
  });
}

cudaError_t ResizeInterpolate(const ResizeParams& params, FloatType type, const void* in, void* out,
                              double extrapolation, cudaStream_t stream) {
  if (!ResizeCovered(params) || params.mode == ResizeMode::kNearest) return cudaErrorInvalidValue;
  const int64_t total = OutputCount(params);
  if (total == 0) return cudaSuccess;
  const Plan plan = MakePlan(params);
  DispatchFloatType(type, [&](auto tag) {
    using T = decltype(tag);
    InterpolateKernel<T><<<GridSize(total), kBlockSize, 0, stream>>>(plan, static_cast<const T*>(in),
                                                                     static_cast<T*>(out), extrapolation, total);
  });
  return cudaGetLastError();
}

}  // namespace kernels::cuda
