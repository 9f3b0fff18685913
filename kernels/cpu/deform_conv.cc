// CPU kernel of DeformConv (semantics in ops/deform_conv.h), N-d: per batch item, the deformed
// im2col matrix (each tap's N-linear sample of X, 0 for pixels outside, times the mask) and one
// gemm per group with W, as Conv does with its plain im2col. float32 and float64 natively, float16
// and bfloat16 through float32. Sample coordinates and weights are float64; a NaN coordinate
// gives NaN, one a whole pixel or more outside the image (infinities too) gives 0.
#include "ops/deform_conv.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/nn_util.h"

namespace kernels::cpu {
namespace {

using nn::WindowGeometry;

// The inputs, validated, and the extents the loops use.
struct DeformArgs {
  const ir::Tensor *x = nullptr, *w = nullptr, *offset = nullptr, *b = nullptr, *mask = nullptr;
  ir::Tensor* y = nullptr;
  ops::DeformConvGroups groups;
  WindowGeometry geo;
  int64_t batch = 0, channels = 0, out_channels = 0;
  int64_t kernel_size = 0, in_size = 0, out_size = 0;
  size_t spatial = 0;
};

// An error unless `t` is [N, offset_group * K * per_tap, grid...]. The expected channel count is
// compared in double (exact here), so no product of attribute values can overflow.
absl::Status ExpectTapShape(const ir::Tensor& t, const DeformArgs& a, int64_t per_tap, const char* name) {
  const std::vector<int64_t>& s = t.shape();
  const double channels =
      static_cast<double>(a.groups.offset_group) * static_cast<double>(a.kernel_size) * static_cast<double>(per_tap);
  bool ok = s.size() == a.spatial + 2 && s[0] == a.batch && static_cast<double>(s[1]) == channels;
  for (size_t d = 0; ok && d < a.spatial; ++d) ok = s[d + 2] == a.geo.grid[d];
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(name, " has shape ", ir::ShapeToString(s), ", expected [", a.batch, ", ", a.groups.offset_group,
                   " offset groups x ", a.kernel_size, " kernel taps",
                   per_tap > 1 ? absl::StrCat(" x ", per_tap, " spatial dims") : std::string(), ", ",
                   absl::StrJoin(a.geo.grid, ", "), "] (the output's spatial dims)"));
}

absl::StatusOr<DeformArgs> ReadArgs(const KernelContext& ctx) {
  DeformArgs a;
  a.x = ctx.input(0);
  a.w = ctx.input(1);
  a.offset = ctx.input(2);
  a.b = ctx.input(3);
  a.mask = ctx.input(4);
  a.y = ctx.output(0);
  if (a.x == nullptr || a.w == nullptr || a.offset == nullptr || a.y == nullptr) {
    return absl::InvalidArgumentError("X, W, offset and Y are required");
  }
  absl::StatusOr<ops::DeformConvGroups> groups = ops::ParseDeformConvGroups(ctx.attrs());
  if (!groups.ok()) return groups.status();
  a.groups = *groups;
  if (a.x->rank() < 3 || a.x->rank() - 2 > ops::kMaxDeformConvSpatialDims) {
    return absl::InvalidArgumentError(absl::StrCat("X must have rank 3 to ", ops::kMaxDeformConvSpatialDims + 2,
                                                   " (N, C, spatial...), got ", a.x->rank()));
  }
  if (a.w->rank() != a.x->rank()) {
    return absl::InvalidArgumentError(absl::StrCat("W has rank ", a.w->rank(), ", X has rank ", a.x->rank()));
  }
  for (const ir::Tensor* t : {a.w, a.offset, a.b, a.mask, static_cast<const ir::Tensor*>(a.y)}) {
    if (t != nullptr && t->dtype() != a.x->dtype()) {
      return absl::InvalidArgumentError("X, W, offset, B, mask and Y must have the same dtype");
    }
  }
  a.spatial = static_cast<size_t>(a.x->rank() - 2);
  a.batch = a.x->shape()[0];
  a.channels = a.x->shape()[1];
  a.out_channels = a.w->shape()[0];
  if (a.channels != a.w->shape()[1] * a.groups.group || a.out_channels % a.groups.group != 0) {
    return absl::InvalidArgumentError(absl::StrCat("X has ", a.channels, " channels and W shape ",
                                                   ir::ShapeToString(a.w->shape()), ", not ", a.groups.group,
                                                   " groups of input and output channels"));
  }
  if (a.channels % a.groups.offset_group != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("X's ", a.channels, " channels are not divisible by offset_group ", a.groups.offset_group));
  }
  absl::Span<const int64_t> kernel = absl::MakeConstSpan(a.w->shape()).subspan(2);
  absl::StatusOr<nn::WindowAttrs> window = nn::ReadWindowAttrs(ctx.attrs(), a.spatial, kernel);
  if (!window.ok()) return window.status();
  absl::StatusOr<WindowGeometry> geo = nn::ForwardGeometry(*window, absl::MakeConstSpan(a.x->shape()).subspan(2));
  if (!geo.ok()) return geo.status();
  a.geo = *std::move(geo);
  std::vector<int64_t> y_shape = {a.batch, a.out_channels};
  y_shape.insert(y_shape.end(), a.geo.grid.begin(), a.geo.grid.end());
  if (absl::Status s = nn::ExpectShape(*a.y, y_shape, "Y"); !s.ok()) return s;
  if (absl::Status s = ops::CheckDeformConvWork(a.batch, a.channels, a.out_channels, a.groups.group,
                                                nn::Product(kernel), a.geo.grid);
      !s.ok()) {
    return s;
  }
  // Y's spatial extent, bounded on its own: with no batch or no channels any passes the work bound.
  double out_size = 1;
  for (int64_t d : a.geo.grid) out_size *= static_cast<double>(d);
  if (out_size > static_cast<double>(ir::kMaxTensorBytes)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("DeformConv output spatial dims [", absl::StrJoin(a.geo.grid, ", "), "] are too large"));
  }
  a.kernel_size = nn::Product(a.geo.kernel);
  a.in_size = nn::Product(a.geo.image);
  a.out_size = static_cast<int64_t>(out_size);
  if (absl::Status s = ExpectTapShape(*a.offset, a, static_cast<int64_t>(a.spatial), "offset"); !s.ok()) return s;
  if (a.mask != nullptr) {
    if (absl::Status s = ExpectTapShape(*a.mask, a, 1, "mask"); !s.ok()) return s;
  }
  if (a.b != nullptr) {
    if (absl::Status s = nn::ExpectShape(*a.b, {a.out_channels}, "B"); !s.ok()) return s;
  }
  return a;
}

