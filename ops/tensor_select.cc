// Type and shape inference of the selection ops: TopK, NonZero, Compress and Unique, and the
// parsing of their attributes (tensor_select_attrs.h). NonZero, Compress and Unique have
// data-dependent output sizes: an unknown dim unless the deciding input is a known value (NonZero's
// input, Compress's condition), in which case the size is exact and the node can fold.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
#include "ops/tensor_ops_util.h"
#include "ops/tensor_select_attrs.h"

namespace ops {

absl::StatusOr<TopKAttrs> ParseTopKAttrs(const ir::Attributes& attrs, int64_t rank) {
  TopKAttrs out;
  absl::StatusOr<int64_t> axis = NormalizeAxis(attrs.GetInt("axis", -1), rank);
  if (!axis.ok()) return axis.status();
  out.axis = *axis;
  out.largest = attrs.GetInt("largest", 1) != 0;
  out.sorted = attrs.GetInt("sorted", 1) != 0;
  return out;
}

absl::StatusOr<int64_t> TopKCount(const ir::Tensor& k) {
  if (k.num_elements() != 1 || k.dtype() != ir::DType::kInt64) {
    return absl::InvalidArgumentError("K must be one int64");
  }
  const int64_t value = k.GetAsInt64(0);
  if (value < 0) return absl::InvalidArgumentError(absl::StrCat("K is negative (", value, ")"));
  return value;
}

absl::StatusOr<UniqueAttrs> ParseUniqueAttrs(const ir::Attributes& attrs, int64_t rank) {
  UniqueAttrs out;
  out.sorted = attrs.GetInt("sorted", 1) != 0;
  if (attrs.Has("axis")) {
    absl::StatusOr<int64_t> axis = NormalizeAxis(attrs.GetInt("axis", 0), rank);
    if (!axis.ok()) return axis.status();
    out.axis = *axis;
  }
  return out;
}

absl::StatusOr<std::optional<int64_t>> ParseCompressAxis(const ir::Attributes& attrs, int64_t rank) {
  if (!attrs.Has("axis")) return std::optional<int64_t>();
  absl::StatusOr<int64_t> axis = NormalizeAxis(attrs.GetInt("axis", 0), rank);
  if (!axis.ok()) return axis.status();
  return std::optional<int64_t>(*axis);
}

namespace {

using ir::Dim;
using ir::DType;
using ir::Shape;
using ir::TensorType;
using Types = std::vector<TensorType>;
using tensor_ops::Invalid;
using tensor_ops::UnknownShape;

// ---- TopK ----

absl::StatusOr<Types> InferTopK(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 1, {DType::kInt64}); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  if (in.dtype == DType::kBool || !ir::IsSupportedDType(in.dtype) || in.dtype == DType::kBFloat16) {
    return Invalid(absl::StrCat("unsupported dtype ", ir::DTypeName(in.dtype)));
  }
  if (!in.shape) return Types{{in.dtype, std::nullopt}, {DType::kInt64, std::nullopt}};
  absl::StatusOr<TopKAttrs> attrs = ParseTopKAttrs(ctx.attrs(), in.rank());
  if (!attrs.ok()) return attrs.status();
  Shape out = *in.shape;
  out[attrs->axis] = Dim();
  if (ctx.value(1) != nullptr) {
    absl::StatusOr<int64_t> k = TopKCount(*ctx.value(1));
    if (!k.ok()) return k.status();
    const Dim& dim = (*in.shape)[attrs->axis];
    if (dim.known() && *k > dim.value) {
      return Invalid(absl::StrCat("K ", *k, " is larger than axis ", attrs->axis, " of size ", dim.value));
    }
    out[attrs->axis] = *k;
  }
  return Types{{in.dtype, out}, {DType::kInt64, out}};
}

// ---- NonZero ----

absl::StatusOr<Types> InferNonZero(const InferContext& ctx) {
  const TensorType& in = ctx.type(0);
  if (!ir::IsSupportedDType(in.dtype) || in.dtype == DType::kBFloat16) {
    return Invalid(absl::StrCat("unsupported dtype ", ir::DTypeName(in.dtype)));
  }
  Dim count;
  if (const ir::Tensor* v = ctx.value(0); v != nullptr) {
    int64_t n = 0;
    for (int64_t i = 0; i < v->num_elements(); ++i) n += v->GetAsDouble(i) != 0;
    count = n;
  }
  // A scalar is read as a one-element vector, as numpy does.
  const Dim rank = in.shape ? Dim(std::max<int64_t>(1, in.rank())) : Dim();
  return Types{{DType::kInt64, Shape{rank, count}}};
}

// ---- Compress ----

absl::StatusOr<Types> InferCompress(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 1, {DType::kBool}); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  const TensorType& cond = ctx.type(1);
  if (cond.shape && cond.rank() != 1) return Invalid(absl::StrCat("condition must be 1-D, has rank ", cond.rank()));
  if (!in.shape) return Types{{in.dtype, ctx.attrs().Has("axis") ? std::nullopt : std::optional<Shape>(Shape{Dim()})}};
  absl::StatusOr<std::optional<int64_t>> axis = ParseCompressAxis(ctx.attrs(), in.rank());
  if (!axis.ok()) return axis.status();
  // The selectable extent: the axis length, or the element count of the flattened input.
  std::optional<int64_t> extent;
  if (*axis) {
    if ((*in.shape)[**axis].known()) extent = (*in.shape)[**axis].value;
  } else if (std::optional<std::vector<int64_t>> dims = ir::ShapeToInts(*in.shape)) {
    extent = 1;
    for (int64_t d : *dims) *extent *= d;
  }
  Dim count;
  if (const ir::Tensor* c = ctx.value(1); c != nullptr && extent) {
    // Entries past the extent select nothing.
    const int64_t length = std::min(c->num_elements(), *extent);
    int64_t n = 0;
    for (int64_t i = 0; i < length; ++i) n += c->data<uint8_t>()[i] != 0;
    count = n;
  }
  if (!*axis) return Types{{in.dtype, Shape{count}}};
  Shape out = *in.shape;
  out[**axis] = count;
  return Types{{in.dtype, std::move(out)}};
}

