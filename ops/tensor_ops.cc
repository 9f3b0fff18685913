// Type and shape inference of the tensor family's shape ops: Flatten, Reshape, Squeeze, Unsqueeze,
// Transpose, Shape, Expand, DepthToSpace (the data-movement ops are in tensor_ops_copy.cc). Shapes
// stay symbolic where the ONNX semantics allow it (a symbolic batch dim flows through).
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

// ---- Flatten ----

absl::StatusOr<Types> InferFlatten(const InferContext& ctx) {
  const TensorType& in = ctx.type(0);
  if (!in.shape) return One(in.dtype, UnknownShape(2));
  const int64_t rank = in.rank();
  int64_t axis = ctx.attrs().GetInt("axis", 1);
  if (axis < -rank || axis > rank) {
    return Invalid(absl::StrCat("axis ", axis, " out of range for rank ", rank));
  }
  if (axis < 0) axis += rank;
  Dim outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    Dim& d = i < axis ? outer : inner;
    d = d * (*in.shape)[i];
  }
  return One(in.dtype, Shape{outer, inner});
}

// ---- Reshape ----

// Product of the known dims, the sorted symbols, and whether an unknown (unnamed) dim occurs.
struct DimSummary {
  int64_t known_product = 1;
  std::vector<std::string> symbols;
  bool has_unknown = false;
  bool overflow = false;  // the known product does not fit in int64
};

DimSummary Summarize(const Shape& shape, int64_t skip) {
  DimSummary s;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i == skip) continue;
    const Dim& d = shape[i];
    if (d.known()) {
      if (__builtin_mul_overflow(s.known_product, d.value, &s.known_product)) s.overflow = true;
    } else if (!d.symbol.empty()) {
      s.symbols.push_back(d.symbol);
    } else {
      s.has_unknown = true;
    }
  }
  std::sort(s.symbols.begin(), s.symbols.end());
  return s;
}

// The symbols of a that are left after removing those of b (as multisets); nullopt when b has a
// symbol a lacks.
std::optional<std::vector<std::string>> SymbolsLeft(const DimSummary& a, const DimSummary& b) {
  std::vector<std::string> left;
  if (!std::includes(a.symbols.begin(), a.symbols.end(), b.symbols.begin(), b.symbols.end())) {
    return std::nullopt;
  }
  std::set_difference(a.symbols.begin(), a.symbols.end(), b.symbols.begin(), b.symbols.end(), std::back_inserter(left));
  return left;
}

// Resolves the -1 entry (index infer, or -1 for none) of out against the input shape: a known
// value when the symbols cancel, the one leftover symbol when the known sizes cancel.
absl::Status ResolveReshape(const Shape& in, Shape& out, int64_t infer) {
  const DimSummary a = Summarize(in, -1), b = Summarize(out, infer);
  if (a.overflow || b.overflow) {
    return Invalid(absl::StrCat("reshape target ", ir::ShapeToString(out), " is too large"));
  }
  if (a.has_unknown || b.has_unknown) return absl::OkStatus();
  const std::optional<std::vector<std::string>> left = SymbolsLeft(a, b);
  if (!left) return absl::OkStatus();
  auto mismatch = [&] {
    return Invalid(absl::StrCat("cannot reshape ", ir::ShapeToString(in), " to ", ir::ShapeToString(out)));
  };
  if (infer < 0) {
    if (!left->empty()) return absl::OkStatus();
    return a.known_product == b.known_product ? absl::OkStatus() : mismatch();
  }
  if (left->empty()) {
    if (b.known_product == 0 || a.known_product % b.known_product != 0) return mismatch();
    out[infer] = a.known_product / b.known_product;
  } else if (left->size() == 1 && a.known_product == b.known_product && a.known_product != 0) {
    out[infer] = Dim::Symbol(left->front());
  }
  return absl::OkStatus();
}

