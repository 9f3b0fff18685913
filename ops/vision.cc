// The vision ops and their type/shape inference: NonMaxSuppression (data-dependent output
// [selected, 3]), RoiAlign, MaxRoiPool, GridSample (N-d), AffineGrid, LpPool and GlobalLpPool
// (shapes as AveragePool and GlobalAveragePool); and the parsers of ops/vision_attrs.h.
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

// grid [N, D1..Dr, r]: every dim when size is known, else N from theta and r from either input.
absl::StatusOr<Types> InferAffineGrid(const InferContext& ctx) {
  if (absl::StatusOr<bool> a = ParseFlagAttribute(ctx.node, "align_corners", false); !a.ok()) return a.status();
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = ExpectDType(ctx, 1, {DType::kInt64}); !s.ok()) return s;
  const TensorType &theta = ctx.type(0), &size = ctx.type(1);
  if (theta.shape && theta.rank() != 3) {
    return absl::InvalidArgumentError(absl::StrCat("theta must have rank 3, got ", theta.rank()));
  }
  if (size.shape && size.rank() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("size must have rank 1, got ", size.rank()));
  }
  if (const ir::Tensor* value = ctx.value(1); value != nullptr && theta.shape && ir::ShapeToInts(*theta.shape)) {
    absl::StatusOr<AffineGridExtents> e = AffineGridExtentsOf(ctx.node, *ir::ShapeToInts(*theta.shape), *value);
    if (!e.ok()) return e.status();
    Shape out = {Dim(e->batch)};
    for (int64_t d : e->spatial) out.push_back(Dim(d));
    out.push_back(Dim(static_cast<int64_t>(e->spatial.size())));
    return Types{TensorType{theta.dtype, out}};
  }
  Dim r = DimOf(theta, 1);  // 2 or 3 spatial dims
  if (const Dim n = DimOf(size, 0); n.known()) {
    if (n.value != 4 && n.value != 5) {
      return absl::InvalidArgumentError(absl::StrCat("size must hold 4 (2-D) or 5 (3-D) values, not ", n.value));
    }
    if (r.known() && r.value != n.value - 2) {
      return absl::InvalidArgumentError(absl::StrCat("theta ", ir::ShapeToString(*theta.shape), " does not fit ",
                                                     n.value - 2, "-D sizes (it must be [N, ", n.value - 2, ", ",
                                                     n.value - 1, "])"));
    }
    r = Dim(n.value - 2);
  }
  if (!r.known()) return Types{TensorType{theta.dtype, std::nullopt}};
  if (r.value != 2 && r.value != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("theta must be [N, 2, 3] or [N, 3, 4], got ", ir::ShapeToString(*theta.shape)));
  }
  if (absl::Status s = ExpectDims(theta, {DimOf(theta, 0), r, Dim(r.value + 1)}, "theta"); !s.ok()) return s;
  Shape out(static_cast<size_t>(r.value + 2), Dim());
  out.front() = DimOf(theta, 0);
  out.back() = r;
  return Types{TensorType{theta.dtype, out}};
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

absl::StatusOr<AffineGridExtents> AffineGridExtentsOf(const ir::Node& node, const std::vector<int64_t>& theta_dims,
                                                      const ir::Tensor& size) {
  AffineGridExtents e;
  absl::StatusOr<bool> align_corners = ParseFlagAttribute(node, "align_corners", false);
  if (!align_corners.ok()) return align_corners.status();
  e.align_corners = *align_corners;
  if (size.dtype() != DType::kInt64 || size.rank() != 1 || (size.num_elements() != 4 && size.num_elements() != 5)) {
    return absl::InvalidArgumentError(
        absl::StrCat("size must be int64 [4] (N, C, H, W) or [5] (N, C, D, H, W), got ", size.Describe()));
  }
  const std::vector<int64_t> values = size.ToInt64Vector();
  const int64_t r = static_cast<int64_t>(values.size()) - 2;
  if (theta_dims != std::vector<int64_t>{theta_dims.empty() ? 0 : theta_dims[0], r, r + 1}) {
    return absl::InvalidArgumentError(absl::StrCat("theta ", ir::ShapeToString(theta_dims), " does not fit ", r,
                                                   "-D sizes (it must be [N, ", r, ", ", r + 1, "])"));
  }
  e.batch = theta_dims[0];
  if (values[0] != e.batch) {
    return absl::InvalidArgumentError(
        absl::StrCat("size gives N = ", values[0], " but theta holds ", e.batch, " matrices"));
  }
  for (int64_t v : values) {
    if (v < 0) {
      return absl::InvalidArgumentError(absl::StrCat("size ", ir::ShapeToString(values), " has a negative value"));
    }
  }
  e.spatial.assign(values.begin() + 2, values.end());
  return e;
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
      {"AffineGrid", 2, 2, InferAffineGrid},
      {"LpPool", 1, 1, InferLpPool},
      {"GlobalLpPool", 1, 1, InferLpPool},
  };
}

}  // namespace ops
