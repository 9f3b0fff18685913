// Owns the type/shape inference of the logic family: comparisons (Equal, Greater, GreaterOrEqual,
// Less, LessOrEqual), boolean logic (Not, And, Or, Xor), IsInf, IsNaN, Sign, Mod, BitShift and
// BitwiseAnd/Or/Xor/Not, plus the attribute parsers of ops/logic.h. Binary ops broadcast (numpy).
// Equal compares strings too (opset 19); every other op here refuses them.
#include "ops/logic.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::DType;
using InferResult = absl::StatusOr<std::vector<ir::TensorType>>;

bool IsInteger(DType d) {
  switch (d) {
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUint8:
    case DType::kUint16:
    case DType::kUint32:
    case DType::kUint64: return true;
    default: return false;
  }
}

absl::Status ExpectPresent(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing"));
  return absl::OkStatus();
}

// An error unless input i is present and pred(dtype) holds.
template <typename Pred>
absl::Status ExpectKind(const InferContext& ctx, size_t i, Pred pred, const char* kind) {
  if (absl::Status s = ExpectPresent(ctx, i); !s.ok()) return s;
  if (!pred(ctx.type(i).dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", i, " has unsupported dtype ", ir::DTypeName(ctx.type(i).dtype), " (", kind, " only)"));
  }
  return absl::OkStatus();
}

// Both inputs present, of one dtype accepted by pred.
template <typename Pred>
absl::Status ExpectSameKindPair(const InferContext& ctx, Pred pred, const char* kind) {
  if (absl::Status s = ExpectKind(ctx, 0, pred, kind); !s.ok()) return s;
  if (absl::Status s = ExpectPresent(ctx, 1); !s.ok()) return s;
  if (ctx.type(1).dtype != ctx.type(0).dtype) {
    return absl::InvalidArgumentError(absl::StrCat("input 1 has dtype ", ir::DTypeName(ctx.type(1).dtype),
                                                   " but input 0 has ", ir::DTypeName(ctx.type(0).dtype),
                                                   " (they must match)"));
  }
  return absl::OkStatus();
}

InferResult Broadcast(const InferContext& ctx, DType dtype) {
  absl::StatusOr<std::optional<ir::Shape>> shape = BroadcastInputs(ctx);
  if (!shape.ok()) return shape.status();
  return std::vector<ir::TensorType>{ir::TensorType{dtype, *shape}};
}

InferResult Unary(const InferContext& ctx, DType dtype) {
  return std::vector<ir::TensorType>{ir::TensorType{dtype, ctx.type(0).shape}};
}

bool IsNumericOrBool(DType d) { return ir::IsFloatingPoint(d) || IsInteger(d) || d == DType::kBool; }

// Equal, Greater, ...: two inputs of one dtype -> bool.
InferResult InferCompare(const InferContext& ctx) {
  if (absl::Status s = ExpectSameKindPair(ctx, IsNumericOrBool, "numeric or bool"); !s.ok()) return s;
  return Broadcast(ctx, DType::kBool);
}

// Equal also compares strings (opset 19), so its OpDef takes string tensors.
InferResult InferEqual(const InferContext& ctx) {
  const bool strings = ctx.node.opset >= 19;
  if (absl::Status s = ExpectSameKindPair(
          ctx, [strings](DType d) { return IsNumericOrBool(d) || (strings && d == DType::kString); },
          strings ? "numeric, bool or string" : "numeric or bool");
      !s.ok()) {
    return s;
  }
  return Broadcast(ctx, DType::kBool);
}

bool IsBool(DType d) { return d == DType::kBool; }

InferResult InferLogicBinary(const InferContext& ctx) {
  if (absl::Status s = ExpectSameKindPair(ctx, IsBool, "bool"); !s.ok()) return s;
  return Broadcast(ctx, DType::kBool);
}

InferResult InferNot(const InferContext& ctx) {
  if (absl::Status s = ExpectKind(ctx, 0, IsBool, "bool"); !s.ok()) return s;
  return Unary(ctx, DType::kBool);
}

InferResult InferIsNaN(const InferContext& ctx) {
  if (absl::Status s = ExpectKind(ctx, 0, ir::IsFloatingPoint, "floating point"); !s.ok()) return s;
  return Unary(ctx, DType::kBool);
}

InferResult InferIsInf(const InferContext& ctx) {
  if (absl::StatusOr<IsInfAttrs> a = ParseIsInfAttrs(ctx.node); !a.ok()) return a.status();
  return InferIsNaN(ctx);
}

bool IsNumeric(DType d) { return ir::IsFloatingPoint(d) || IsInteger(d); }

InferResult InferSign(const InferContext& ctx) {
  if (absl::Status s = ExpectKind(ctx, 0, IsNumeric, "numeric"); !s.ok()) return s;
  return Unary(ctx, ctx.type(0).dtype);
}

InferResult InferMod(const InferContext& ctx) {
  absl::StatusOr<ModAttrs> attrs = ParseModAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  if (absl::Status s = ExpectSameKindPair(ctx, IsNumeric, "numeric"); !s.ok()) return s;
  return Broadcast(ctx, ctx.type(0).dtype);
}

InferResult InferBitShift(const InferContext& ctx) {
  if (absl::StatusOr<BitShiftAttrs> a = ParseBitShiftAttrs(ctx.node); !a.ok()) return a.status();
  if (absl::Status s = ExpectSameKindPair(ctx, IsInteger, "integer"); !s.ok()) return s;
  return Broadcast(ctx, ctx.type(0).dtype);
}

InferResult InferBitwiseBinary(const InferContext& ctx) {
  if (absl::Status s = ExpectSameKindPair(ctx, IsInteger, "integer"); !s.ok()) return s;
  return Broadcast(ctx, ctx.type(0).dtype);
}

InferResult InferBitwiseNot(const InferContext& ctx) {
  if (absl::Status s = ExpectKind(ctx, 0, IsInteger, "integer"); !s.ok()) return s;
  return Unary(ctx, ctx.type(0).dtype);
}

}  // namespace

