// Type and shape inference of the tensor family's data-movement ops: Concat, Split, Slice, Gather,
// Pad. Shapes stay symbolic where the ONNX semantics allow it.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
#include "ops/tensor_ops_slice.h"
#include "ops/tensor_ops_util.h"

namespace ops {
namespace {

using ir::Dim;
using ir::Shape;
using ir::TensorType;
using Types = std::vector<TensorType>;
using tensor_ops::ExpectIndexInput;
using tensor_ops::IntsInput;
using tensor_ops::Invalid;
using tensor_ops::KnownLength;
using tensor_ops::NormalizeAxes;
using tensor_ops::One;
using tensor_ops::UnknownShape;

// ---- Concat ----

// Merges a non-axis dim of one input into the running result; an error when known sizes differ.
absl::Status MergeDim(Dim& acc, const Dim& d, int64_t axis) {
  if (acc.known() && d.known() && acc.value != d.value) {
    return Invalid(absl::StrCat("inputs differ in dim ", axis, ": ", acc.value, " vs ", d.value));
  }
  if (!acc.known() && (d.known() || acc.symbol.empty())) acc = d;
  return absl::OkStatus();
}

absl::StatusOr<Types> InferConcat(const InferContext& ctx) {
  const ir::DType dtype = ctx.type(0).dtype;
  std::optional<Shape> out;
  Dim axis_sum = 0;
  bool all_ranked = true;
  int64_t axis = ctx.attrs().GetInt("axis", 0);
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return Invalid(absl::StrCat("input ", i, " is missing"));
    const TensorType& t = ctx.type(i);
    if (t.dtype != dtype) {
      return Invalid(
          absl::StrCat("input ", i, " has dtype ", ir::DTypeName(t.dtype), ", input 0 has ", ir::DTypeName(dtype)));
    }
    if (!t.shape) {
      all_ranked = false;
      continue;
    }
    if (!out) {
      absl::StatusOr<int64_t> a = NormalizeAxis(axis, t.rank());
      if (!a.ok()) return a.status();
      axis = *a;
      out = *t.shape;
    } else if (t.rank() != static_cast<int64_t>(out->size())) {
      return Invalid(absl::StrCat("input ", i, " has rank ", t.rank(), ", expected ", out->size()));
    } else {
      for (int64_t k = 0; k < t.rank(); ++k) {
        if (k == axis) continue;
        if (absl::Status s = MergeDim((*out)[k], (*t.shape)[k], k); !s.ok()) {
          return Invalid(absl::StrCat("shape mismatch at input ", i, ": ", s.message()));
        }
      }
    }
    axis_sum = axis_sum + (*t.shape)[axis];
  }
  if (out) (*out)[axis] = all_ranked ? axis_sum : Dim();
  return One(dtype, std::move(out));
}

// ---- Split ----

absl::StatusOr<Types> InferSplit(const InferContext& ctx) {
  if (absl::Status s = ExpectIndexInput(ctx, 1); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  const size_t n = ctx.num_outputs();
  Types outs(n, TensorType{in.dtype, std::nullopt});
  if (n == 0) return Invalid("Split has no outputs");
  if (!in.shape) return outs;
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", 0), in.rank());
  if (!axis.ok()) return axis.status();
  const Dim& dim = (*in.shape)[*axis];
  std::vector<Dim> sizes(n);
  if (ctx.has_input(1)) {
    std::optional<std::vector<int64_t>> split = IntsInput(ctx, 1);
    if (split) {
      if (split->size() != n) {
        return Invalid(absl::StrCat("split has ", split->size(), " entries for ", n, " outputs"));
      }
      int64_t sum = 0;
      for (size_t i = 0; i < n; ++i) {
        if ((*split)[i] < 0) return Invalid("split sizes must be non-negative");
        if ((*split)[i] > std::numeric_limits<int64_t>::max() - sum) {
          return Invalid(absl::StrCat("split sizes [", absl::StrJoin(*split, ","), "] overflow int64"));
        }
        sum += (*split)[i];
        sizes[i] = (*split)[i];
      }
      if (dim.known() && sum != dim.value) {
        return Invalid(absl::StrCat("split sizes [", absl::StrJoin(*split, ","), "] sum to ", sum,
                                    ", not the axis size ", dim.value));
      }
    }
  } else if (n == 1) {
    sizes[0] = dim;
  } else if (dim.known()) {
    const int64_t chunk = (dim.value + static_cast<int64_t>(n) - 1) / static_cast<int64_t>(n);
    const int64_t last = dim.value - chunk * static_cast<int64_t>(n - 1);
    if (last < 0) {
      return Invalid(absl::StrCat("cannot split axis of size ", dim.value, " into ", n, " parts"));
    }
    for (size_t i = 0; i < n; ++i) sizes[i] = i + 1 < n ? chunk : last;
  }
  for (size_t i = 0; i < n; ++i) {
    Shape s = *in.shape;
    s[*axis] = sizes[i];
    outs[i].shape = std::move(s);
  }
  return outs;
}

// ---- Slice ----

absl::StatusOr<Types> InferSlice(const InferContext& ctx) {
  for (size_t i = 1; i < 5; ++i) {
    if (absl::Status s = ExpectIndexInput(ctx, i); !s.ok()) return s;
  }
  const TensorType& in = ctx.type(0);
  if (!in.shape) return One(in.dtype, std::nullopt);
  const int64_t rank = in.rank();
  std::optional<std::vector<int64_t>> starts = IntsInput(ctx, 1), ends = IntsInput(ctx, 2);
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.has_input(3)) axes = IntsInput(ctx, 3);
  if (ctx.has_input(4)) steps = IntsInput(ctx, 4);
  const bool known = starts && ends && (axes || !ctx.has_input(3)) && (steps || !ctx.has_input(4));
  if (!known) return One(in.dtype, UnknownShape(rank));
  absl::StatusOr<std::vector<SliceAxis>> plan =
      PlanSlice(rank, *starts, *ends, axes ? &*axes : nullptr, steps ? &*steps : nullptr);
  if (!plan.ok()) return plan.status();
  Shape out = *in.shape;
  for (const SliceAxis& s : *plan) {
    const Dim& d = (*in.shape)[s.axis];
    if (d.known()) {
      out[s.axis] = SliceAxisSize(s, d.value).count;
    } else {
      out[s.axis] = IsFullSlice(s) ? d : Dim();
    }
  }
  return One(in.dtype, std::move(out));
}

// ---- Gather ----

absl::StatusOr<Types> InferGather(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 1, {ir::DType::kInt64, ir::DType::kInt32}); !s.ok()) {
    return s;
  }
  const TensorType& data = ctx.type(0);
  const TensorType& indices = ctx.type(1);
  if (!data.shape || !indices.shape) return One(data.dtype, std::nullopt);
  if (data.rank() == 0) return Invalid("Gather data must have rank >= 1");
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", 0), data.rank());
  if (!axis.ok()) return axis.status();
  Shape out(data.shape->begin(), data.shape->begin() + *axis);
  out.insert(out.end(), indices.shape->begin(), indices.shape->end());
  out.insert(out.end(), data.shape->begin() + *axis + 1, data.shape->end());
  return One(data.dtype, std::move(out));
}

