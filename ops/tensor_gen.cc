// Type and shape inference of the generator ops, whose output is built from sizes and attributes
// more than from input data: ConstantOfShape, Range, EyeLike, Tile, Trilu, Size, OneHot and the
// window functions (HannWindow, HammingWindow, BlackmanWindow). Output sizes that come from input
// values are exact when those values are known (constants, or every input at run time) and
// unknown dims otherwise.
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
#include "ops/tensor_gen_attrs.h"
#include "ops/tensor_ops_util.h"

namespace ops {
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

// An error unless input i is present and holds one element where its shape is known.
absl::Status ExpectScalarInput(const InferContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i)) return Invalid(absl::StrCat(what, " is missing"));
  return ExpectScalarLike(ctx, i, what);
}

// ---- ConstantOfShape ----

absl::StatusOr<Types> InferConstantOfShape(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kInt64}); !s.ok()) return s;
  absl::StatusOr<ir::Tensor> value = ParseConstantOfShapeValue(ctx.attrs());
  if (!value.ok()) return value.status();
  if (ctx.type(0).rank() > 1) return Invalid("shape input must be 1-D");
  std::optional<std::vector<int64_t>> dims = IntsInput(ctx, 0);
  if (!dims) {
    const int64_t n = KnownLength(ctx, 0);
    return One(value->dtype(), n >= 0 ? std::optional<Shape>(UnknownShape(n)) : std::nullopt);
  }
  for (int64_t d : *dims) {
    if (d < 0) return Invalid(absl::StrCat("negative dim ", d, " in shape"));
  }
  return One(value->dtype(), ir::ShapeFromInts(*dims));
}

// ---- Range ----

absl::StatusOr<Types> InferRange(const InferContext& ctx) {
  const char* names[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i) {
    if (absl::Status s = ExpectScalarInput(ctx, i, names[i]); !s.ok()) return s;
    if (absl::Status s = ExpectDType(ctx, i,
                                     {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                      DType::kInt16, DType::kInt32, DType::kInt64});
        !s.ok()) {
      return s;
    }
    if (ctx.type(i).dtype != ctx.type(0).dtype) return Invalid("start, limit and delta must have one dtype");
  }
  if (ctx.value(0) == nullptr || ctx.value(1) == nullptr || ctx.value(2) == nullptr) {
    return One(ctx.type(0).dtype, Shape{Dim()});
  }
  absl::StatusOr<int64_t> count = RangeCount(*ctx.value(0), *ctx.value(1), *ctx.value(2));
  if (!count.ok()) return count.status();
  return One(ctx.type(0).dtype, Shape{*count});
}

// ---- EyeLike ----

absl::StatusOr<Types> InferEyeLike(const InferContext& ctx) {
  absl::StatusOr<EyeLikeAttrs> attrs = ParseEyeLikeAttrs(ctx.attrs(), ctx.type(0).dtype);
  if (!attrs.ok()) return attrs.status();
  const TensorType& in = ctx.type(0);
  if (in.shape && in.rank() != 2) return Invalid(absl::StrCat("input must be 2-D, has rank ", in.rank()));
  return One(attrs->dtype, in.shape ? *in.shape : UnknownShape(2));
}

// ---- Tile ----

absl::StatusOr<Types> InferTile(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 1, {DType::kInt64}); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  std::optional<std::vector<int64_t>> repeats = IntsInput(ctx, 1);
  if (!repeats) return One(in.dtype, in.shape ? std::optional<Shape>(UnknownShape(in.rank())) : std::nullopt);
  for (int64_t r : *repeats) {
    if (r < 0) return Invalid(absl::StrCat("negative repeat ", r));
  }
  if (!in.shape) return One(in.dtype, UnknownShape(repeats->size()));
  if (static_cast<int64_t>(repeats->size()) != in.rank()) {
    return Invalid(absl::StrCat("repeats has ", repeats->size(), " entries for input rank ", in.rank()));
  }
  Shape out;
  for (size_t i = 0; i < repeats->size(); ++i) {
    const Dim& d = (*in.shape)[i];
    int64_t product = 0;
    if (d.known() && (__builtin_mul_overflow(d.value, (*repeats)[i], &product) || product > ir::kMaxTensorBytes)) {
      return Invalid(absl::StrCat("tiling dim ", d.value, " by ", (*repeats)[i], " is too large"));
    }
    out.push_back((*repeats)[i] == 1 ? d : d * Dim((*repeats)[i]));
  }
  return One(in.dtype, std::move(out));
}

