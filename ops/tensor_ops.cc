// Type and shape inference of the tensor (shape and data movement) family: Flatten, Reshape,
// Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Gather, Pad, Shape, Expand, DepthToSpace.
// Shapes stay symbolic where the ONNX semantics allow it (a symbolic batch dim flows through).
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

namespace ops {
namespace {

using ir::Dim;
using ir::Shape;
using ir::TensorType;
using Types = std::vector<TensorType>;

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

// The int64 values of input i when it is a known constant; nullopt otherwise.
std::optional<std::vector<int64_t>> IntsInput(const InferContext& ctx, size_t i) {
  const ir::Tensor* t = ctx.value(i);
  if (t == nullptr) return std::nullopt;
  return t->ToInt64Vector();
}

// An error unless input i (when present) holds integer indices (int32 or int64).
absl::Status ExpectIndexInput(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  return ExpectDType(ctx, i, {ir::DType::kInt64, ir::DType::kInt32});
}

// The element count of input i when it is a 1-D tensor of known length; -1 otherwise.
int64_t KnownLength(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return -1;
  const std::optional<Shape>& s = ctx.type(i).shape;
  if (!s || s->size() != 1 || !(*s)[0].known()) return -1;
  return (*s)[0].value;
}

Types One(ir::DType dtype, std::optional<Shape> shape) {
  return Types{TensorType{dtype, std::move(shape)}};
}

Shape UnknownShape(int64_t rank) { return Shape(static_cast<size_t>(rank)); }

// Normalizes each axis against rank; an error on out-of-range or repeated axes.
absl::StatusOr<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    absl::StatusOr<int64_t> n = NormalizeAxis(a, rank);
    if (!n.ok()) return n.status();
    if (std::find(out.begin(), out.end(), *n) != out.end()) {
      return Invalid(absl::StrCat("axis ", a, " is repeated in [", absl::StrJoin(axes, ","), "]"));
    }
    out.push_back(*n);
  }
  return out;
}

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
  std::set_difference(a.symbols.begin(), a.symbols.end(), b.symbols.begin(), b.symbols.end(),
                      std::back_inserter(left));
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
    return Invalid(
        absl::StrCat("cannot reshape ", ir::ShapeToString(in), " to ", ir::ShapeToString(out)));
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
        return Invalid(
            absl::StrCat("reshape target has 0 at index ", i, " beyond input rank ", in.rank()));
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
      return One(in.dtype,
                 n >= 0 && n <= rank ? std::optional<Shape>(UnknownShape(rank - n)) : std::nullopt);
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
    return One(in.dtype, n >= 0 && in.shape ? std::optional<Shape>(UnknownShape(in.rank() + n))
                                            : std::nullopt);
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
    return One(in.dtype,
               perm.empty() ? std::nullopt : std::optional<Shape>(UnknownShape(perm.size())));
  }
  const int64_t rank = in.rank();
  absl::StatusOr<std::vector<int64_t>> resolved = ResolvePermutation(ctx.attrs(), rank);
  if (!resolved.ok()) return resolved.status();
  perm = *resolved;
  Shape out;
  for (int64_t p : perm) out.push_back((*in.shape)[p]);
  return One(in.dtype, std::move(out));
}

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
      return Invalid(absl::StrCat("input ", i, " has dtype ", ir::DTypeName(t.dtype),
                                  ", input 0 has ", ir::DTypeName(dtype)));
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
    if (std::abs((*full)[i]) > kMaxPad || std::abs((*full)[i + rank]) > kMaxPad) {
      return Invalid(
          absl::StrCat("pads ", (*full)[i], ",", (*full)[i + rank], " are out of range"));
    }
    const int64_t total = (*full)[i] + (*full)[i + rank];
    const Dim& d = (*in.shape)[i];
    if (!d.known()) {
      out[i] = total == 0 ? d : Dim();
      continue;
    }
    if (d.value + std::min<int64_t>((*full)[i], 0) + std::min<int64_t>((*full)[i + rank], 0) < 0) {
      return Invalid(absl::StrCat("pads ", (*full)[i], ",", (*full)[i + rank],
                                  " crop more than dim ", i, " of size ", d.value));
    }
    out[i] = d.value + total;
  }
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
    return Invalid(absl::StrCat("cannot expand ", ir::ShapeToString(*in.shape), " to [",
                                absl::StrJoin(*shape, ","), "]"));
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
  constexpr int kMany = 1 << 20;
  return {
      {"Flatten", 1, 1, InferFlatten},
      {"Reshape", 2, 2, InferReshape},
      {"Squeeze", 1, 2, InferSqueeze},
      {"Unsqueeze", 2, 2, InferUnsqueeze},
      {"Transpose", 1, 1, InferTranspose},
      {"Concat", 1, kMany, InferConcat},
      {"Split", 1, 2, InferSplit},
      {"Slice", 3, 5, InferSlice},
      {"Gather", 2, 2, InferGather},
      {"Pad", 2, 4, InferPad},
      {"Shape", 1, 1, InferShape},
      {"Expand", 2, 2, InferExpand},
      {"DepthToSpace", 1, 1, InferDepthToSpace},
  };
}

}  // namespace ops