// ---- Pad ----

// Larger pads are rejected before any arithmetic on them.
constexpr int64_t kMaxPad = int64_t{1} << 40;
// Compared without std::abs, which overflows on INT64_MIN.
bool OutsidePadRange(int64_t pad) { return pad < -kMaxPad || pad > kMaxPad; }

absl::Status CheckPadMode(const std::string& mode) {
  if (mode == "constant" || mode == "reflect" || mode == "edge" || mode == "wrap") {
    return absl::OkStatus();
  }
  return Invalid(absl::StrCat("unsupported pad mode '", mode, "'"));
}

absl::StatusOr<Types> InferPad(const InferContext& ctx) {
  if (absl::Status s = ExpectIndexInput(ctx, 1); !s.ok()) return s;
  if (absl::Status s = ExpectIndexInput(ctx, 3); !s.ok()) return s;
  if (absl::Status s = CheckPadMode(ctx.attrs().GetString("mode", "constant")); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  if (ctx.has_input(2) && ctx.type(2).dtype != in.dtype) {
    return Invalid("Pad constant_value must have the data's dtype");
  }
  if (!in.shape) return One(in.dtype, std::nullopt);
  const int64_t rank = in.rank();
  std::optional<std::vector<int64_t>> pads = IntsInput(ctx, 1);
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_input(3)) axes = IntsInput(ctx, 3);
  if (!pads || (ctx.has_input(3) && !axes)) return One(in.dtype, UnknownShape(rank));
  absl::StatusOr<std::vector<int64_t>> full = FullPads(rank, *pads, axes ? &*axes : nullptr);
  if (!full.ok()) return full.status();
  Shape out = *in.shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (OutsidePadRange((*full)[i]) || OutsidePadRange((*full)[i + rank])) {
      return Invalid(absl::StrCat("pads ", (*full)[i], ",", (*full)[i + rank], " are out of range"));
    }
    const int64_t total = (*full)[i] + (*full)[i + rank];
    const Dim& d = (*in.shape)[i];
    if (!d.known()) {
      out[i] = total == 0 ? d : Dim();
      continue;
    }
    if (d.value + std::min<int64_t>((*full)[i], 0) + std::min<int64_t>((*full)[i + rank], 0) < 0) {
      return Invalid(
          absl::StrCat("pads ", (*full)[i], ",", (*full)[i + rank], " crop more than dim ", i, " of size ", d.value));
    }
    out[i] = d.value + total;
  }
  return One(in.dtype, std::move(out));
}
}  // namespace

std::vector<OpDef> TensorCopyOpDefs() {
  constexpr int kMany = 1 << 20;
  return {
      {"Concat", 1, kMany, InferConcat}, {"Split", 1, 2, InferSplit}, {"Slice", 3, 5, InferSlice},
      {"Gather", 2, 2, InferGather},     {"Pad", 2, 4, InferPad},
  };
}

}  // namespace ops
