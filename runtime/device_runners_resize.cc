// Device runners for the resampling ops: Resize (nearest/linear/cubic, every coordinate mode of the
// host kernel) and GridSample over two spatial dims (kernels/cuda/grid_sample.h).
// that turns the concrete input dims and the node's attributes and constant inputs into kernel
// parameters. Output dims always come from the op's own inference.
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ir/half.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/grid_sample.h"
#include "kernels/cuda/resize.h"
#include "ops/infer_concrete.h"
#include "ops/op_def.h"
#include "ops/vision_attrs.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

using ir::DType;
using kernels::cuda::FloatType;
using kernels::cuda::kMaxRank;

// ---- Resize ---------------------------------------------------------------------------------------

template <typename E>
std::optional<E> Lookup(const std::string& key, std::initializer_list<std::pair<const char*, E>> table) {
  for (const auto& [name, value] : table) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::optional<kernels::cuda::ResizeMode> ResizeModeOf(const ir::Node& n) {
  using M = kernels::cuda::ResizeMode;
  return Lookup<M>(n.attrs.GetString("mode", "nearest"),
                   {{"nearest", M::kNearest}, {"linear", M::kLinear}, {"cubic", M::kCubic}});
}

bool SupportsResize(const ir::Graph& g, const ir::Node& n) {
  for (size_t i = 1; i < 4; ++i) {
    if (!ConstantOrAbsent(g, n, i)) return false;
  }
  const std::optional<kernels::cuda::ResizeMode> mode = ResizeModeOf(n);
  if (!mode || n.attrs.GetInt("antialias", 0) != 0 || n.attrs.Has("axes") ||
      n.attrs.GetString("keep_aspect_ratio_policy", "stretch") != "stretch") {
    return false;
  }
  const DType x = InputDType(g, n, 0);
  return *mode == kernels::cuda::ResizeMode::kNearest ? Movable(x) : IsFloat(x);
}

// The bits of one element of `dtype` holding `v` as the host reference converts it.
std::optional<uint64_t> ElementBits(DType dtype, double v) {
  uint64_t bits = 0;
  auto put = [&bits](auto value) {
    std::memcpy(&bits, &value, sizeof(value));
    return bits;
  };
  switch (dtype) {
    case DType::kFloat32: return put(static_cast<float>(v));
    case DType::kFloat64: return put(v);
    case DType::kFloat16: return put(ir::FloatToHalfBits(static_cast<float>(v)));
    case DType::kBFloat16: return put(ir::FloatToBFloat16Bits(static_cast<float>(v)));
    case DType::kInt8: return put(static_cast<int8_t>(std::nearbyint(v)));
    case DType::kUint8: return put(static_cast<uint8_t>(std::nearbyint(v)));
    case DType::kInt32: return put(static_cast<int32_t>(std::nearbyint(v)));
    case DType::kInt64: return put(static_cast<int64_t>(std::nearbyint(v)));
    default: return std::nullopt;
  }
}

absl::StatusOr<kernels::cuda::ResizeParams> ResizeParamsOf(const Call& c, const std::vector<int64_t>& out_dims) {
  using C = kernels::cuda::ResizeCoordinate;
  using R = kernels::cuda::NearestRounding;
  const DeviceTensor& x = c.in(0);
  const ir::Attributes& attrs = c.node.attrs;
  kernels::cuda::ResizeParams p;
  p.mode = *ResizeModeOf(c.node);
  const std::optional<C> coordinate = Lookup<C>(attrs.GetString("coordinate_transformation_mode", "half_pixel"),
                                                {{"half_pixel", C::kHalfPixel},
                                                 {"pytorch_half_pixel", C::kPytorchHalfPixel},
                                                 {"align_corners", C::kAlignCorners},
                                                 {"asymmetric", C::kAsymmetric},
                                                 {"tf_half_pixel_for_nn", C::kTfHalfPixelForNn},
                                                 {"tf_crop_and_resize", C::kTfCropAndResize},
                                                 {"half_pixel_symmetric", C::kHalfPixelSymmetric}});
  const std::optional<R> nearest =
      Lookup<R>(attrs.GetString("nearest_mode", "round_prefer_floor"), {{"round_prefer_floor", R::kRoundPreferFloor},
                                                                        {"round_prefer_ceil", R::kRoundPreferCeil},
                                                                        {"floor", R::kFloor},
                                                                        {"ceil", R::kCeil},
                                                                        {"simple", R::kSimple}});
  if (!coordinate || !nearest) return c.Unsupported("unknown coordinate_transformation_mode or nearest_mode");
  p.coordinate = *coordinate;
  p.nearest = *nearest;
  p.cubic_a = attrs.GetFloat("cubic_coeff_a", -0.75f);
  p.exclude_outside = attrs.GetInt("exclude_outside", 0) != 0;
  p.rank = static_cast<int>(x.dims.size());
  const ir::Tensor* scales = c.constant(2);
  if (scales != nullptr && scales->num_elements() == 0) scales = nullptr;
  const ir::Tensor* sizes = c.constant(3);
  const ir::Tensor* roi = c.constant(1);
  if (p.coordinate == C::kTfCropAndResize && (roi == nullptr || roi->num_elements() != 2 * p.rank)) {
    return c.Unsupported("tf_crop_and_resize without a roi of 2 * rank elements");
  }
  if (scales != nullptr ? scales->num_elements() != p.rank : sizes == nullptr || sizes->num_elements() != p.rank) {
    return c.Unsupported("scales or sizes do not have one element per axis");
  }
  if (out_dims.size() != x.dims.size()) return c.Unsupported("output rank differs from the input's");
  const std::vector<int64_t> strides = x.strides();
  for (int d = 0; d < p.rank; ++d) {
    kernels::cuda::ResizeAxis& a = p.axes[d];
    a.in_len = x.dims[d];
    a.out_len = out_dims[d];
    a.in_stride = strides[d];
    a.scale = scales != nullptr ? scales->GetAsDouble(d)
                                : (a.in_len > 0 ? static_cast<double>(a.out_len) / static_cast<double>(a.in_len) : 1.0);
    if (p.coordinate == C::kTfCropAndResize) {
      a.roi_start = roi->GetAsDouble(d);
      a.roi_end = roi->GetAsDouble(p.rank + d);
    }
  }
  if (!kernels::cuda::ResizeCovered(p)) return c.Unsupported("scales or source coordinates out of range");
  return p;
}

Outputs RunResize(const Call& c) {
  const DeviceTensor& x = c.in(0);
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  absl::StatusOr<kernels::cuda::ResizeParams> p = ResizeParamsOf(c, out->dims);
  if (!p.ok()) return p.status();
  const double extrapolation = c.node.attrs.GetFloat("extrapolation_value", 0.0f);
  if (p->mode == kernels::cuda::ResizeMode::kNearest) {
    const std::optional<uint64_t> bits = ElementBits(x.dtype, extrapolation);
    if (!bits) return c.Unsupported(absl::StrCat("nearest of ", ir::DTypeName(x.dtype)));
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        kernels::cuda::ResizeNearest(*p, x.data(), out->data(), ElementBytes(x.dtype), *bits, c.stream));
  } else {
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        kernels::cuda::ResizeInterpolate(*p, ToFloatType(x.dtype), x.data(), out->data(), extrapolation, c.stream));
  }
  return std::vector<DeviceTensor>{*std::move(out)};
}

