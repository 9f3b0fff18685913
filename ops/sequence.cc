// Sequence and optional ops: positions, Optional's type attribute, type inference (sequence.h).
#include "ops/sequence.h"

#include "absl/strings/str_cat.h"
#include "ops/control_flow.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"

namespace ops {
namespace {

using Types = std::vector<ir::TensorType>;

absl::Status ExpectSequence(const InferContext& ctx, size_t i) {
  if (ctx.has_input(i) && ctx.type(i).is_tensor_sequence()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("input ", i, " must be a sequence, not ", ctx.has_input(i) ? ctx.type(i).ToString() : "absent"));
}

absl::Status ExpectTensor(const InferContext& ctx, size_t i) {
  if (ctx.has_input(i) && ctx.type(i).is_tensor()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("input ", i, " must be a tensor, not ", ctx.has_input(i) ? ctx.type(i).ToString() : "absent"));
}

absl::Status ExpectPosition(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  if (absl::Status s = ExpectDType(ctx, i, {ir::DType::kInt32, ir::DType::kInt64}); !s.ok()) return s;
  return ExpectTensor(ctx, i);
}

// A tensor of `dtype` with no shape: element shapes are not tracked.
ir::TensorType ElementOf(ir::DType dtype) { return ir::TensorType{dtype, std::nullopt}; }

absl::StatusOr<Types> InferSequenceEmpty(const InferContext& ctx) {
  const auto dtype = static_cast<ir::DType>(ctx.attrs().GetInt("dtype", static_cast<int64_t>(ir::DType::kFloat32)));
  if (!ir::IsSupportedDType(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'dtype' ", static_cast<int>(dtype), " is unsupported"));
  }
  return Types{ir::TensorType::Sequence(dtype)};
}

absl::StatusOr<Types> InferSequenceConstruct(const InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (absl::Status s = ExpectTensor(ctx, i); !s.ok()) return s;
    if (ctx.type(i).dtype != ctx.type(0).dtype) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " is ", ir::DTypeName(ctx.type(i).dtype),
                                                     ", input 0 is ", ir::DTypeName(ctx.type(0).dtype)));
    }
  }
  return Types{ir::TensorType::Sequence(ctx.type(0).dtype)};
}

absl::StatusOr<Types> InferSequenceInsert(const InferContext& ctx) {
  if (absl::Status s = ExpectSequence(ctx, 0); !s.ok()) return s;
  if (absl::Status s = ExpectTensor(ctx, 1); !s.ok()) return s;
  if (absl::Status s = ExpectPosition(ctx, 2); !s.ok()) return s;
  if (ctx.type(1).dtype != ctx.type(0).dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("inserts ", ir::DTypeName(ctx.type(1).dtype), " into ", ctx.type(0).ToString()));
  }
  return Types{ir::TensorType::Sequence(ctx.type(0).dtype)};
}

absl::StatusOr<Types> InferSequenceAt(const InferContext& ctx) {
  if (absl::Status s = ExpectSequence(ctx, 0); !s.ok()) return s;
  if (absl::Status s = ExpectPosition(ctx, 1); !s.ok()) return s;
  return Types{ElementOf(ctx.type(0).dtype)};
}

absl::StatusOr<Types> InferSequenceErase(const InferContext& ctx) {
  if (absl::Status s = ExpectSequence(ctx, 0); !s.ok()) return s;
  if (absl::Status s = ExpectPosition(ctx, 1); !s.ok()) return s;
  return Types{ir::TensorType::Sequence(ctx.type(0).dtype)};
}

absl::StatusOr<Types> InferSequenceLength(const InferContext& ctx) {
  if (absl::Status s = ExpectSequence(ctx, 0); !s.ok()) return s;
  return Types{ir::TensorType{ir::DType::kInt64, ir::Shape()}};
}

absl::StatusOr<Types> InferConcatFromSequence(const InferContext& ctx) {
  if (absl::Status s = ExpectSequence(ctx, 0); !s.ok()) return s;
  if (!ctx.attrs().Has("axis")) return absl::InvalidArgumentError("attribute 'axis' is required");
  return Types{ElementOf(ctx.type(0).dtype)};
}

absl::StatusOr<Types> InferSplitToSequence(const InferContext& ctx) {
  if (absl::Status s = ExpectTensor(ctx, 0); !s.ok()) return s;
  if (ctx.has_input(1)) {
    if (absl::Status s = ExpectDType(ctx, 1, {ir::DType::kInt32, ir::DType::kInt64}); !s.ok()) return s;
  }
  return Types{ir::TensorType::Sequence(ctx.type(0).dtype)};
}