// The pixels one sample reads: flat indices into a channel plane and their N-linear weights
// (corners outside the image left out: they read 0). nan: the coordinate is NaN.
struct Corners {
  std::array<int64_t, size_t{1} << ops::kMaxDeformConvSpatialDims> index;
  std::array<double, size_t{1} << ops::kMaxDeformConvSpatialDims> weight;
  int count = 0;
  bool nan = false;

  template <typename T>
  double Read(const T* plane) const {
    if (nan) return std::nan("");
    double v = 0;
    for (int i = 0; i < count; ++i) v += weight[i] * static_cast<double>(plane[index[i]]);
    return v;
  }
};

// The corners around `pos` (one coordinate per spatial dim) in an image of dims `image` whose
// flat index advances by pitch[d] along dim d.
Corners FindCorners(const double* pos, const std::vector<int64_t>& image, const std::vector<int64_t>& pitch) {
  Corners c;
  const size_t r = image.size();
  int64_t lo[ops::kMaxDeformConvSpatialDims];
  double frac[ops::kMaxDeformConvSpatialDims];
  for (size_t d = 0; d < r; ++d) {
    if (std::isnan(pos[d])) {
      c.nan = true;
      return c;
    }
    if (!(pos[d] > -1.0 && pos[d] < static_cast<double>(image[d]))) return c;  // every corner outside
    const double f = std::floor(pos[d]);
    lo[d] = static_cast<int64_t>(f);
    frac[d] = pos[d] - f;
  }
  for (int corner = 0; corner < (1 << r); ++corner) {
    int64_t index = 0;
    double weight = 1;
    bool inside = true;
    for (size_t d = 0; d < r && inside; ++d) {
      const int hi = (corner >> d) & 1;
      const int64_t i = lo[d] + hi;
      inside = i >= 0 && i < image[d];
      index += i * pitch[d];
      weight *= hi ? frac[d] : 1.0 - frac[d];
    }
    if (!inside) continue;
    c.index[c.count] = index;
    c.weight[c.count] = weight;
    ++c.count;
  }
  return c;
}

