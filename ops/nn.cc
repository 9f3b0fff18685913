// The nn-family op definitions and their type/shape inference: Conv, ConvTranspose, MaxPool,
// AveragePool, GlobalAveragePool, GlobalMaxPool, BatchNormalization, InstanceNormalization,
// LayerNormalization, MatMul and Gemm (canonical forms in ops/CANONICAL.md).
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
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

// ---- Shared checks -----------------------------------------------------------------------------

// An error unless input i (when present) has input 0's dtype.
absl::Status ExpectSameDType(const InferContext& ctx, size_t i) {
  if (ctx.has_input(i) && ctx.type(i).dtype != ctx.type(0).dtype) {
    return absl::InvalidArgumentError(absl::StrCat("input ", i, " has dtype ", ir::DTypeName(ctx.type(i).dtype),
                                                   ", input 0 ", ir::DTypeName(ctx.type(0).dtype)));
  }
  return absl::OkStatus();
}

// An error unless input i (when present with known shape) is 1-D of `size` elements.
absl::Status ExpectVector(const InferContext& ctx, size_t i, const Dim& size, const char* name) {
  if (!ctx.has_input(i) || !ctx.type(i).shape) return absl::OkStatus();
  const Shape& s = *ctx.type(i).shape;
  if (s.size() != 1 || (s[0].known() && size.known() && s[0].value != size.value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has shape ", ir::ShapeToString(s), ", expected [", size.ToString(), "]"));
  }
  return absl::OkStatus();
}

absl::Status ExpectMinRank(const TensorType& t, int64_t min_rank, const char* name) {
  if (t.shape && t.rank() < min_rank) {
    return absl::InvalidArgumentError(absl::StrCat(name, " must have rank >= ", min_rank, ", got ", t.rank()));
  }
  return absl::OkStatus();
}

// ---- Sliding-window attributes -----------------------------------------------------------------

// The kernel shape the weight implies: W's spatial dims when all are known.
std::optional<std::vector<int64_t>> KernelFromWeights(const InferContext& ctx) {
  if (!ctx.has_input(1) || !ctx.type(1).shape || ctx.type(1).rank() < 2) return std::nullopt;
  const Shape& w = *ctx.type(1).shape;
  return ir::ShapeToInts(Shape(w.begin() + 2, w.end()));
}

// ForwardDim of a named (symbolic) input extent: the same formula as a named expression (unknown
// for ceil_mode, whose last-window rule needs the value), so that e.g. a conv's output and the
// activation after it agree on a dynamic H.
Dim SymbolicForwardDim(const Dim& in, const Window& w, size_t i) {
  const size_t nd = w.strides.size();
  const int64_t s = w.strides[i], dk = ((*w.kernel)[i] - 1) * w.dilations[i] + 1;
  if (w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower) return ir::CeilDiv(in, s);
  if (w.ceil_mode) return Dim();
  const bool valid = w.auto_pad == AutoPad::kValid;
  const int64_t pads = valid ? 0 : w.pads[i] + w.pads[i + nd];
  return ir::AddConstant(ir::FloorDiv(ir::AddConstant(in, pads - dk), s), 1);
}

// Conv/pool output extent of spatial dim i.
absl::StatusOr<Dim> ForwardDim(const Dim& in, const Window& w, size_t i) {
  if (!in.known() && w.kernel) return SymbolicForwardDim(in, w, i);
  if (!in.known() || !w.kernel) return Dim();
  const size_t nd = w.strides.size();
  const int64_t s = w.strides[i], dk = ((*w.kernel)[i] - 1) * w.dilations[i] + 1;
  if (w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower) {
    return Dim((in.value + s - 1) / s);
  }
  const bool valid = w.auto_pad == AutoPad::kValid;
  const int64_t pb = valid ? 0 : w.pads[i], pe = valid ? 0 : w.pads[i + nd];
  const int64_t span = in.value + pb + pe - dk;
  if (span < 0) {
    return absl::InvalidArgumentError(absl::StrCat("window of extent ", dk, " exceeds the padded input extent ",
                                                   in.value + pb + pe, " in spatial dim ", i));
  }
  int64_t out = (w.ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (w.ceil_mode && (out - 1) * s >= in.value + pb) --out;  // last window starts in the input
  return Dim(out);
}

// [N, channels, forward spatial dims of x].
absl::StatusOr<Shape> ForwardShape(const Shape& x, const Dim& channels, const Window& w) {
  Shape out = {x[0], channels};
  for (size_t i = 2; i < x.size(); ++i) {
    absl::StatusOr<Dim> d = ForwardDim(x[i], w, i - 2);
    if (!d.ok()) return d.status();
    out.push_back(*d);
  }
  return out;
}

// ---- Conv and ConvTranspose --------------------------------------------------------------------

// Shared input checks; returns group.
absl::StatusOr<int64_t> CheckConvInputs(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = ExpectDType(ctx, 1, kFloatTypes); !s.ok()) return s;
  for (size_t i : {1, 2}) {
    if (absl::Status s = ExpectSameDType(ctx, i); !s.ok()) return s;
  }
  if (absl::Status s = ExpectMinRank(ctx.type(0), 3, "X"); !s.ok()) return s;
  const TensorType& x = ctx.type(0);
  const TensorType& w = ctx.type(1);
  if (x.shape && w.shape && w.rank() != x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("W has rank ", w.rank(), ", X has rank ", x.rank()));
  }
  const int64_t group = ctx.attrs().GetInt("group", 1);
  if (group <= 0) return absl::InvalidArgumentError(absl::StrCat("group ", group, " <= 0"));
  return group;
}

