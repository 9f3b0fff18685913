// The vision ops and their type/shape inference: NonMaxSuppression (data-dependent output
// [selected, 3]), RoiAlign, MaxRoiPool, GridSample (N-d), LpPool and GlobalLpPool (shapes as
// AveragePool and GlobalAveragePool); and the parsers of ops/vision_attrs.h.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
#include "ops/vision_attrs.h"
#include "ops/window_attrs.h"

namespace ops {
namespace {

using ir::Dim;
using ir::DType;
using ir::Shape;
using ir::TensorType;
using Types = std::vector<TensorType>;

constexpr std::initializer_list<DType> kFloatTypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                                      DType::kFloat64};

Dim DimOf(const TensorType& t, size_t i) { return t.shape && t.shape->size() > i ? (*t.shape)[i] : Dim(); }

absl::Status ExpectSameDType(const InferContext& ctx, size_t i, size_t ref) {
  if (ctx.has_input(i) && ctx.type(i).dtype != ctx.type(ref).dtype) {
    return absl::InvalidArgumentError(absl::StrCat("input ", i, " has dtype ", ir::DTypeName(ctx.type(i).dtype),
                                                   ", input ", ref, " has ", ir::DTypeName(ctx.type(ref).dtype)));
  }
  return absl::OkStatus();
}

// A scalar or one-element input (when its shape is known).
absl::Status ExpectScalar(const InferContext& ctx, size_t i, const char* name) {
  if (!ctx.has_input(i) || !ctx.type(i).shape) return absl::OkStatus();
  const Shape& s = *ctx.type(i).shape;
  if (s.empty() || (s.size() == 1 && (!s[0].known() || s[0].value == 1))) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(name, " must be a scalar, got shape ", ir::ShapeToString(s)));
}

absl::StatusOr<Types> InferNonMaxSuppression(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = ExpectDType(ctx, 1, kFloatTypes); !s.ok()) return s;
  const int64_t center = ctx.attrs().GetInt("center_point_box", 0);
  if (center != 0 && center != 1) {
    return absl::InvalidArgumentError(absl::StrCat("center_point_box ", center, " is not 0 or 1"));
  }
  const TensorType &boxes = ctx.type(0), &scores = ctx.type(1);
  if (absl::Status s = ExpectDims(boxes, {DimOf(scores, 0), DimOf(scores, 2), Dim(4)}, "boxes"); !s.ok()) return s;
  if (absl::Status s = ExpectDims(scores, {DimOf(boxes, 0), DimOf(scores, 1), DimOf(boxes, 1)}, "scores"); !s.ok()) {
    return s;
  }
  if (ctx.has_input(2)) {
    if (absl::Status s = ExpectDType(ctx, 2, {DType::kInt64}); !s.ok()) return s;
  }
  for (size_t i : {3, 4}) {
    if (ctx.has_input(i)) {
      if (absl::Status s = ExpectDType(ctx, i, {DType::kFloat32}); !s.ok()) return s;
    }
  }
  const char* names[] = {"", "", "max_output_boxes_per_class", "iou_threshold", "score_threshold"};
  for (size_t i : {2, 3, 4}) {
    if (absl::Status s = ExpectScalar(ctx, i, names[i]); !s.ok()) return s;
  }
  return Types{TensorType{DType::kInt64, Shape{Dim(), Dim(3)}}};
}

// X [N, C, H, W] of a float dtype; returns its type.
absl::StatusOr<TensorType> ImageInput(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  const TensorType& x = ctx.type(0);
  if (x.shape && x.rank() != 4) return absl::InvalidArgumentError(absl::StrCat("X must be 4-D, got rank ", x.rank()));
  return x;
}