// ---- Trilu ----

absl::StatusOr<Types> InferTrilu(const InferContext& ctx) {
  const TensorType& in = ctx.type(0);
  if (in.shape && in.rank() < 2) return Invalid(absl::StrCat("input must have rank >= 2, has ", in.rank()));
  if (ctx.has_input(1)) {
    if (absl::Status s = ExpectDType(ctx, 1, {DType::kInt64}); !s.ok()) return s;
    if (absl::Status s = ExpectScalarInput(ctx, 1, "k"); !s.ok()) return s;
  }
  return One(in.dtype, in.shape);
}

// ---- Size ----

absl::StatusOr<Types> InferSize(const InferContext&) { return One(DType::kInt64, Shape{}); }

// ---- OneHot ----

absl::StatusOr<Types> InferOneHot(const InferContext& ctx) {
  if (absl::Status s = ExpectScalarInput(ctx, 1, "depth"); !s.ok()) return s;
  const TensorType& values = ctx.type(2);
  if (values.shape && (values.rank() != 1 || ((*values.shape)[0].known() && (*values.shape)[0].value != 2))) {
    return Invalid(absl::StrCat("values must have shape [2], has ", ir::ShapeToString(*values.shape)));
  }
  const TensorType& indices = ctx.type(0);
  if (indices.dtype == DType::kBool || !ir::IsSupportedDType(indices.dtype)) {
    return Invalid(absl::StrCat("indices have unsupported dtype ", ir::DTypeName(indices.dtype)));
  }
  if (!indices.shape) return One(values.dtype, std::nullopt);
  const int64_t rank = indices.rank() + 1;
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", -1), rank);
  if (!axis.ok()) return axis.status();
  Dim depth;
  if (ctx.value(1) != nullptr) {
    absl::StatusOr<int64_t> d = OneHotDepth(*ctx.value(1));
    if (!d.ok()) return d.status();
    depth = *d;
  }
  Shape out = *indices.shape;
  out.insert(out.begin() + *axis, depth);
  return One(values.dtype, std::move(out));
}

// ---- HannWindow, HammingWindow, BlackmanWindow ----

absl::StatusOr<Types> InferWindowFn(const InferContext& ctx) {
  absl::StatusOr<WindowFnAttrs> attrs = ParseWindowFnAttrs(ctx.attrs());
  if (!attrs.ok()) return attrs.status();
  if (absl::Status s = ExpectIndexInput(ctx, 0); !s.ok()) return s;
  if (absl::Status s = ExpectScalarInput(ctx, 0, "size"); !s.ok()) return s;
  if (ctx.value(0) == nullptr) return One(attrs->dtype, Shape{Dim()});
  absl::StatusOr<int64_t> n = WindowLength(*ctx.value(0));
  if (!n.ok()) return n.status();
  return One(attrs->dtype, Shape{*n});
}

}  // namespace

std::vector<OpDef> TensorGenOpDefs() {
  return {
      {"ConstantOfShape", 1, 1, InferConstantOfShape},
      {"Range", 3, 3, InferRange},
      {"EyeLike", 1, 1, InferEyeLike},
      {"Tile", 2, 2, InferTile},
      {"Trilu", 1, 2, InferTrilu},
      {"Size", 1, 1, InferSize, /*takes_non_tensors=*/false, /*takes_strings=*/true},  // reads only the shape
      {"OneHot", 3, 3, InferOneHot},
      {"HannWindow", 1, 1, InferWindowFn},
      {"HammingWindow", 1, 1, InferWindowFn},
      {"BlackmanWindow", 1, 1, InferWindowFn},
  };
}

}  // namespace ops