absl::StatusOr<Types> InferConv(const InferContext& ctx) {
  absl::StatusOr<int64_t> group = CheckConvInputs(ctx);
  if (!group.ok()) return group.status();
  const TensorType& x = ctx.type(0);
  const TensorType& w = ctx.type(1);
  if (!x.shape) return Types{TensorType{x.dtype, std::nullopt}};
  const Shape& xs = *x.shape;
  Dim out_channels;
  if (w.shape) {
    const Shape& ws = *w.shape;
    out_channels = ws[0];
    if (xs[1].known() && ws[1].known() && xs[1].value != ws[1].value * *group) {
      return absl::InvalidArgumentError(
          absl::StrCat("X has ", xs[1].value, " channels, W expects ", ws[1].value, " x group ", *group));
    }
    if (ws[0].known() && ws[0].value % *group != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("W's ", ws[0].value, " output channels not divisible by group ", *group));
    }
  }
  if (absl::Status s = ExpectVector(ctx, 2, out_channels, "B"); !s.ok()) return s;
  absl::StatusOr<Window> window = ReadWindow(ctx.attrs(), xs.size() - 2, KernelFromWeights(ctx), false);
  if (!window.ok()) return window.status();
  absl::StatusOr<Shape> out = ForwardShape(xs, out_channels, *window);
  if (!out.ok()) return out.status();
  return Types{TensorType{x.dtype, *std::move(out)}};
}

// ConvTranspose output extent of spatial dim i.
absl::StatusOr<Dim> TransposeDim(const Dim& in, const Window& w, size_t i, int64_t output_padding,
                                 const std::vector<int64_t>& output_shape) {
  if (!output_shape.empty()) return Dim(output_shape[i]);
  if (!in.known()) return Dim();
  const int64_t s = w.strides[i];
  if (w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower) {
    return Dim(in.value * s);
  }
  if (!w.kernel) return Dim();
  const size_t nd = w.strides.size();
  const bool valid = w.auto_pad == AutoPad::kValid;
  const int64_t pads = valid ? 0 : w.pads[i] + w.pads[i + nd];
  const int64_t out = s * (in.value - 1) + output_padding + ((*w.kernel)[i] - 1) * w.dilations[i] + 1 - pads;
  if (out < 0) return absl::InvalidArgumentError(absl::StrCat("negative output extent ", out));
  return Dim(out);
}