absl::StatusOr<IsInfAttrs> ParseIsInfAttrs(const ir::Node& node) {
  IsInfAttrs attrs;
  absl::StatusOr<bool> negative = ParseFlagAttribute(node, "detect_negative", true);
  if (!negative.ok()) return negative.status();
  absl::StatusOr<bool> positive = ParseFlagAttribute(node, "detect_positive", true);
  if (!positive.ok()) return positive.status();
  attrs.detect_negative = *negative;
  attrs.detect_positive = *positive;
  return attrs;
}

absl::StatusOr<ModAttrs> ParseModAttrs(const ir::Node& node) {
  absl::StatusOr<bool> fmod = ParseFlagAttribute(node, "fmod", false);
  if (!fmod.ok()) return fmod.status();
  return ModAttrs{*fmod};
}

absl::StatusOr<BitShiftAttrs> ParseBitShiftAttrs(const ir::Node& node) {
  if (!node.attrs.Has("direction")) return absl::InvalidArgumentError("attribute 'direction' is missing");
  const std::string direction = node.attrs.GetString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    return absl::InvalidArgumentError(absl::StrCat("direction must be \"LEFT\" or \"RIGHT\", got \"", direction, "\""));
  }
  return BitShiftAttrs{direction == "LEFT"};
}

std::vector<OpDef> LogicOpDefs() {
  return {
      {"Equal", 2, 2, InferEqual, /*takes_non_tensors=*/false, /*takes_strings=*/true},
      {"Greater", 2, 2, InferCompare},
      {"GreaterOrEqual", 2, 2, InferCompare},
      {"Less", 2, 2, InferCompare},
      {"LessOrEqual", 2, 2, InferCompare},
      {"Not", 1, 1, InferNot},
      {"And", 2, 2, InferLogicBinary},
      {"Or", 2, 2, InferLogicBinary},
      {"Xor", 2, 2, InferLogicBinary},
      {"IsInf", 1, 1, InferIsInf},
      {"IsNaN", 1, 1, InferIsNaN},
      {"Sign", 1, 1, InferSign},
      {"Mod", 2, 2, InferMod},
      {"BitShift", 2, 2, InferBitShift},
      {"BitwiseAnd", 2, 2, InferBitwiseBinary},
      {"BitwiseOr", 2, 2, InferBitwiseBinary},
      {"BitwiseXor", 2, 2, InferBitwiseBinary},
      {"BitwiseNot", 1, 1, InferBitwiseNot},
  };
}

}  // namespace ops