absl::StatusOr<Types> InferReshape(const InferContext& ctx) {
  if (absl::Status s = ExpectIndexInput(ctx, 1); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  std::optional<std::vector<int64_t>> target = IntsInput(ctx, 1);
  if (!target) {
    const int64_t n = KnownLength(ctx, 1);
    return One(in.dtype, n >= 0 ? std::optional<Shape>(UnknownShape(n)) : std::nullopt);
  }
  const bool allowzero = ctx.attrs().GetInt("allowzero", 0) != 0;
  Shape out(target->size());
  int64_t infer = -1;
  bool has_zero = false;
  for (size_t i = 0; i < target->size(); ++i) {
    const int64_t v = (*target)[i];
    if (v == -1) {
      if (infer >= 0) return Invalid("reshape target has more than one -1");
      infer = static_cast<int64_t>(i);
    } else if (v < -1) {
      return Invalid(absl::StrCat("invalid reshape target dim ", v));
    } else if (v == 0 && !allowzero) {
      if (in.shape && i >= in.shape->size()) {
        return Invalid(absl::StrCat("reshape target has 0 at index ", i, " beyond input rank ", in.rank()));
      }
      out[i] = in.shape ? (*in.shape)[i] : Dim();
    } else {
      has_zero |= v == 0;
      out[i] = v;
    }
  }
  if (has_zero && infer >= 0) return Invalid("reshape target has both 0 (allowzero) and -1");
  if (in.shape) {
    if (absl::Status s = ResolveReshape(*in.shape, out, infer); !s.ok()) return s;
  }
  return One(in.dtype, std::move(out));
}

// ---- Squeeze / Unsqueeze ----

// Squeeze without axes: drops every dim of size 1 (rank unknown while a dim is not known).
Types SqueezeAllOnes(const TensorType& in) {
  Shape out;
  for (const Dim& d : *in.shape) {
    if (!d.known()) return One(in.dtype, std::nullopt);
    if (d.value != 1) out.push_back(d);
  }
  return One(in.dtype, std::move(out));
}

absl::StatusOr<Types> InferSqueeze(const InferContext& ctx) {
  if (absl::Status s = ExpectIndexInput(ctx, 1); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  if (!in.shape) return One(in.dtype, std::nullopt);
  const Shape& shape = *in.shape;
  const int64_t rank = in.rank();
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    std::optional<std::vector<int64_t>> given = IntsInput(ctx, 1);
    if (!given) {
      const int64_t n = KnownLength(ctx, 1);
      return One(in.dtype, n >= 0 && n <= rank ? std::optional<Shape>(UnknownShape(rank - n)) : std::nullopt);
    }
    if (given->empty()) return SqueezeAllOnes(in);  // an empty axes list means "all", as ORT
    absl::StatusOr<std::vector<int64_t>> norm = NormalizeAxes(*given, rank);
    if (!norm.ok()) return norm.status();
    axes = *norm;
    for (int64_t a : axes) {
      if (shape[a].known() && shape[a].value != 1) {
        return Invalid(absl::StrCat("cannot squeeze axis ", a, " of size ", shape[a].value));
      }
    }
  } else {
    return SqueezeAllOnes(in);
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) out.push_back(shape[i]);
  }
  return One(in.dtype, std::move(out));
}

absl::StatusOr<Types> InferUnsqueeze(const InferContext& ctx) {
  if (absl::Status s = ExpectIndexInput(ctx, 1); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  std::optional<std::vector<int64_t>> axes = IntsInput(ctx, 1);
  if (!axes) {
    const int64_t n = KnownLength(ctx, 1);
    return One(in.dtype, n >= 0 && in.shape ? std::optional<Shape>(UnknownShape(in.rank() + n)) : std::nullopt);
  }
  if (!in.shape) return One(in.dtype, std::nullopt);
  const int64_t out_rank = in.rank() + static_cast<int64_t>(axes->size());
  absl::StatusOr<std::vector<int64_t>> norm = NormalizeAxes(*axes, out_rank);
  if (!norm.ok()) return norm.status();
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (std::find(norm->begin(), norm->end(), i) != norm->end()) {
      out.push_back(1);
    } else {
      out.push_back((*in.shape)[next++]);
    }
  }
  return One(in.dtype, std::move(out));
}

// ---- Transpose ----