// ---- Unique ----

absl::StatusOr<Types> InferUnique(const InferContext& ctx) {
  const TensorType& in = ctx.type(0);
  if (!ir::IsSupportedDType(in.dtype)) {  // bfloat16 since opset 28
    return Invalid(absl::StrCat("unsupported dtype ", ir::DTypeName(in.dtype)));
  }
  const TensorType vector{DType::kInt64, Shape{Dim()}};
  if (!in.shape) {
    const bool flat = !ctx.attrs().Has("axis");
    return Types{{in.dtype, flat ? std::optional<Shape>(Shape{Dim()}) : std::nullopt}, vector, vector, vector};
  }
  absl::StatusOr<UniqueAttrs> attrs = ParseUniqueAttrs(ctx.attrs(), in.rank());
  if (!attrs.ok()) return attrs.status();
  Shape y = Shape{Dim()};
  Dim items = Dim();  // the inverse indices: one per element, or one per slice along the axis
  if (attrs->axis) {
    y = *in.shape;
    y[*attrs->axis] = Dim();
    items = (*in.shape)[*attrs->axis];
  } else if (std::optional<std::vector<int64_t>> dims = ir::ShapeToInts(*in.shape)) {
    int64_t total = 1;
    for (int64_t d : *dims) total *= d;
    items = total;
  }
  return Types{{in.dtype, std::move(y)}, vector, {DType::kInt64, Shape{items}}, vector};
}

}  // namespace

std::vector<OpDef> TensorSelectOpDefs() {
  return {
      {"TopK", 2, 2, InferTopK},
      {"NonZero", 1, 1, InferNonZero},
      {"Compress", 2, 2, InferCompress},
      {"Unique", 1, 1, InferUnique},
  };
}

}  // namespace ops