absl::StatusOr<Types> InferRoiAlign(const InferContext& ctx) {
  absl::StatusOr<RoiAlignAttrs> a = ParseRoiAlignAttrs(ctx.node);
  if (!a.ok()) return a.status();
  absl::StatusOr<TensorType> x = ImageInput(ctx);
  if (!x.ok()) return x.status();
  if (absl::Status s = ExpectDType(ctx, 1, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = ExpectSameDType(ctx, 1, 0); !s.ok()) return s;
  if (absl::Status s = ExpectDType(ctx, 2, {DType::kInt64, DType::kInt32}); !s.ok()) return s;
  const Dim rois = DimOf(ctx.type(1), 0).known() ? DimOf(ctx.type(1), 0) : DimOf(ctx.type(2), 0);
  if (absl::Status s = ExpectDims(ctx.type(1), {rois, Dim(4)}, "rois"); !s.ok()) return s;
  if (absl::Status s = ExpectDims(ctx.type(2), {rois}, "batch_indices"); !s.ok()) return s;
  return Types{TensorType{x->dtype, Shape{rois, DimOf(*x, 1), Dim(a->output_height), Dim(a->output_width)}}};
}

absl::StatusOr<Types> InferMaxRoiPool(const InferContext& ctx) {
  absl::StatusOr<MaxRoiPoolAttrs> a = ParseMaxRoiPoolAttrs(ctx.node);
  if (!a.ok()) return a.status();
  absl::StatusOr<TensorType> x = ImageInput(ctx);
  if (!x.ok()) return x.status();
  if (absl::Status s = ExpectDType(ctx, 1, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = ExpectSameDType(ctx, 1, 0); !s.ok()) return s;
  const Dim rois = DimOf(ctx.type(1), 0);
  if (absl::Status s = ExpectDims(ctx.type(1), {rois, Dim(5)}, "rois"); !s.ok()) return s;
  return Types{TensorType{x->dtype, Shape{rois, DimOf(*x, 1), Dim(a->pooled_height), Dim(a->pooled_width)}}};
}

absl::StatusOr<Types> InferGridSample(const InferContext& ctx) {
  absl::StatusOr<GridSampleAttrs> a = ParseGridSampleAttrs(ctx.node);
  if (!a.ok()) return a.status();
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = ExpectDType(ctx, 1, kFloatTypes); !s.ok()) return s;
  const TensorType &x = ctx.type(0), &grid = ctx.type(1);
  if (!x.shape) return Types{TensorType{x.dtype, std::nullopt}};
  if (x.rank() < 3) return absl::InvalidArgumentError(absl::StrCat("X must have rank >= 3, got ", x.rank()));
  Shape expected_grid(x.rank(), Dim());
  expected_grid.front() = DimOf(x, 0);
  expected_grid.back() = Dim(x.rank() - 2);
  if (absl::Status s = ExpectDims(grid, expected_grid, "grid"); !s.ok()) return s;
  Shape out = {DimOf(x, 0), DimOf(x, 1)};
  for (int64_t k = 1; k + 1 < x.rank(); ++k) out.push_back(DimOf(grid, k));
  return Types{TensorType{x.dtype, out}};
}

absl::StatusOr<Types> InferLpPool(const InferContext& ctx) {
  if (absl::StatusOr<int64_t> p = ParseLpPoolP(ctx.node); !p.ok()) return p.status();
  return FindOpDef(ctx.node.op_type == "LpPool" ? "AveragePool" : "GlobalAveragePool")->infer(ctx);
}

absl::StatusOr<int64_t> PositiveInt(const ir::Attributes& attrs, const char* name, int64_t default_value) {
  const int64_t v = attrs.GetInt(name, default_value);
  if (v <= 0 || v > kMaxWindowValue) return absl::InvalidArgumentError(absl::StrCat(name, " ", v, " out of range"));
  return v;
}

}  // namespace