// ---- GridSample -----------------------------------------------------------------------------------

bool SupportsGridSample(const ir::Graph& g, const ir::Node& n) {
  const ir::TensorType& x = g.value(n.inputs[0]).type;
  return IsFloat(x.dtype) && IsFloat(InputDType(g, n, 1)) && x.rank() == 4 && ops::ParseGridSampleAttrs(n).ok();
}

Outputs RunGridSample(const Call& c) {
  const DeviceTensor& x = c.in(0);
  absl::StatusOr<DeviceTensor> grid = ToLayout(c.in(1), false, c.stream);
  if (!grid.ok()) return grid.status();
  if (x.dims.size() != 4 || grid->dims.size() != 4 || grid->dims[0] != x.dims[0] || grid->dims[3] != 2) {
    return c.Unsupported("a form the host reports");
  }
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dims != std::vector<int64_t>{x.dims[0], x.dims[1], grid->dims[1], grid->dims[2]}) {
    return c.Unsupported("inferred dims differ from [N, C, grid H, grid W]");
  }
  const ops::GridSampleAttrs attrs = *ops::ParseGridSampleAttrs(c.node);
  kernels::cuda::GridSampleParams p;
  p.n = x.dims[0];
  p.c = x.dims[1];
  p.h = x.dims[2];
  p.w = x.dims[3];
  p.out_h = grid->dims[1];
  p.out_w = grid->dims[2];
  const std::vector<int64_t> strides = x.strides();
  std::copy(strides.begin(), strides.end(), p.x_strides);
  p.mode = attrs.mode == ops::GridSampleMode::kNearest ? kernels::cuda::GridMode::kNearest
           : attrs.mode == ops::GridSampleMode::kCubic ? kernels::cuda::GridMode::kCubic
                                                       : kernels::cuda::GridMode::kLinear;
  p.padding = attrs.padding == ops::GridSamplePadding::kBorder       ? kernels::cuda::GridPadding::kBorder
              : attrs.padding == ops::GridSamplePadding::kReflection ? kernels::cuda::GridPadding::kReflection
                                                                     : kernels::cuda::GridPadding::kZeros;
  p.align_corners = attrs.align_corners;
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::GridSample(ToFloatType(x.dtype), ToFloatType(grid->dtype), x.data(),
                                                         grid->data(), out->data(), p, c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

}  // namespace

std::vector<DeviceRunnerDef> ResizeRunners() {
  return {
      {"Resize", SupportsResize, RunResize},
      {"GridSample", SupportsGridSample, RunGridSample},
  };
}

}  // namespace exec
