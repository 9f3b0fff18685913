// Type and shape inference of Resize (canonical form: X, roi?, scales?, sizes?; opset-13
// attributes), part of the reduce_resize op family.
#include "ops/reduce_resize_resize.h"

#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::DType;

constexpr size_t kRoi = 1, kScales = 2, kSizes = 3;

bool OneOf(const std::string& value, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed) {
    if (value == a) return true;
  }
  return false;
}

absl::Status CheckAttributes(const InferContext& ctx) {
  const ir::Attributes& attrs = ctx.attrs();
  const std::string mode = attrs.GetString("mode", "nearest");
  if (!OneOf(mode, {"nearest", "linear", "cubic"})) {
    return absl::InvalidArgumentError(absl::StrCat("unknown mode \"", mode, "\""));
  }
  const std::string ctm = attrs.GetString("coordinate_transformation_mode", "half_pixel");
  if (!OneOf(ctm, {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize",
                   "tf_half_pixel_for_nn", "half_pixel_symmetric"})) {
    return absl::InvalidArgumentError(absl::StrCat("unknown coordinate_transformation_mode \"", ctm, "\""));
  }
  const std::string nearest = attrs.GetString("nearest_mode", "round_prefer_floor");
  // "simple": what the importer writes for Upsample and Resize-10 (opset < 11), never a model's own.
  const bool simple = nearest == "simple" && ctx.node.opset < 11;
  if (!simple && !OneOf(nearest, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})) {
    return absl::InvalidArgumentError(absl::StrCat("unknown nearest_mode \"", nearest, "\""));
  }
  const int64_t antialias = attrs.GetInt("antialias", 0);
  if (antialias != 0 && antialias != 1) {
    return absl::InvalidArgumentError(absl::StrCat("antialias must be 0 or 1, got ", antialias));
  }
  const std::string policy = attrs.GetString("keep_aspect_ratio_policy", "stretch");
  if (!OneOf(policy, {"stretch", "not_larger", "not_smaller"})) {
    return absl::InvalidArgumentError(absl::StrCat("unknown keep_aspect_ratio_policy \"", policy, "\""));
  }
  const DType dtype = ctx.type(0).dtype;
  if (!ir::IsFloatingPoint(dtype)) {
    if (dtype != DType::kInt8 && dtype != DType::kUint8 && dtype != DType::kInt32 && dtype != DType::kInt64) {
      return absl::InvalidArgumentError(absl::StrCat("input has unsupported dtype ", ir::DTypeName(dtype)));
    }
    if (mode != "nearest") {
      return absl::InvalidArgumentError(
          absl::StrCat("mode \"", mode, "\" needs a floating-point ", "input, got ", ir::DTypeName(dtype)));
    }
  }
  return absl::OkStatus();
}

// What is known of an optional 1-D input (scales or sizes).
struct VectorInput {
  bool present = false;                       // given and not known to be empty
  std::optional<std::vector<double>> values;  // when known
  int64_t length = -1;                        // when known
};

absl::StatusOr<VectorInput> ReadVectorInput(const InferContext& ctx, size_t i, const char* name, bool want_float) {
  VectorInput in;
  if (!ctx.has_input(i)) return in;
  const DType dtype = ctx.type(i).dtype;
  if (want_float ? !ir::IsFloatingPoint(dtype) : dtype != DType::kInt64) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be ", want_float ? "float" : "int64", ", got ", ir::DTypeName(dtype)));
  }
  if (ctx.type(i).rank() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(name, " must be 1-D"));
  }
  if (const ir::Tensor* value = ctx.value(i)) {
    in.length = value->num_elements();
    in.values.emplace();
    for (int64_t k = 0; k < in.length; ++k) in.values->push_back(value->GetAsDouble(k));
  } else if (ctx.type(i).rank() == 1 && (*ctx.type(i).shape)[0].known()) {
    in.length = (*ctx.type(i).shape)[0].value;
  }
  in.present = in.length != 0;
  return in;
}

absl::Status CheckLength(const VectorInput& v, int64_t count, const char* name) {
  if (v.present && v.length >= 0 && count >= 0 && v.length != count) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has ", v.length, " elements, expected one per resized axis (", count, ")"));
  }
  return absl::OkStatus();
}

