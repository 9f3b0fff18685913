// Owns the type/shape inference of the elementwise family: activations, unary math, binary and
// variadic arithmetic with numpy broadcasting, Clip, Where, Cast and Identity.
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"

namespace ops {
namespace {

using ir::DType;
using InferResult = absl::StatusOr<std::vector<ir::TensorType>>;

constexpr int kVariadic = std::numeric_limits<int>::max();

bool IsNumeric(DType dtype) { return ir::IsSupportedDType(dtype) && dtype != DType::kBool; }

absl::Status ExpectPresent(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing"));
  return absl::OkStatus();
}

absl::Status ExpectFloat(const InferContext& ctx, size_t i) {
  return ExpectDType(ctx, i, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
}

absl::Status ExpectNumeric(const InferContext& ctx, size_t i) {
  if (absl::Status s = ExpectPresent(ctx, i); !s.ok()) return s;
  if (!IsNumeric(ctx.type(i).dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("input ", i, " has unsupported dtype ",
                                                   ir::DTypeName(ctx.type(i).dtype), " (numeric dtypes only)"));
  }
  return absl::OkStatus();
}

absl::Status ExpectSupported(const InferContext& ctx, size_t i) {
  if (absl::Status s = ExpectPresent(ctx, i); !s.ok()) return s;
  if (!ir::IsSupportedDType(ctx.type(i).dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", i, " has unsupported dtype ", ir::DTypeName(ctx.type(i).dtype)));
  }
  return absl::OkStatus();
}

// An error unless input i (when present) has the dtype of input `ref`.
absl::Status ExpectSameDType(const InferContext& ctx, size_t i, size_t ref) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  if (ctx.type(i).dtype != ctx.type(ref).dtype) {
    return absl::InvalidArgumentError(absl::StrCat("input ", i, " has dtype ", ir::DTypeName(ctx.type(i).dtype),
                                                   " but input ", ref, " has ", ir::DTypeName(ctx.type(ref).dtype),
                                                   " (they must match)"));
  }
  return absl::OkStatus();
}

// Every output gets `type`.
InferResult AllOutputs(const InferContext& ctx, const ir::TensorType& type) {
  return std::vector<ir::TensorType>(std::max<size_t>(1, ctx.num_outputs()), type);
}

// Output dtype `dtype`, shape the broadcast of every present input.
InferResult BroadcastOutput(const InferContext& ctx, DType dtype) {
  absl::StatusOr<std::optional<ir::Shape>> shape = BroadcastInputs(ctx);
  if (!shape.ok()) return shape.status();
  return AllOutputs(ctx, ir::TensorType{dtype, *shape});
}

InferResult InferFloatUnary(const InferContext& ctx) {
  if (absl::Status s = ExpectFloat(ctx, 0); !s.ok()) return s;
  return AllOutputs(ctx, ctx.type(0));
}

InferResult InferNumericUnary(const InferContext& ctx) {
  if (absl::Status s = ExpectNumeric(ctx, 0); !s.ok()) return s;
  return AllOutputs(ctx, ctx.type(0));
}

// An error unless input i is present with any dtype a tensor can hold, strings included.
absl::Status ExpectTensorDType(const InferContext& ctx, size_t i) {
  if (absl::Status s = ExpectPresent(ctx, i); !s.ok()) return s;
  if (!ir::IsTensorDType(ctx.type(i).dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", i, " has unsupported dtype ", ir::DTypeName(ctx.type(i).dtype)));
  }
  return absl::OkStatus();
}

InferResult InferIdentity(const InferContext& ctx) {
  if (absl::Status s = ExpectTensorDType(ctx, 0); !s.ok()) return s;
  return AllOutputs(ctx, ctx.type(0));
}

InferResult InferGelu(const InferContext& ctx) {
  const std::string approximate = ctx.attrs().GetString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    return absl::InvalidArgumentError(
        absl::StrCat("approximate must be \"none\" or \"tanh\", got \"", approximate, "\""));
  }
  return InferFloatUnary(ctx);
}

// Add, Sub, Mul, Div, Min, Max, Sum: numeric inputs of one dtype, broadcast.
InferResult InferSameTypeBroadcast(const InferContext& ctx) {
  if (absl::Status s = ExpectNumeric(ctx, 0); !s.ok()) return s;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (absl::Status s = ExpectPresent(ctx, i); !s.ok()) return s;
    if (absl::Status s = ExpectSameDType(ctx, i, 0); !s.ok()) return s;
  }
  return BroadcastOutput(ctx, ctx.type(0).dtype);
}

// Pow: base and exponent of any numeric dtypes; the result has the base's dtype.
InferResult InferPow(const InferContext& ctx) {
  if (absl::Status s = ExpectNumeric(ctx, 0); !s.ok()) return s;
  if (absl::Status s = ExpectNumeric(ctx, 1); !s.ok()) return s;
  return BroadcastOutput(ctx, ctx.type(0).dtype);
}

// True when PRelu uses the opset < 7 form: a 1-D slope of one value per channel (dim 1 of X).
bool IsLegacyChannelSlope(const InferContext& ctx) {
  if (ctx.node.opset >= 7) return false;
  const ir::TensorType& x = ctx.type(0);
  const ir::TensorType& slope = ctx.type(1);
  if (!x.shape || !slope.shape || x.shape->size() < 2 || slope.shape->size() != 1) return false;
  const ir::Dim& c = (*slope.shape)[0];
  return c.known() && c.value != 1 && (*x.shape)[1] == c;
}

// PRelu: slope broadcasts unidirectionally to X; the output has X's type.
InferResult InferPRelu(const InferContext& ctx) {
  if (absl::Status s = ExpectNumeric(ctx, 0); !s.ok()) return s;
  if (absl::Status s = ExpectPresent(ctx, 1); !s.ok()) return s;
  if (absl::Status s = ExpectSameDType(ctx, 1, 0); !s.ok()) return s;
  const ir::TensorType& x = ctx.type(0);
  const ir::TensorType& slope = ctx.type(1);
  if (x.shape && slope.shape && !IsLegacyChannelSlope(ctx)) {
    const ir::Shape& xs = *x.shape;
    const ir::Shape& ss = *slope.shape;
    bool ok = ss.size() <= xs.size();
    for (size_t i = 0; ok && i < ss.size(); ++i) {
      const ir::Dim& sd = ss[i];
      const ir::Dim& xd = xs[xs.size() - ss.size() + i];
      ok = !sd.known() || sd.value == 1 || !xd.known() || sd.value == xd.value;
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("slope shape ", ir::ShapeToString(ss),
                                                     " does not broadcast to X shape ", ir::ShapeToString(xs)));
    }
  }
  return AllOutputs(ctx, x);
}

// Where(cond, X, Y): cond bool, X and Y of one dtype, all three broadcast.
InferResult InferWhere(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kBool}); !s.ok()) return s;
  if (ctx.has_input(1) && ctx.type(1).dtype != DType::kString) {  // strings: ops::MovesElementsOnly
    if (absl::Status s = ExpectSupported(ctx, 1); !s.ok()) return s;
  }
  if (absl::Status s = ExpectPresent(ctx, 2); !s.ok()) return s;
  if (absl::Status s = ExpectSameDType(ctx, 2, 1); !s.ok()) return s;
  return BroadcastOutput(ctx, ctx.type(1).dtype);
}