absl::StatusOr<Types> InferConvTranspose(const InferContext& ctx) {
  absl::StatusOr<int64_t> group = CheckConvInputs(ctx);
  if (!group.ok()) return group.status();
  const TensorType& x = ctx.type(0);
  const TensorType& w = ctx.type(1);
  if (!x.shape) return Types{TensorType{x.dtype, std::nullopt}};
  const Shape& xs = *x.shape;
  const size_t nd = xs.size() - 2;
  Dim out_channels;
  if (w.shape) {
    const Shape& ws = *w.shape;
    out_channels = ws[1] * Dim(*group);
    if (xs[1].known() && ws[0].known() && xs[1].value != ws[0].value) {
      return absl::InvalidArgumentError(absl::StrCat("X has ", xs[1].value, " channels, W has ", ws[0].value));
    }
    if (ws[0].known() && ws[0].value % *group != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("W's ", ws[0].value, " input channels not divisible by group ", *group));
    }
  }
  if (absl::Status s = ExpectVector(ctx, 2, out_channels, "B"); !s.ok()) return s;
  absl::StatusOr<Window> window = ReadWindow(ctx.attrs(), nd, KernelFromWeights(ctx), false);
  if (!window.ok()) return window.status();
  absl::StatusOr<std::vector<int64_t>> output_padding = ReadInts(ctx.attrs(), "output_padding", nd, 0, 0);
  if (!output_padding.ok()) return output_padding.status();
  std::vector<int64_t> output_shape = ctx.attrs().GetInts("output_shape");
  if (output_shape.size() == nd + 2) {
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  }
  if (!output_shape.empty() && output_shape.size() != nd) {
    return absl::InvalidArgumentError(
        absl::StrCat("output_shape has ", output_shape.size(), " entries, expected ", nd));
  }
  Shape out = {xs[0], out_channels};
  for (size_t i = 0; i < nd; ++i) {
    absl::StatusOr<Dim> d = TransposeDim(xs[i + 2], *window, i, (*output_padding)[i], output_shape);
    if (!d.ok()) return d.status();
    out.push_back(*d);
  }
  return Types{TensorType{x.dtype, std::move(out)}};
}

// ---- Pools -------------------------------------------------------------------------------------

absl::StatusOr<Shape> PoolShape(const InferContext& ctx, bool float_only) {
  if (float_only) {
    if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  }
  if (absl::Status s = ExpectMinRank(ctx.type(0), 3, "X"); !s.ok()) return s;
  const Shape& xs = *ctx.type(0).shape;
  absl::StatusOr<Window> window = ReadWindow(ctx.attrs(), xs.size() - 2, std::nullopt, true);
  if (!window.ok()) return window.status();
  return ForwardShape(xs, xs[1], *window);
}

absl::Status ExpectNumeric(const InferContext& ctx) {
  const DType d = ctx.type(0).dtype;
  if (!ir::IsSupportedDType(d) || d == DType::kBool) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported dtype ", ir::DTypeName(d)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Types> InferMaxPool(const InferContext& ctx) {
  if (absl::Status s = ExpectNumeric(ctx); !s.ok()) return s;
  const DType dtype = ctx.type(0).dtype;
  if (!ctx.type(0).shape) {
    Types out = {TensorType{dtype, std::nullopt}};
    if (ctx.num_outputs() > 1) out.push_back(TensorType{DType::kInt64, std::nullopt});
    return out;
  }
  absl::StatusOr<Shape> shape = PoolShape(ctx, false);
  if (!shape.ok()) return shape.status();
  Types out = {TensorType{dtype, *shape}};
  if (ctx.num_outputs() > 1) out.push_back(TensorType{DType::kInt64, *shape});
  return out;
}

absl::StatusOr<Types> InferAveragePool(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (!ctx.type(0).shape) return Types{TensorType{ctx.type(0).dtype, std::nullopt}};
  absl::StatusOr<Shape> shape = PoolShape(ctx, true);
  if (!shape.ok()) return shape.status();
  return Types{TensorType{ctx.type(0).dtype, *shape}};
}

absl::StatusOr<Types> GlobalPoolTypes(const InferContext& ctx) {
  const TensorType& x = ctx.type(0);
  if (absl::Status s = ExpectMinRank(x, 2, "X"); !s.ok()) return s;
  if (!x.shape) return Types{TensorType{x.dtype, std::nullopt}};
  Shape out(x.shape->size(), Dim(1));
  out[0] = (*x.shape)[0];
  out[1] = (*x.shape)[1];
  return Types{TensorType{x.dtype, std::move(out)}};
}

absl::StatusOr<Types> InferGlobalAveragePool(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  return GlobalPoolTypes(ctx);
}

