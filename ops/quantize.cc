// The quantization ops and their type/shape inference: QuantizeLinear, DequantizeLinear
// (per-tensor or per-axis), DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and
// QLinearConv. The matmul and conv shapes come from MatMul's and Conv's own inference.
#include "absl/strings/str_cat.h"
#include "ir/narrow.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"

namespace ops {
namespace {

using ir::Dim;
using ir::DType;
using ir::Shape;
using ir::TensorType;
using Types = std::vector<TensorType>;

constexpr std::initializer_list<DType> kQuantTypes = {DType::kUint8, DType::kInt8};
constexpr std::initializer_list<DType> kScaleTypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                                      DType::kFloat64};

bool IsQuantType(DType d) {
  return d == DType::kUint8 || d == DType::kInt8 || d == DType::kUint16 || d == DType::kInt16 ||
         (ir::IsNarrowDType(d) && d != DType::kFloat8E8M0);  // float8/6/4, int4/2 (ir/narrow.h)
}

// An error unless input `i` (when present with a known shape) is a scalar, a 1-element vector, or
// (per_axis_size known) a vector of that many elements.
absl::Status ExpectQuantParam(const InferContext& ctx, size_t i, const Dim& per_axis_size, const char* name) {
  if (!ctx.has_input(i) || !ctx.type(i).shape) return absl::OkStatus();
  const Shape& s = *ctx.type(i).shape;
  if (s.empty() || (s.size() == 1 && (!s[0].known() || s[0].value == 1))) return absl::OkStatus();
  if (s.size() == 1 && (!per_axis_size.known() || s[0].value == per_axis_size.value)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(name, " has shape ", ir::ShapeToString(s), ", expected a scalar",
                   per_axis_size.known() ? absl::StrCat(" or [", per_axis_size.value, "]") : std::string()));
}

// True when input i is known to hold more than one value (a per-axis parameter).
bool IsPerAxis(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i) || !ctx.type(i).shape) return false;
  const Shape& s = *ctx.type(i).shape;
  return s.size() == 1 && s[0].known() && s[0].value != 1;
}

// The size of x's `axis` dim when a parameter is per-axis (unknown when x's rank is unknown);
// an error for a bad axis.
absl::StatusOr<Dim> AxisDim(const InferContext& ctx) {
  const TensorType& x = ctx.type(0);
  if (!x.shape || (!IsPerAxis(ctx, 1) && !IsPerAxis(ctx, 2))) return Dim();
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", 1), x.rank());
  if (!axis.ok()) return axis.status();
  return (*x.shape)[*axis];
}

// Scale (input 1) and zero point (input 2): per tensor or per axis; with block_size (opset 21),
// of x's rank (the kernel checks the blocked dims).
absl::Status ExpectQuantParams(const InferContext& ctx, const char* scale, const char* zero) {
  const int64_t block = ctx.attrs().GetInt("block_size", 0);
  if (block < 0) return absl::InvalidArgumentError(absl::StrCat("block_size ", block, " < 0"));
  for (size_t i : {1, 2}) {
    if (block > 0 && ctx.has_input(i) && ctx.type(i).shape && ctx.type(0).shape &&
        ctx.type(i).rank() != ctx.type(0).rank()) {
      return absl::InvalidArgumentError(absl::StrCat(i == 1 ? scale : zero, " must have x's rank for block_size"));
    }
  }
  if (block > 0) return absl::OkStatus();
  absl::StatusOr<Dim> axis_dim = AxisDim(ctx);
  if (!axis_dim.ok()) return axis_dim.status();
  for (size_t i : {1, 2}) {
    if (absl::Status s = ExpectQuantParam(ctx, i, *axis_dim, i == 1 ? scale : zero); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<Types> InferQuantize(const InferContext& ctx) {
  if (absl::Status s =
          ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt32});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectDType(ctx, 1, kScaleTypes); !s.ok()) return s;
  if (ctx.attrs().GetInt("precision", 0) != 0) {
    return absl::UnimplementedError("the precision attribute (opset 23) is not supported; leave it unset");
  }
  DType out = static_cast<DType>(ctx.attrs().GetInt("output_dtype", static_cast<int64_t>(DType::kUint8)));
  if (ctx.has_input(2)) out = ctx.type(2).dtype;
  if (!IsQuantType(out)) {
    return absl::InvalidArgumentError(absl::StrCat("quantized dtype ", ir::DTypeName(out), " not supported"));
  }
  if (absl::Status s = ExpectQuantParams(ctx, "y_scale", "y_zero_point"); !s.ok()) return s;
  return Types{TensorType{out, ctx.type(0).shape}};
}

absl::StatusOr<Types> InferDequantize(const InferContext& ctx) {
  if (!ctx.has_input(0)) return absl::InvalidArgumentError("x is missing");
  const DType in = ctx.type(0).dtype;
  if (!IsQuantType(in) && in != DType::kInt32) {
    return absl::InvalidArgumentError(absl::StrCat("x has unsupported dtype ", ir::DTypeName(in)));
  }
  if (absl::Status s = ExpectDType(ctx, 1, kScaleTypes); !s.ok()) return s;
  if (ctx.has_input(2) && ctx.type(2).dtype != in) {
    return absl::InvalidArgumentError("x_zero_point's dtype differs from x's");
  }
  if (absl::Status s = ExpectQuantParams(ctx, "x_scale", "x_zero_point"); !s.ok()) return s;
  const int64_t output_dtype = ctx.attrs().GetInt("output_dtype", 0);  // opset 23
  if (output_dtype != 0 && static_cast<DType>(output_dtype) != ctx.type(1).dtype) {
    return absl::UnimplementedError("an output_dtype other than x_scale's dtype is not supported");
  }
  return Types{TensorType{ctx.type(1).dtype, ctx.type(0).shape}};
}

absl::StatusOr<Types> InferDynamicQuantize(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32}); !s.ok()) return s;
  return Types{TensorType{DType::kUint8, ctx.type(0).shape}, TensorType{DType::kFloat32, Shape{}},
               TensorType{DType::kUint8, Shape{}}};
}