absl::StatusOr<Types> InferTranspose(const InferContext& ctx) {
  const TensorType& in = ctx.type(0);
  std::vector<int64_t> perm = ctx.attrs().GetInts("perm");
  if (!in.shape) {
    return One(in.dtype, perm.empty() ? std::nullopt : std::optional<Shape>(UnknownShape(perm.size())));
  }
  const int64_t rank = in.rank();
  absl::StatusOr<std::vector<int64_t>> resolved = ResolvePermutation(ctx.attrs(), rank);
  if (!resolved.ok()) return resolved.status();
  perm = *resolved;
  Shape out;
  for (int64_t p : perm) out.push_back((*in.shape)[p]);
  return One(in.dtype, std::move(out));
}

// ---- Shape ----

absl::StatusOr<Types> InferShape(const InferContext& ctx) {
  const TensorType& in = ctx.type(0);
  if (!in.shape) return One(ir::DType::kInt64, Shape{Dim()});
  const int64_t rank = in.rank();
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  const int64_t start = clamp(ctx.attrs().GetInt("start", 0));
  const int64_t end = clamp(ctx.attrs().GetInt("end", rank));
  return One(ir::DType::kInt64, Shape{std::max<int64_t>(0, end - start)});
}

// ---- Expand ----

absl::StatusOr<Types> InferExpand(const InferContext& ctx) {
  if (absl::Status s = ExpectIndexInput(ctx, 1); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  std::optional<std::vector<int64_t>> shape = IntsInput(ctx, 1);
  if (!shape || !in.shape) {
    const int64_t n = KnownLength(ctx, 1);
    if (n < 0 || !in.shape) return One(in.dtype, std::nullopt);
    return One(in.dtype, UnknownShape(std::max<int64_t>(n, in.rank())));
  }
  for (int64_t d : *shape) {
    if (d < 0) return Invalid(absl::StrCat("Expand shape has negative dim ", d));
  }
  absl::StatusOr<Shape> out = BroadcastShapes(*in.shape, ir::ShapeFromInts(*shape));
  if (!out.ok()) {
    return Invalid(
        absl::StrCat("cannot expand ", ir::ShapeToString(*in.shape), " to [", absl::StrJoin(*shape, ","), "]"));
  }
  return One(in.dtype, *std::move(out));
}

// ---- DepthToSpace ----

absl::StatusOr<Types> InferDepthToSpace(const InferContext& ctx) {
  const TensorType& in = ctx.type(0);
  const int64_t b = ctx.attrs().GetInt("blocksize", 0);
  const std::string mode = ctx.attrs().GetString("mode", "DCR");
  if (b <= 0 || b > (int64_t{1} << 20)) {
    return Invalid(absl::StrCat("blocksize ", b, " out of range"));
  }
  if (mode != "DCR" && mode != "CRD") return Invalid(absl::StrCat("unknown mode '", mode, "'"));
  if (!in.shape) return One(in.dtype, UnknownShape(4));
  if (in.rank() != 4) return Invalid(absl::StrCat("input must have rank 4, got ", in.rank()));
  const Shape& s = *in.shape;
  if (s[1].known() && s[1].value % (b * b) != 0) {
    return Invalid(absl::StrCat("channels ", s[1].value, " not divisible by blocksize^2 ", b * b));
  }
  return One(in.dtype, Shape{s[0], FloorDiv(s[1], b * b), s[2] * Dim(b), s[3] * Dim(b)});
}
}  // namespace

std::vector<OpDef> TensorOpDefs() {
  // The shape-only ops (their kernels copy input 0 whole, or read only its shape) take strings.
  constexpr bool kTensorsOnly = false, kStrings = true;
  return {
      {"Flatten", 1, 1, InferFlatten, kTensorsOnly, kStrings},
      {"Reshape", 2, 2, InferReshape, kTensorsOnly, kStrings},
      {"Squeeze", 1, 2, InferSqueeze, kTensorsOnly, kStrings},
      {"Unsqueeze", 2, 2, InferUnsqueeze, kTensorsOnly, kStrings},
      {"Shape", 1, 1, InferShape, kTensorsOnly, kStrings},
      {"Transpose", 1, 1, InferTranspose},
      {"Expand", 2, 2, InferExpand},
      {"DepthToSpace", 1, 1, InferDepthToSpace},
  };
}

}  // namespace ops