absl::StatusOr<Types> InferGlobalMaxPool(const InferContext& ctx) {
  if (absl::Status s = ExpectNumeric(ctx); !s.ok()) return s;
  return GlobalPoolTypes(ctx);
}

// ---- Normalizations ----------------------------------------------------------------------------

// The channel dim (X's dim 1), unknown when X's rank is unknown.
Dim ChannelDim(const TensorType& x) { return x.shape ? (*x.shape)[1] : Dim(); }

absl::Status ExpectFloatParams(const InferContext& ctx, size_t first, size_t last) {
  for (size_t i = first; i <= last; ++i) {
    if (!ctx.has_input(i)) continue;
    if (absl::Status s = ExpectDType(ctx, i, kFloatTypes); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<Types> InferBatchNorm(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = ExpectFloatParams(ctx, 1, 4); !s.ok()) return s;
  const TensorType& x = ctx.type(0);
  if (absl::Status s = ExpectMinRank(x, 2, "X"); !s.ok()) return s;
  const Dim c = ChannelDim(x);
  const char* names[] = {"", "scale", "B", "mean", "var"};
  for (size_t i = 1; i <= 4; ++i) {
    if (!ctx.has_input(i)) return absl::InvalidArgumentError(absl::StrCat(names[i], " is missing"));
    if (absl::Status s = ExpectVector(ctx, i, c, names[i]); !s.ok()) return s;
  }
  Types out = {x};
  for (size_t o = 1; o < ctx.num_outputs(); ++o) {  // training mode running statistics
    out.push_back(TensorType{ctx.type(o == 1 ? 3 : 4).dtype, Shape{c}});
  }
  return out;
}

absl::StatusOr<Types> InferInstanceNorm(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = ExpectFloatParams(ctx, 1, 2); !s.ok()) return s;
  const TensorType& x = ctx.type(0);
  if (absl::Status s = ExpectMinRank(x, 2, "X"); !s.ok()) return s;
  const Dim c = ChannelDim(x);
  if (absl::Status s = ExpectVector(ctx, 1, c, "scale"); !s.ok()) return s;
  if (absl::Status s = ExpectVector(ctx, 2, c, "B"); !s.ok()) return s;
  return Types{x};
}

// An error unless input i (when present with known shape) broadcasts unidirectionally to dims.
absl::Status ExpectBroadcastsTo(const InferContext& ctx, size_t i, const Shape& dims, const char* name) {
  if (!ctx.has_input(i) || !ctx.type(i).shape) return absl::OkStatus();
  const Shape& s = *ctx.type(i).shape;
  bool ok = s.size() <= dims.size();
  for (size_t j = 0; ok && j < s.size(); ++j) {
    const Dim& d = s[j];
    const Dim& target = dims[j + dims.size() - s.size()];
    ok = !d.known() || d.value == 1 || !target.known() || d.value == target.value;
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " shape ", ir::ShapeToString(s), " does not broadcast to ", ir::ShapeToString(dims)));
  }
  return absl::OkStatus();
}

absl::StatusOr<DType> StashType(const ir::Attributes& attrs) {
  const int64_t code = attrs.GetInt("stash_type", 1);
  const DType d = static_cast<DType>(code);
  if (d != DType::kFloat32 && d != DType::kFloat16 && d != DType::kBFloat16 && d != DType::kFloat64) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported stash_type ", code));
  }
  return d;
}

absl::StatusOr<Types> InferLayerNorm(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = ExpectFloatParams(ctx, 1, 2); !s.ok()) return s;
  absl::StatusOr<DType> stash = StashType(ctx.attrs());
  if (!stash.ok()) return stash.status();
  const TensorType& x = ctx.type(0);
  if (!x.shape) {
    Types out = {x};
    for (size_t o = 1; o < ctx.num_outputs() && o < 3; ++o) out.push_back({*stash, std::nullopt});
    return out;
  }
  const Shape& xs = *x.shape;
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", -1), x.rank());
  if (!axis.ok()) return axis.status();
  const Shape norm(xs.begin() + *axis, xs.end());
  if (absl::Status s = ExpectBroadcastsTo(ctx, 1, norm, "Scale"); !s.ok()) return s;
  if (absl::Status s = ExpectBroadcastsTo(ctx, 2, norm, "B"); !s.ok()) return s;
  Shape stat(xs.begin(), xs.begin() + *axis);
  stat.resize(xs.size(), Dim(1));
  Types out = {x};
  for (size_t o = 1; o < ctx.num_outputs() && o < 3; ++o) out.push_back(TensorType{*stash, stat});
  return out;
}