// Clip(x, min?, max?): bounds are scalars of x's dtype.
InferResult InferClip(const InferContext& ctx) {
  if (absl::Status s = ExpectNumeric(ctx, 0); !s.ok()) return s;
  for (size_t i : {1, 2}) {
    if (absl::Status s = ExpectSameDType(ctx, i, 0); !s.ok()) return s;
    if (absl::Status s = ExpectScalarLike(ctx, i, i == 1 ? "min" : "max"); !s.ok()) return s;
  }
  return AllOutputs(ctx, ctx.type(0));
}

// Cast between any two dtypes, strings included (kernels/cpu/string_cast.h).
InferResult InferCast(const InferContext& ctx) {
  if (absl::Status s = ExpectTensorDType(ctx, 0); !s.ok()) return s;
  if (!ctx.attrs().Has("to")) return absl::InvalidArgumentError("attribute 'to' is missing");
  const int64_t to = ctx.attrs().GetInt("to", 0);
  const bool in_range = to > 0 && to <= std::numeric_limits<int32_t>::max();
  const DType dtype = in_range ? static_cast<DType>(to) : DType::kUndefined;
  if (!ir::IsTensorDType(dtype)) {
    const std::string name = in_range ? ir::DTypeName(dtype) : "an unknown dtype";
    return absl::UnimplementedError(absl::StrCat("Cast to ", name, " (code ", to, ") is not supported"));
  }
  return AllOutputs(ctx, ir::TensorType{dtype, ctx.type(0).shape});
}