// `rank` here is the number of resized axes (the input rank unless `axes` is given).
absl::Status CheckRoi(const InferContext& ctx, int64_t rank) {
  if (ctx.attrs().GetString("coordinate_transformation_mode", "") != "tf_crop_and_resize") {
    return absl::OkStatus();
  }
  if (!ctx.has_input(kRoi)) {
    return absl::InvalidArgumentError("tf_crop_and_resize needs the roi input");
  }
  const ir::Tensor* roi = ctx.value(kRoi);
  if (roi != nullptr && rank >= 0 && roi->num_elements() != 2 * rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("roi has ", roi->num_elements(), " elements, expected 2 * rank = ", 2 * rank));
  }
  return absl::OkStatus();
}

// ResizedLength, or the input dim itself for scale 1 (keeps symbolic dims).
absl::StatusOr<ir::Dim> ScaledDim(const ir::Dim& in, double scale) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    return absl::InvalidArgumentError(absl::StrCat("scales must be positive, got ", scale));
  }
  if (scale == 1.0) return in;
  if (!in.known()) return ir::Dim();
  const double out = ResizedLength(in.value, scale);
  if (out > static_cast<double>(int64_t{1} << 50)) {
    return absl::InvalidArgumentError(absl::StrCat("scale ", scale, " gives a too large dim"));
  }
  return ir::Dim(static_cast<int64_t>(out));
}

absl::Status CheckSize(double size, const ir::Dim& in) {
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat("negative size ", size));
  if (size > static_cast<double>(int64_t{1} << 50)) {  // the bound ScaledDim uses
    return absl::InvalidArgumentError(absl::StrCat("size ", size, " is too large"));
  }
  if (in.known() && in.value == 0 && size > 0) {
    return absl::InvalidArgumentError("cannot resize an empty dimension to a non-empty one");
  }
  return absl::OkStatus();
}

// Sizes under keep_aspect_ratio_policy "not_larger"/"not_smaller": every listed axis' input
// length must be known for its output length to be.
absl::Status FitKnownSizes(const ir::Attributes& attrs, const ir::Shape& in, const std::vector<int64_t>& axes,
                           const std::vector<double>& sizes, ir::Shape& out) {
  std::vector<int64_t> in_lengths, size_values;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (!in[axes[i]].known()) return absl::OkStatus();  // the listed dims stay unknown
    in_lengths.push_back(in[axes[i]].value);
    size_values.push_back(static_cast<int64_t>(sizes[i]));
  }
  absl::StatusOr<AspectFit> fit = FitSizes(attrs, in_lengths, size_values);
  if (!fit.ok()) return fit.status();
  for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = ir::Dim(fit->lengths[i]);
  return absl::OkStatus();
}