absl::StatusOr<RoiAlignAttrs> ParseRoiAlignAttrs(const ir::Node& node) {
  RoiAlignAttrs a;
  const ir::Attributes& attrs = node.attrs;
  const std::string mode = attrs.GetString("mode", "avg");
  if (mode != "avg" && mode != "max") return absl::InvalidArgumentError(absl::StrCat("unknown mode \"", mode, "\""));
  a.max = mode == "max";
  const std::string ctm = attrs.GetString("coordinate_transformation_mode", "half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") {
    return absl::InvalidArgumentError(absl::StrCat("unknown coordinate_transformation_mode \"", ctm, "\""));
  }
  a.half_pixel = ctm == "half_pixel";
  absl::StatusOr<int64_t> h = PositiveInt(attrs, "output_height", 1);
  if (!h.ok()) return h.status();
  absl::StatusOr<int64_t> w = PositiveInt(attrs, "output_width", 1);
  if (!w.ok()) return w.status();
  a.output_height = *h;
  a.output_width = *w;
  a.sampling_ratio = attrs.GetInt("sampling_ratio", 0);
  if (a.sampling_ratio < 0 || a.sampling_ratio > kMaxWindowValue) {
    return absl::InvalidArgumentError(absl::StrCat("sampling_ratio ", a.sampling_ratio, " out of range"));
  }
  a.spatial_scale = attrs.GetFloat("spatial_scale", 1.0f);
  if (!std::isfinite(a.spatial_scale)) return absl::InvalidArgumentError("spatial_scale is not finite");
  return a;
}

absl::StatusOr<MaxRoiPoolAttrs> ParseMaxRoiPoolAttrs(const ir::Node& node) {
  MaxRoiPoolAttrs a;
  const std::vector<int64_t> shape = node.attrs.GetInts("pooled_shape");
  if (shape.size() != 2 || shape[0] <= 0 || shape[1] <= 0 || shape[0] > kMaxWindowValue || shape[1] > kMaxWindowValue) {
    return absl::InvalidArgumentError("pooled_shape must be 2 positive ints");
  }
  a.pooled_height = shape[0];
  a.pooled_width = shape[1];
  a.spatial_scale = node.attrs.GetFloat("spatial_scale", 1.0f);
  if (!std::isfinite(a.spatial_scale)) return absl::InvalidArgumentError("spatial_scale is not finite");
  return a;
}

absl::StatusOr<GridSampleAttrs> ParseGridSampleAttrs(const ir::Node& node) {
  GridSampleAttrs a;
  const std::string mode = node.attrs.GetString("mode", "linear");
  if (mode == "linear") {
    a.mode = GridSampleMode::kLinear;
  } else if (mode == "nearest") {
    a.mode = GridSampleMode::kNearest;
  } else if (mode == "cubic") {
    a.mode = GridSampleMode::kCubic;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown mode \"", mode, "\""));
  }
  const std::string padding = node.attrs.GetString("padding_mode", "zeros");
  if (padding == "zeros") {
    a.padding = GridSamplePadding::kZeros;
  } else if (padding == "border") {
    a.padding = GridSamplePadding::kBorder;
  } else if (padding == "reflection") {
    a.padding = GridSamplePadding::kReflection;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown padding_mode \"", padding, "\""));
  }
  a.align_corners = node.attrs.GetInt("align_corners", 0) != 0;
  return a;
}

absl::StatusOr<int64_t> ParseLpPoolP(const ir::Node& node) {
  const int64_t p = node.attrs.GetInt("p", 2);
  if (p < 1 || p > 1024) return absl::InvalidArgumentError(absl::StrCat("p ", p, " out of range [1, 1024]"));
  return p;
}

std::vector<OpDef> VisionOpDefs() {
  return {
      {"NonMaxSuppression", 2, 5, InferNonMaxSuppression},
      {"RoiAlign", 3, 3, InferRoiAlign},
      {"MaxRoiPool", 2, 2, InferMaxRoiPool},
      {"GridSample", 2, 2, InferGridSample},
      {"LpPool", 1, 1, InferLpPool},
      {"GlobalLpPool", 1, 1, InferLpPool},
  };
}

}  // namespace ops