// ---- MatMul and Gemm ---------------------------------------------------------------------------

absl::StatusOr<Types> InferMatMul(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = ExpectSameDType(ctx, 1); !s.ok()) return s;
  const TensorType& a = ctx.type(0);
  const TensorType& b = ctx.type(1);
  if (!a.shape || !b.shape) return Types{TensorType{a.dtype, std::nullopt}};
  if (a.rank() < 1 || b.rank() < 1) {
    return absl::InvalidArgumentError("MatMul inputs must have rank >= 1");
  }
  Shape as = *a.shape, bs = *b.shape;
  if (as.size() == 1) as.insert(as.begin(), Dim(1));
  if (bs.size() == 1) bs.push_back(Dim(1));
  const Dim& ka = as.back();
  const Dim& kb = bs[bs.size() - 2];
  if (ka.known() && kb.known() && ka.value != kb.value) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul shapes ", ir::ShapeToString(*a.shape), " and ",
                                                   ir::ShapeToString(*b.shape), " have mismatched inner dims"));
  }
  absl::StatusOr<Shape> batch = BroadcastShapes(Shape(as.begin(), as.end() - 2), Shape(bs.begin(), bs.end() - 2));
  if (!batch.ok()) return batch.status();
  Shape out = *std::move(batch);
  if (a.rank() > 1) out.push_back(as[as.size() - 2]);
  if (b.rank() > 1) out.push_back(bs.back());
  return Types{TensorType{a.dtype, std::move(out)}};
}

absl::StatusOr<Types> InferGemm(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, kFloatTypes); !s.ok()) return s;
  for (size_t i : {1, 2}) {
    if (absl::Status s = ExpectSameDType(ctx, i); !s.ok()) return s;
  }
  const TensorType& a = ctx.type(0);
  const TensorType& b = ctx.type(1);
  if ((a.shape && a.rank() != 2) || (b.shape && b.rank() != 2)) {
    return absl::InvalidArgumentError(absl::StrCat("Gemm needs 2-D A and B, got ranks ", a.rank(), " and ", b.rank()));
  }
  const bool ta = ctx.attrs().GetInt("transA", 0) != 0;
  const bool tb = ctx.attrs().GetInt("transB", 0) != 0;
  const Dim m = a.shape ? (*a.shape)[ta ? 1 : 0] : Dim();
  const Dim ka = a.shape ? (*a.shape)[ta ? 0 : 1] : Dim();
  const Dim kb = b.shape ? (*b.shape)[tb ? 1 : 0] : Dim();
  const Dim n = b.shape ? (*b.shape)[tb ? 0 : 1] : Dim();
  if (ka.known() && kb.known() && ka.value != kb.value) {
    return absl::InvalidArgumentError(absl::StrCat("Gemm inner dims differ: ", ka.value, " vs ", kb.value));
  }
  const Shape out = {m, n};
  if (absl::Status s = ExpectBroadcastsTo(ctx, 2, out, "C"); !s.ok()) return s;
  return Types{TensorType{a.dtype, out}};
}

}  // namespace

std::vector<OpDef> NnOpDefs() {
  return {
      {"Conv", 2, 3, InferConv},
      {"ConvTranspose", 2, 3, InferConvTranspose},
      {"BatchNormalization", 5, 5, InferBatchNorm},
      {"InstanceNormalization", 3, 3, InferInstanceNorm},
      {"LayerNormalization", 2, 3, InferLayerNorm},
      {"MatMul", 2, 2, InferMatMul},
      {"Gemm", 2, 3, InferGemm},
      {"MaxPool", 1, 1, InferMaxPool},
      {"AveragePool", 1, 1, InferAveragePool},
      {"GlobalAveragePool", 1, 1, InferGlobalAveragePool},
      {"GlobalMaxPool", 1, 1, InferGlobalMaxPool},
  };
}

}  // namespace ops