// BitCast (opset 26): the same bits as another dtype of the same width; X's shape.
InferResult InferBitCast(const InferContext& ctx) {
  if (absl::Status s = ExpectSupported(ctx, 0); !s.ok()) return s;
  const int64_t to = ctx.attrs().GetInt("to", 0);
  const DType dtype = to > 0 && to <= std::numeric_limits<int32_t>::max() ? static_cast<DType>(to) : DType::kUndefined;
  if (!ir::IsSupportedDType(dtype)) {
    return absl::UnimplementedError(absl::StrCat("BitCast to dtype code ", to, " is not supported"));
  }
  if (ir::DTypeSize(dtype) != ir::DTypeSize(ctx.type(0).dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("BitCast from ", ir::DTypeName(ctx.type(0).dtype), " to ",
                                                   ir::DTypeName(dtype), " changes the bit width"));
  }
  return AllOutputs(ctx, ir::TensorType{dtype, ctx.type(0).shape});
}

}  // namespace

std::vector<OpDef> ElementwiseOpDefs() {
  return {
      // Activations.
      {"Relu", 1, 1, InferNumericUnary},
      {"LeakyRelu", 1, 1, InferFloatUnary},
      {"PRelu", 2, 2, InferPRelu},
      {"Elu", 1, 1, InferFloatUnary},
      {"Selu", 1, 1, InferFloatUnary},
      {"Sigmoid", 1, 1, InferFloatUnary},
      {"Tanh", 1, 1, InferFloatUnary},
      {"HardSigmoid", 1, 1, InferFloatUnary},
      {"HardSwish", 1, 1, InferFloatUnary},
      {"Softplus", 1, 1, InferFloatUnary},
      {"Gelu", 1, 1, InferGelu},
      // Unary math.
      {"Erf", 1, 1, InferFloatUnary},
      {"Sqrt", 1, 1, InferFloatUnary},
      {"Exp", 1, 1, InferFloatUnary},
      {"Log", 1, 1, InferFloatUnary},
      {"Reciprocal", 1, 1, InferFloatUnary},
      {"Neg", 1, 1, InferNumericUnary},
      {"Abs", 1, 1, InferNumericUnary},
      // Binary and variadic arithmetic.
      {"Add", 2, 2, InferSameTypeBroadcast},
      {"Sub", 2, 2, InferSameTypeBroadcast},
      {"Mul", 2, 2, InferSameTypeBroadcast},
      {"Div", 2, 2, InferSameTypeBroadcast},
      {"Pow", 2, 2, InferPow},
      {"Min", 1, kVariadic, InferSameTypeBroadcast},
      {"Max", 1, kVariadic, InferSameTypeBroadcast},
      {"Sum", 1, kVariadic, InferSameTypeBroadcast},
      // Selection, bounds, types and copies.
      {"Where", 3, 3, InferWhere},
      {"Clip", 1, 3, InferClip},
      {"Cast", 1, 1, InferCast, /*takes_non_tensors=*/false, /*takes_strings=*/true},
      {"BitCast", 1, 1, InferBitCast},
      {"Identity", 1, 1, InferIdentity, /*takes_non_tensors=*/true, /*takes_strings=*/true},
  };
}

}  // namespace ops
