// Type and shape inference of the index-driven data movement ops: GatherElements, GatherND,
// ScatterElements (Scatter of opset 9-10 is canonicalised to it), ScatterND, SpaceToDepth and
// ReverseSequence, and the parsing of their attributes (tensor_scatter_attrs.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
#include "ops/tensor_ops_util.h"
#include "ops/tensor_scatter_attrs.h"

namespace ops {

absl::StatusOr<ScatterReduction> ParseScatterReduction(const ir::Attributes& attrs) {
  const std::string r = attrs.GetString("reduction", "none");
  if (r == "none") return ScatterReduction::kNone;
  if (r == "add") return ScatterReduction::kAdd;
  if (r == "mul") return ScatterReduction::kMul;
  if (r == "max") return ScatterReduction::kMax;
  if (r == "min") return ScatterReduction::kMin;
  return absl::InvalidArgumentError(absl::StrCat("unknown reduction '", r, "'"));
}

absl::StatusOr<int64_t> ParseGatherNDBatchDims(const ir::Attributes& attrs, int64_t data_rank, int64_t indices_rank) {
  const int64_t b = attrs.GetInt("batch_dims", 0);
  if (b < 0 || b >= data_rank || b >= indices_rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_dims ", b, " out of range for data rank ", data_rank, " and indices rank ", indices_rank));
  }
  return b;
}

absl::StatusOr<ReverseSequenceAttrs> ParseReverseSequenceAttrs(const ir::Attributes& attrs) {
  ReverseSequenceAttrs out;
  out.time_axis = attrs.GetInt("time_axis", 0);
  out.batch_axis = attrs.GetInt("batch_axis", 1);
  const bool ok = (out.time_axis == 0 && out.batch_axis == 1) || (out.time_axis == 1 && out.batch_axis == 0);
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("time_axis ", out.time_axis, " and batch_axis ", out.batch_axis, " must be 0 and 1"));
  }
  return out;
}

absl::StatusOr<int64_t> ParseSpaceToDepthBlocksize(const ir::Attributes& attrs) {
  const int64_t b = attrs.GetInt("blocksize", 0);
  if (b <= 0 || b > (int64_t{1} << 20))
    return absl::InvalidArgumentError(absl::StrCat("blocksize ", b, " out of range"));
  return b;
}

namespace {

using ir::Dim;
using ir::DType;
using ir::Shape;
using ir::TensorType;
using Types = std::vector<TensorType>;
using tensor_ops::ExpectIndexInput;
using tensor_ops::Invalid;
using tensor_ops::One;
using tensor_ops::UnknownShape;

// An error when both shapes are known in rank and a dim known in both differs.
absl::Status ExpectSameShape(const TensorType& a, const TensorType& b, const char* what) {
  if (!a.shape || !b.shape) return absl::OkStatus();
  bool same = a.rank() == b.rank();
  for (int64_t i = 0; same && i < a.rank(); ++i) {
    const Dim &da = (*a.shape)[i], &db = (*b.shape)[i];
    same = !da.known() || !db.known() || da.value == db.value;
  }
  if (same) return absl::OkStatus();
  return Invalid(
      absl::StrCat(what, ": shapes ", ir::ShapeToString(*a.shape), " and ", ir::ShapeToString(*b.shape), " differ"));
}

// ---- GatherElements / ScatterElements ----

// The element ops' common checks: integer indices of data's rank, a valid axis.
absl::Status CheckElementsIndices(const InferContext& ctx) {
  if (absl::Status s = ExpectIndexInput(ctx, 1); !s.ok()) return s;
  const TensorType &data = ctx.type(0), &indices = ctx.type(1);
  if (!data.shape) return absl::OkStatus();
  if (data.rank() == 0) return Invalid("data must have rank >= 1");
  if (indices.shape && indices.rank() != data.rank()) {
    return Invalid(absl::StrCat("indices have rank ", indices.rank(), ", data has ", data.rank()));
  }
  return NormalizeAxis(ctx.attrs().GetInt("axis", 0), data.rank()).status();
}

absl::StatusOr<Types> InferGatherElements(const InferContext& ctx) {
  if (absl::Status s = CheckElementsIndices(ctx); !s.ok()) return s;
  return One(ctx.type(0).dtype, ctx.type(1).shape);
}

absl::StatusOr<Types> InferScatterElements(const InferContext& ctx) {
  if (absl::Status s = CheckElementsIndices(ctx); !s.ok()) return s;
  if (absl::StatusOr<ScatterReduction> r = ParseScatterReduction(ctx.attrs()); !r.ok()) return r.status();
  if (ctx.type(2).dtype != ctx.type(0).dtype) return Invalid("updates and data dtypes differ");
  if (absl::Status s = ExpectSameShape(ctx.type(1), ctx.type(2), "indices and updates"); !s.ok()) return s;
  return One(ctx.type(0).dtype, ctx.type(0).shape);
}

// ---- GatherND / ScatterND ----

// The last dim of indices (the index tuple length) when known; -1 otherwise.
int64_t TupleLength(const TensorType& indices) {
  if (!indices.shape || indices.shape->empty() || !indices.shape->back().known()) return -1;
  return indices.shape->back().value;
}

absl::StatusOr<Types> InferGatherND(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 1, {DType::kInt64}); !s.ok()) return s;
  const TensorType &data = ctx.type(0), &indices = ctx.type(1);
  if (!data.shape || !indices.shape) return One(data.dtype, std::nullopt);
  absl::StatusOr<int64_t> b = ParseGatherNDBatchDims(ctx.attrs(), data.rank(), indices.rank());
  if (!b.ok()) return b.status();
  const int64_t m = TupleLength(indices);
  if (m < 0) return One(data.dtype, std::nullopt);
  if (*b + m > data.rank()) {
    return Invalid(
        absl::StrCat("index tuples of length ", m, " after ", *b, " batch dims exceed data rank ", data.rank()));
  }
  Shape out(indices.shape->begin(), indices.shape->end() - 1);
  out.insert(out.end(), data.shape->begin() + *b + m, data.shape->end());
  return One(data.dtype, std::move(out));
}