// The output shape of `op` (MatMul or Conv) on float32 stand-ins for the given inputs (each index
// into ctx, or -1 for absent).
absl::StatusOr<std::optional<Shape>> DelegateShape(const InferContext& ctx, const char* op,
                                                   std::initializer_list<int> inputs) {
  std::vector<TensorType> types;
  for (int i : inputs) types.push_back(i >= 0 && ctx.has_input(i) ? ctx.type(i) : TensorType{});
  InferContext sub{ctx.node, {}, {}};
  for (size_t j = 0; j < types.size(); ++j) {
    types[j].dtype = DType::kFloat32;
    const int i = *(inputs.begin() + j);
    sub.input_types.push_back(i >= 0 && ctx.has_input(i) ? &types[j] : nullptr);
    sub.input_values.push_back(nullptr);
  }
  absl::StatusOr<Types> out = FindOpDef(op)->infer(sub);
  if (!out.ok()) return out.status();
  return (*out)[0].shape;
}

// Zero points of A's rows / B's columns (or of X / W's output channels): same dtype as the data.
absl::Status ExpectZeroPoint(const InferContext& ctx, size_t zp, size_t data, const char* name) {
  if (!ctx.has_input(zp)) return absl::OkStatus();
  if (ctx.type(zp).dtype != ctx.type(data).dtype) {
    return absl::InvalidArgumentError(absl::StrCat(name, "'s dtype differs from its data's"));
  }
  if (ctx.type(zp).shape && ctx.type(zp).rank() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(name, " must be a scalar or 1-D"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Types> InferIntegerOp(const InferContext& ctx, const char* op) {
  for (size_t i : {0, 1}) {
    if (absl::Status s = ExpectDType(ctx, i, kQuantTypes); !s.ok()) return s;
  }
  if (absl::Status s = ExpectZeroPoint(ctx, 2, 0, "the first zero point"); !s.ok()) return s;
  if (absl::Status s = ExpectZeroPoint(ctx, 3, 1, "the second zero point"); !s.ok()) return s;
  absl::StatusOr<std::optional<Shape>> shape = DelegateShape(ctx, op, {0, 1});
  if (!shape.ok()) return shape.status();
  return Types{TensorType{DType::kInt32, *shape}};
}

absl::StatusOr<Types> InferMatMulInteger(const InferContext& ctx) { return InferIntegerOp(ctx, "MatMul"); }
absl::StatusOr<Types> InferConvInteger(const InferContext& ctx) { return InferIntegerOp(ctx, "Conv"); }

// QLinearMatMul / QLinearConv: (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp[, B]).
absl::StatusOr<Types> InferQLinear(const InferContext& ctx, const char* op, std::initializer_list<DType> scale_types) {
  for (size_t i : {0, 3, 7}) {
    if (absl::Status s = ExpectDType(ctx, i, kQuantTypes); !s.ok()) return s;
  }
  // QLinearMatMul-21 takes float16 and bfloat16 scales as QuantizeLinear does (one dtype for all
  // three); QLinearConv's are float32.
  for (size_t i : {1, 4, 6}) {
    if (absl::Status s = ExpectDType(ctx, i, scale_types); !s.ok()) return s;
    if (ctx.type(i).dtype != ctx.type(1).dtype) {
      return absl::InvalidArgumentError(absl::StrCat("the scales differ in dtype: a_scale ",
                                                     ir::DTypeName(ctx.type(1).dtype), ", input ", i, " ",
                                                     ir::DTypeName(ctx.type(i).dtype)));
    }
  }
  if (absl::Status s = ExpectZeroPoint(ctx, 2, 0, "the first zero point"); !s.ok()) return s;
  if (absl::Status s = ExpectZeroPoint(ctx, 5, 3, "the second zero point"); !s.ok()) return s;
  if (ctx.has_input(8)) {
    if (absl::Status s = ExpectDType(ctx, 8, {DType::kInt32}); !s.ok()) return s;
  }
  absl::StatusOr<std::optional<Shape>> shape = DelegateShape(ctx, op, {0, 3, 8});
  if (!shape.ok()) return shape.status();
  return Types{TensorType{ctx.type(7).dtype, *shape}};
}

absl::StatusOr<Types> InferQLinearMatMul(const InferContext& ctx) {
  if (ctx.num_inputs() != 8) return absl::InvalidArgumentError("QLinearMatMul takes 8 inputs");
  return InferQLinear(ctx, "MatMul", kScaleTypes);
}
absl::StatusOr<Types> InferQLinearConv(const InferContext& ctx) { return InferQLinear(ctx, "Conv", {DType::kFloat32}); }

}  // namespace

std::vector<OpDef> QuantizeOpDefs() {
  return {
      {"QuantizeLinear", 2, 3, InferQuantize},
      {"DequantizeLinear", 2, 3, InferDequantize},
      {"DynamicQuantizeLinear", 1, 1, InferDynamicQuantize},
      {"MatMulInteger", 2, 4, InferMatMulInteger},
      {"ConvInteger", 2, 4, InferConvInteger},
      {"QLinearMatMul", 8, 8, InferQLinearMatMul},
      {"QLinearConv", 8, 9, InferQLinearConv},
  };
}

}  // namespace ops
