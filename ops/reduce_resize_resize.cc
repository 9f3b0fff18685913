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
  if (!OneOf(nearest, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})) {
    return absl::InvalidArgumentError(absl::StrCat("unknown nearest_mode \"", nearest, "\""));
  }
  if (attrs.GetInt("antialias", 0) != 0) {
    return absl::UnimplementedError("Resize antialias is not supported");
  }
  if (attrs.Has("axes")) return absl::UnimplementedError("Resize axes is not supported");
  if (attrs.GetString("keep_aspect_ratio_policy", "stretch") != "stretch") {
    return absl::UnimplementedError("Resize keep_aspect_ratio_policy is not supported");
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

absl::Status CheckLength(const VectorInput& v, int64_t rank, const char* name) {
  if (v.present && v.length >= 0 && rank >= 0 && v.length != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has ", v.length, " elements, expected the input rank ", rank));
  }
  return absl::OkStatus();
}

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

// floor(in * scale), or the input dim itself for scale 1 (keeps symbolic dims).
absl::StatusOr<ir::Dim> ScaledDim(const ir::Dim& in, double scale) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    return absl::InvalidArgumentError(absl::StrCat("scales must be positive, got ", scale));
  }
  if (scale == 1.0) return in;
  if (!in.known()) return ir::Dim();
  const double out = std::floor(static_cast<double>(in.value) * scale);
  if (out > static_cast<double>(int64_t{1} << 50)) {
    return absl::InvalidArgumentError(absl::StrCat("scale ", scale, " gives a too large dim"));
  }
  return ir::Dim(static_cast<int64_t>(out));
}

absl::StatusOr<ir::Shape> OutputShape(const std::optional<ir::Shape>& in_shape, int64_t rank, const VectorInput& scales,
                                      const VectorInput& sizes) {
  ir::Shape out(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes.present) {
      if (!sizes.values) continue;
      const double size = (*sizes.values)[d];
      if (size < 0) return absl::InvalidArgumentError(absl::StrCat("negative size ", size));
      if (size > static_cast<double>(int64_t{1} << 50)) {  // the bound ScaledDim uses
        return absl::InvalidArgumentError(absl::StrCat("size ", size, " is too large"));
      }
      if (in_shape && (*in_shape)[d].known() && (*in_shape)[d].value == 0 && size > 0) {
        return absl::InvalidArgumentError("cannot resize an empty dimension to a non-empty one");
      }
      out[d] = ir::Dim(static_cast<int64_t>(size));
    } else if (scales.values) {
      absl::StatusOr<ir::Dim> dim = ScaledDim(in_shape ? (*in_shape)[d] : ir::Dim(), (*scales.values)[d]);
      if (!dim.ok()) return dim.status();
      out[d] = *dim;
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
  if (rank < 0) rank = sizes->present ? sizes->length : scales->length;
  for (const auto& [v, name] : {std::pair{&*scales, "scales"}, std::pair{&*sizes, "sizes"}}) {
    if (absl::Status st = CheckLength(*v, rank, name); !st.ok()) return st;
  }
  if (absl::Status st = CheckRoi(ctx, rank); !st.ok()) return st;

  ir::TensorType out{x.dtype, std::nullopt};
  if (rank >= 0) {
    absl::StatusOr<ir::Shape> shape = OutputShape(x.shape, rank, *scales, *sizes);
    if (!shape.ok()) return shape.status();
    out.shape = *shape;
  }
  return std::vector<ir::TensorType>(ctx.num_outputs(), out);
}

}  // namespace ops
