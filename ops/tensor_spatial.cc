// Type and shape inference of the spatial rearrangement ops: MaxUnpool, Col2Im and CenterCropPad,
// and the parsing of their attributes and geometry (tensor_spatial_attrs.h).
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
#include "ops/tensor_ops_util.h"
#include "ops/tensor_spatial_attrs.h"

namespace ops {

absl::StatusOr<Window> ParseMaxUnpoolWindow(const ir::Attributes& attrs, size_t spatial) {
  return ReadWindow(attrs, spatial, std::nullopt, /*require_kernel=*/true);
}

absl::StatusOr<int64_t> MaxUnpoolDim(const Window& window, size_t i, int64_t in) {
  if (in < 1 || in > (int64_t{1} << 36)) {
    return absl::InvalidArgumentError(absl::StrCat("spatial dim ", i, " of size ", in, " out of range"));
  }
  // Every window term is at most kMaxWindowValue (2^24) and in at most 2^36: no overflow.
  const int64_t out =
      (in - 1) * window.strides[i] + (*window.kernel)[i] - window.pads[i] - window.pads[i + window.strides.size()];
  if (out < 0) {
    return absl::InvalidArgumentError(absl::StrCat("spatial dim ", i, " of size ", in, " unpools to ", out));
  }
  return out;
}

absl::StatusOr<Col2ImGeometry> ParseCol2ImGeometry(const ir::Attributes& attrs, const std::vector<int64_t>& image,
                                                   const std::vector<int64_t>& block) {
  Col2ImGeometry g;
  const size_t spatial = image.size();
  if (spatial == 0 || block.size() != spatial) {
    return absl::InvalidArgumentError(absl::StrCat("image_shape [", absl::StrJoin(image, ","), "] and block_shape [",
                                                   absl::StrJoin(block, ","), "] must have one length >= 1"));
  }
  absl::StatusOr<std::vector<int64_t>> strides = ReadInts(attrs, "strides", spatial, 1, 1);
  if (!strides.ok()) return strides.status();
  absl::StatusOr<std::vector<int64_t>> dilations = ReadInts(attrs, "dilations", spatial, 1, 1);
  if (!dilations.ok()) return dilations.status();
  absl::StatusOr<std::vector<int64_t>> pads = ReadInts(attrs, "pads", 2 * spatial, 0, 0);
  if (!pads.ok()) return pads.status();
  g.strides = *std::move(strides);
  g.dilations = *std::move(dilations);
  g.pads = *std::move(pads);
  for (size_t i = 0; i < spatial; ++i) {
    if (block[i] < 1 || block[i] > kMaxWindowValue || image[i] < 0 || image[i] > (int64_t{1} << 36)) {
      return absl::InvalidArgumentError(
          absl::StrCat("image dim ", image[i], " or block dim ", block[i], " out of range"));
    }
    const int64_t extent = g.dilations[i] * (block[i] - 1) + 1;
    const int64_t padded = image[i] + g.pads[i] + g.pads[i + spatial];
    if (padded < extent) {
      return absl::InvalidArgumentError(
          absl::StrCat("block of extent ", extent, " does not fit padded image dim ", padded));
    }
    g.grid.push_back((padded - extent) / g.strides[i] + 1);
    g.block_size *= block[i];
    g.positions *= g.grid.back();
    if (g.block_size > (int64_t{1} << 36) || g.positions > (int64_t{1} << 36)) {
      return absl::InvalidArgumentError("Col2Im block or grid too large");
    }
  }
  g.image = image;
  g.block = block;
  return g;
}

absl::StatusOr<std::vector<int64_t>> ParseCenterCropPadAxes(const ir::Attributes& attrs, int64_t rank, int64_t count) {
  std::vector<int64_t> axes;
  if (attrs.Has("axes")) {
    absl::StatusOr<std::vector<int64_t>> norm = tensor_ops::NormalizeAxes(attrs.GetInts("axes"), rank);
    if (!norm.ok()) return norm.status();
    axes = *std::move(norm);
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (static_cast<int64_t>(axes.size()) != count) {
    return absl::InvalidArgumentError(absl::StrCat("shape has ", count, " entries for ", axes.size(), " axes"));
  }
  return axes;
}

namespace {

using ir::Dim;
using ir::DType;
using ir::Shape;
using ir::TensorType;
using Types = std::vector<TensorType>;
using tensor_ops::ExpectIndexInput;
using tensor_ops::IntsInput;
using tensor_ops::Invalid;
using tensor_ops::KnownLength;
using tensor_ops::One;
using tensor_ops::UnknownShape;

// ---- MaxUnpool ----

absl::StatusOr<Types> InferMaxUnpool(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
      !s.ok())
    return s;
  if (absl::Status s = ExpectDType(ctx, 1, {DType::kInt64}); !s.ok()) return s;
  if (absl::Status s = ExpectIndexInput(ctx, 2); !s.ok()) return s;
  const TensorType& x = ctx.type(0);
  if (!x.shape) return One(x.dtype, std::nullopt);
  if (x.rank() < 3) return Invalid(absl::StrCat("input must have rank >= 3, has ", x.rank()));
  absl::StatusOr<Window> window = ParseMaxUnpoolWindow(ctx.attrs(), x.rank() - 2);
  if (!window.ok()) return window.status();
  if (ctx.has_input(2)) {
    std::optional<std::vector<int64_t>> shape = IntsInput(ctx, 2);
    if (!shape) return One(x.dtype, UnknownShape(x.rank()));
    if (static_cast<int64_t>(shape->size()) != x.rank()) return Invalid("output_shape must have the input's rank");
    for (int64_t d : *shape) {
      if (d < 0) return Invalid(absl::StrCat("output_shape has negative dim ", d));
    }
    return One(x.dtype, ir::ShapeFromInts(*shape));
  }
  Shape out = {(*x.shape)[0], (*x.shape)[1]};
  for (int64_t i = 2; i < x.rank(); ++i) {
    const Dim& d = (*x.shape)[i];
    if (!d.known()) {
      out.push_back(Dim());
      continue;
    }
    absl::StatusOr<int64_t> o = MaxUnpoolDim(*window, i - 2, d.value);
    if (!o.ok()) return o.status();
    out.push_back(*o);
  }
  return One(x.dtype, std::move(out));
}

// ---- Col2Im ----

absl::StatusOr<Types> InferCol2Im(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 1, {DType::kInt64}); !s.ok()) return s;
  if (absl::Status s = ExpectDType(ctx, 2, {DType::kInt64}); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  if (in.shape && in.rank() != 3) return Invalid(absl::StrCat("input must have rank 3, has ", in.rank()));
  std::optional<std::vector<int64_t>> image = IntsInput(ctx, 1), block = IntsInput(ctx, 2);
  if (!image || !block) {
    const int64_t n = KnownLength(ctx, 1);
    return One(in.dtype, n >= 0 ? std::optional<Shape>(UnknownShape(n + 2)) : std::nullopt);
  }
  absl::StatusOr<Col2ImGeometry> g = ParseCol2ImGeometry(ctx.attrs(), *image, *block);
  if (!g.ok()) return g.status();
  Shape out = {Dim(), Dim()};
  if (in.shape) {
    const Dim &cb = (*in.shape)[1], &l = (*in.shape)[2];
    if (cb.known() && cb.value % g->block_size != 0) {
      return Invalid(absl::StrCat("input dim 1 (", cb.value, ") is not a multiple of the block size ", g->block_size));
    }
    if (l.known() && l.value != g->positions) {
      return Invalid(absl::StrCat("input dim 2 (", l.value, ") is not the number of blocks ", g->positions));
    }
    out = {(*in.shape)[0], FloorDiv(cb, g->block_size)};
  }
  for (int64_t d : *image) out.push_back(d);
  return One(in.dtype, std::move(out));
}

// ---- CenterCropPad ----

absl::StatusOr<Types> InferCenterCropPad(const InferContext& ctx) {
  if (absl::Status s = ExpectIndexInput(ctx, 1); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  std::optional<std::vector<int64_t>> sizes = IntsInput(ctx, 1);
  if (!in.shape) return One(in.dtype, std::nullopt);
  if (!sizes) return One(in.dtype, UnknownShape(in.rank()));
  absl::StatusOr<std::vector<int64_t>> axes = ParseCenterCropPadAxes(ctx.attrs(), in.rank(), sizes->size());
  if (!axes.ok()) return axes.status();
  Shape out = *in.shape;
  for (size_t i = 0; i < axes->size(); ++i) {
    if ((*sizes)[i] < 0) return Invalid(absl::StrCat("negative size ", (*sizes)[i]));
    out[(*axes)[i]] = (*sizes)[i];
  }
  return One(in.dtype, std::move(out));
}

}  // namespace

std::vector<OpDef> TensorSpatialOpDefs() {
  return {
      {"MaxUnpool", 2, 3, InferMaxUnpool},
      {"Col2Im", 3, 3, InferCol2Im},
      {"CenterCropPad", 2, 2, InferCenterCropPad},
  };
}

}  // namespace ops