// The input's dims, with each listed axis resized (unknown where scales/sizes are not known).
// (keep_aspect_ratio_policy only speaks of sizes: scales are used as given, as ONNX's reference does.)
absl::StatusOr<ir::Shape> OutputShape(const ir::Attributes& attrs, const ir::Shape& in,
                                      const std::vector<int64_t>& axes, const VectorInput& scales,
                                      const VectorInput& sizes) {
  ir::Shape out = in;
  for (int64_t d : axes) out[d] = ir::Dim();
  const bool stretch = attrs.GetString("keep_aspect_ratio_policy", "stretch") == "stretch";
  if (sizes.present && sizes.values) {
    for (size_t i = 0; i < axes.size(); ++i) {
      if (absl::Status st = CheckSize((*sizes.values)[i], in[axes[i]]); !st.ok()) return st;
      if (stretch) out[axes[i]] = ir::Dim(static_cast<int64_t>((*sizes.values)[i]));
    }
    if (!stretch) {
      if (absl::Status st = FitKnownSizes(attrs, in, axes, *sizes.values, out); !st.ok()) return st;
    }
  } else if (!sizes.present && scales.values) {
    for (size_t i = 0; i < axes.size(); ++i) {
      absl::StatusOr<ir::Dim> dim = ScaledDim(in[axes[i]], (*scales.values)[i]);
      if (!dim.ok()) return dim.status();
      out[axes[i]] = *dim;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<ir::TensorType>> InferResize(const InferContext& ctx) {
  if (!ctx.has_input(0)) return absl::InvalidArgumentError("input X is missing");
  if (absl::Status st = CheckAttributes(ctx); !st.ok()) return st;
  absl::StatusOr<VectorInput> scales = ReadVectorInput(ctx, kScales, "scales", true);
  if (!scales.ok()) return scales.status();
  absl::StatusOr<VectorInput> sizes = ReadVectorInput(ctx, kSizes, "sizes", false);
  if (!sizes.ok()) return sizes.status();
  if (scales->present && scales->length > 0 && sizes->present) {
    return absl::InvalidArgumentError("only one of scales and sizes may be given");
  }
  if (!scales->present && !sizes->present) {
    return absl::InvalidArgumentError("one of scales and sizes is required");
  }
  if (sizes->present) scales->values.reset();  // an unknown-length scales must then be empty

  const ir::TensorType& x = ctx.type(0);
  int64_t rank = x.rank();
  if (rank < 0 && !ctx.attrs().Has("axes")) rank = sizes->present ? sizes->length : scales->length;
  ir::TensorType out{x.dtype, std::nullopt};
  if (rank < 0) return std::vector<ir::TensorType>(ctx.num_outputs(), out);
  absl::StatusOr<std::vector<int64_t>> axes = ResizeAxes(ctx.attrs(), rank);
  if (!axes.ok()) return axes.status();
  const int64_t count = static_cast<int64_t>(axes->size());
  for (const auto& [v, name] : {std::pair{&*scales, "scales"}, std::pair{&*sizes, "sizes"}}) {
    if (absl::Status st = CheckLength(*v, count, name); !st.ok()) return st;
  }
  if (absl::Status st = CheckRoi(ctx, count); !st.ok()) return st;
  absl::StatusOr<ir::Shape> shape =
      OutputShape(ctx.attrs(), x.shape ? *x.shape : ir::Shape(rank), *axes, *scales, *sizes);
  if (!shape.ok()) return shape.status();
  out.shape = *shape;
  return std::vector<ir::TensorType>(ctx.num_outputs(), out);
}

double ResizedLength(int64_t in, double scale) {
  return std::floor(static_cast<double>(static_cast<float>(in) * static_cast<float>(scale)));
}

absl::StatusOr<std::vector<int64_t>> ResizeAxes(const ir::Attributes& attrs, int64_t rank) {
  std::vector<int64_t> axes;
  if (!attrs.Has("axes")) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
  }
  std::vector<bool> seen(rank, false);
  for (int64_t axis : attrs.GetInts("axes")) {
    if (axis < -rank || axis >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("axes value ", axis, " is out of range for rank ", rank));
    }
    if (axis < 0) axis += rank;
    if (seen[axis]) return absl::InvalidArgumentError(absl::StrCat("axes lists axis ", axis, " twice"));
    seen[axis] = true;
    axes.push_back(axis);
  }
  return axes;
}

absl::StatusOr<AspectFit> FitSizes(const ir::Attributes& attrs, const std::vector<int64_t>& in_lengths,
                                   const std::vector<int64_t>& sizes) {
  AspectFit fit;
  const std::string policy = attrs.GetString("keep_aspect_ratio_policy", "stretch");
  if (policy == "stretch") {
    for (size_t i = 0; i < sizes.size(); ++i) {
      fit.scales.push_back(in_lengths[i] > 0 ? static_cast<double>(sizes[i]) / static_cast<double>(in_lengths[i])
                                             : 1.0);
    }
    fit.lengths = sizes;
    return fit;
  }
  std::optional<double> scale;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (in_lengths[i] <= 0) continue;  // an empty axis stays empty whatever the scale
    const double s = static_cast<double>(sizes[i]) / static_cast<double>(in_lengths[i]);
    if (!scale || (policy == "not_larger" ? s < *scale : s > *scale)) scale = s;
  }
  const double common = scale.value_or(1.0);
  for (int64_t in : in_lengths) {
    const double length = std::floor(common * static_cast<double>(in) + 0.5);
    if (length > static_cast<double>(int64_t{1} << 50)) {
      return absl::InvalidArgumentError(absl::StrCat("keep_aspect_ratio_policy gives a too large dim ", length));
    }
    fit.scales.push_back(common);
    fit.lengths.push_back(static_cast<int64_t>(length));
  }
  return fit;
}

}  // namespace ops