absl::StatusOr<Types> InferSequenceMap(const InferContext& ctx) {
  absl::StatusOr<const ir::Graph*> body = BodyOf(ctx.node, "body");
  if (!body.ok()) return body.status();
  absl::StatusOr<size_t> explicit_inputs = NumExplicitInputs(ctx.node, **body);
  if (!explicit_inputs.ok()) return explicit_inputs.status();
  if (absl::Status s = ExpectSequence(ctx, 0); !s.ok()) return s;
  if (NumFormalInputs(**body) != *explicit_inputs || (*body)->outputs().size() != ctx.num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat("its body has ", NumFormalInputs(**body), " inputs and ",
                                                   (*body)->outputs().size(), " outputs; the node has ",
                                                   *explicit_inputs, " inputs and ", ctx.num_outputs(), " outputs"));
  }
  Types types;
  for (ir::ValueId out : (*body)->outputs()) {
    types.push_back(ir::TensorType::Sequence((*body)->value(out).type.dtype));
  }
  return types;
}

absl::StatusOr<Types> InferOptional(const InferContext& ctx) {
  ir::TensorType type;
  if (ctx.has_input(0)) {
    type = ctx.type(0);
  } else {
    absl::StatusOr<ir::TensorType> declared = OptionalTypeAttribute(ctx.node);
    if (!declared.ok()) return declared.status();
    type = *declared;
  }
  type.shape.reset();
  type.optional = true;
  return Types{type};
}

absl::StatusOr<Types> InferOptionalHasElement(const InferContext&) {
  return Types{ir::TensorType{ir::DType::kBool, ir::Shape()}};
}

absl::StatusOr<Types> InferOptionalGetElement(const InferContext& ctx) {
  if (!ctx.has_input(0)) return absl::InvalidArgumentError("needs an input");
  ir::TensorType type = ctx.type(0);
  type.optional = false;
  return Types{type};
}

}  // namespace

absl::StatusOr<int64_t> SequencePosition(const ir::Tensor* position, int64_t length, int64_t default_position,
                                         bool inclusive_end) {
  if (position == nullptr) return default_position;
  if (!position->is_dense() || position->num_elements() != 1 ||
      (position->dtype() != ir::DType::kInt32 && position->dtype() != ir::DType::kInt64)) {
    return absl::InvalidArgumentError("'position' must be one int32 or int64 value");
  }
  const int64_t p = position->GetAsInt64(0);
  const int64_t end = inclusive_end ? length : length - 1;
  if (p < -length || p > end) {
    return absl::InvalidArgumentError(
        absl::StrCat("position ", p, " is outside [", -length, ", ", end, "] for a sequence of ", length));
  }
  return p < 0 ? p + length : p;
}

absl::StatusOr<ir::TensorType> OptionalTypeAttribute(const ir::Node& node) {
  const std::vector<int64_t> type = node.attrs.GetInts("type");
  if (type.size() != 2 || (type[0] != 0 && type[0] != 1) || !ir::IsSupportedDType(static_cast<ir::DType>(type[1]))) {
    return absl::InvalidArgumentError("without an input, attribute 'type' must name a tensor or sequence type");
  }
  const auto dtype = static_cast<ir::DType>(type[1]);
  return type[0] == 1 ? ir::TensorType::Sequence(dtype) : ir::TensorType{dtype, std::nullopt};
}

std::vector<OpDef> SequenceOpDefs() {
  constexpr int kAny = 1 << 20;
  constexpr bool kNonTensors = true;
  return {
      {"SequenceEmpty", 0, 0, InferSequenceEmpty},
      {"SequenceConstruct", 1, kAny, InferSequenceConstruct},
      {"SequenceInsert", 2, 3, InferSequenceInsert, kNonTensors},
      {"SequenceAt", 2, 2, InferSequenceAt, kNonTensors},
      {"SequenceErase", 1, 2, InferSequenceErase, kNonTensors},
      {"SequenceLength", 1, 1, InferSequenceLength, kNonTensors},
      {"ConcatFromSequence", 1, 1, InferConcatFromSequence, kNonTensors},
      {"SplitToSequence", 1, 2, InferSplitToSequence},
      {"SequenceMap", 1, kAny, InferSequenceMap, kNonTensors},
      {"Optional", 0, 1, InferOptional, kNonTensors},
      {"OptionalHasElement", 0, 1, InferOptionalHasElement, kNonTensors},
      {"OptionalGetElement", 1, 1, InferOptionalGetElement, kNonTensors},
  };
}

}  // namespace ops