// Batch item n's deformed im2col matrix: col[(c * K + k) * O + o] = mask * sample of channel c at
// tap k of output position o.
template <typename T>
void DeformedIm2Col(const DeformArgs& a, int64_t n, T* col) {
  const size_t r = a.spatial;
  const int64_t K = a.kernel_size, O = a.out_size;
  const int64_t group_channels = a.channels / a.groups.offset_group;
  std::vector<int64_t> pitch(r, 1), tap(r), at(r);
  for (size_t d = r - 1; d > 0; --d) pitch[d - 1] = pitch[d] * a.geo.image[d];
  const T* x = a.x->data<T>() + n * a.channels * a.in_size;
  const T* offset = a.offset->data<T>() + n * a.groups.offset_group * K * static_cast<int64_t>(r) * O;
  const T* mask = a.mask != nullptr ? a.mask->data<T>() + n * a.groups.offset_group * K * O : nullptr;
  double pos[ops::kMaxDeformConvSpatialDims];
  for (int64_t g = 0; g < a.groups.offset_group; ++g) {
    for (int64_t k = 0; k < K; ++k) {
      for (size_t d = r, rest = static_cast<size_t>(k); d-- > 0;) {
        tap[d] = static_cast<int64_t>(rest) % a.geo.kernel[d];
        rest /= static_cast<size_t>(a.geo.kernel[d]);
      }
      const T* tap_offset = offset + (g * K + k) * static_cast<int64_t>(r) * O;
      for (int64_t o = 0; o < O; ++o) {
        for (size_t d = r, rest = static_cast<size_t>(o); d-- > 0;) {
          at[d] = static_cast<int64_t>(rest) % a.geo.grid[d];
          rest /= static_cast<size_t>(a.geo.grid[d]);
        }
        for (size_t d = 0; d < r; ++d) {
          pos[d] = static_cast<double>(at[d] * a.geo.strides[d] - a.geo.pad_begin[d] + tap[d] * a.geo.dilations[d]) +
                   static_cast<double>(tap_offset[static_cast<int64_t>(d) * O + o]);
        }
        const Corners corners = FindCorners(pos, a.geo.image, pitch);
        const double scale = mask != nullptr ? static_cast<double>(mask[(g * K + k) * O + o]) : 1.0;
        for (int64_t c = g * group_channels; c < (g + 1) * group_channels; ++c) {
          col[(c * K + k) * O + o] = static_cast<T>(corners.Read(x + c * a.in_size) * scale);
        }
      }
    }
  }
}

template <typename T>
absl::Status DeformConvTyped(const DeformArgs& a) {
  const int64_t group = a.groups.group, group_in = a.channels / group, group_out = a.out_channels / group;
  const int64_t rows = group_in * a.kernel_size, O = a.out_size;
  // DeformedIm2Col writes every element before the gemms read it.
  absl::StatusOr<std::unique_ptr<T[]>> col = nn::UninitializedScratch<T>(a.channels * a.kernel_size, O);
  if (!col.ok()) return col.status();
  const T* w = a.w->data<T>();
  T* y = a.y->data<T>();
  for (int64_t n = 0; n < a.batch; ++n) {
    DeformedIm2Col(a, n, col->get());
    for (int64_t g = 0; g < group; ++g) {
      T* yg = y + (n * a.out_channels + g * group_out) * O;
      for (int64_t m = 0; m < group_out && a.b != nullptr; ++m) {
        std::fill(yg + m * O, yg + (m + 1) * O, a.b->data<T>()[g * group_out + m]);
      }
      absl::Status s = nn::Gemm(false, false, group_out, O, rows, T{1}, w + g * group_out * rows,
                                col->get() + g * rows * O, a.b != nullptr ? T{1} : T{0}, yg);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status DeformConv(KernelContext& ctx) {
  if (nn::IsHalf(ctx)) return nn::RunAsFloat32(ctx, &DeformConv);
  absl::StatusOr<DeformArgs> args = ReadArgs(ctx);
  if (!args.ok()) return args.status();
  switch (args->x->dtype()) {
    case ir::DType::kFloat32: return DeformConvTyped<float>(*args);
    case ir::DType::kFloat64: return DeformConvTyped<double>(*args);
    default:
      return absl::UnimplementedError(
          absl::StrCat("DeformConv: dtype ", ir::DTypeName(args->x->dtype()), " not supported"));
  }
}

}  // namespace

std::vector<KernelDef> DeformConvKernels() {
  return {
      {"DeformConv", DeformConv},
  };
}

}  // namespace kernels::cpu