absl::StatusOr<Types> InferScatterND(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 1, {DType::kInt64}); !s.ok()) return s;
  if (absl::StatusOr<ScatterReduction> r = ParseScatterReduction(ctx.attrs()); !r.ok()) return r.status();
  const TensorType &data = ctx.type(0), &indices = ctx.type(1), &updates = ctx.type(2);
  if (updates.dtype != data.dtype) return Invalid("updates and data dtypes differ");
  const int64_t m = TupleLength(indices);
  if (data.shape && indices.shape && m >= 0) {
    if (m > data.rank()) return Invalid(absl::StrCat("index tuples of length ", m, " exceed data rank ", data.rank()));
    Shape expected(indices.shape->begin(), indices.shape->end() - 1);
    expected.insert(expected.end(), data.shape->begin() + m, data.shape->end());
    if (absl::Status s = ExpectSameShape(updates, TensorType{data.dtype, expected}, "updates and expected updates");
        !s.ok()) {
      return s;
    }
  }
  return One(data.dtype, data.shape);
}

// ---- SpaceToDepth ----

absl::StatusOr<Types> InferSpaceToDepth(const InferContext& ctx) {
  absl::StatusOr<int64_t> b = ParseSpaceToDepthBlocksize(ctx.attrs());
  if (!b.ok()) return b.status();
  const TensorType& in = ctx.type(0);
  if (!in.shape) return One(in.dtype, UnknownShape(4));
  if (in.rank() != 4) return Invalid(absl::StrCat("input must have rank 4, got ", in.rank()));
  const Shape& s = *in.shape;
  for (int i = 2; i < 4; ++i) {
    if (s[i].known() && s[i].value % *b != 0) {
      return Invalid(absl::StrCat("spatial dim ", s[i].value, " not divisible by blocksize ", *b));
    }
  }
  return One(in.dtype, Shape{s[0], s[1] * Dim(*b * *b), FloorDiv(s[2], *b), FloorDiv(s[3], *b)});
}

// ---- ReverseSequence ----

absl::StatusOr<Types> InferReverseSequence(const InferContext& ctx) {
  absl::StatusOr<ReverseSequenceAttrs> attrs = ParseReverseSequenceAttrs(ctx.attrs());
  if (!attrs.ok()) return attrs.status();
  if (absl::Status s = ExpectDType(ctx, 1, {DType::kInt64}); !s.ok()) return s;
  const TensorType &in = ctx.type(0), &lens = ctx.type(1);
  if (in.shape && in.rank() < 2) return Invalid(absl::StrCat("input must have rank >= 2, has ", in.rank()));
  if (lens.shape && lens.rank() != 1) return Invalid("sequence_lens must be 1-D");
  if (in.shape && lens.shape) {
    const Dim &batch = (*in.shape)[attrs->batch_axis], &n = (*lens.shape)[0];
    if (batch.known() && n.known() && batch.value != n.value) {
      return Invalid(absl::StrCat("sequence_lens has ", n.value, " entries for batch ", batch.value));
    }
  }
  return One(in.dtype, in.shape);
}

}  // namespace

std::vector<OpDef> TensorScatterOpDefs() {
  return {
      {"GatherElements", 2, 2, InferGatherElements},
      {"ScatterElements", 3, 3, InferScatterElements},
      {"GatherND", 2, 2, InferGatherND},
      {"ScatterND", 3, 3, InferScatterND},
      {"SpaceToDepth", 1, 1, InferSpaceToDepth},
      {"ReverseSequence", 2, 2, InferReverseSequence},
  };
}

}  // namespace ops
