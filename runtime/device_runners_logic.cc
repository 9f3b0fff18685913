// Device runners for the elementwise logic family: the comparisons Equal, Greater, GreaterOrEqual,
// Less, LessOrEqual, the boolean And, Or, Xor, Not, the predicates IsNaN and IsInf, and Mod
// (kernels/cuda/compare.h, kernels/cuda/mod.h). Operands are read in place, whatever their stored
// layout, through broadcast strides; output dims always come from the op's own inference.
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "absl/strings/string_view.h"
#include "kernels/cuda/broadcast.h"
#include "kernels/cuda/compare.h"
#include "kernels/cuda/mod.h"
#include "ops/logic.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

using ir::DType;
using kernels::cuda::BroadcastShape;
using kernels::cuda::CompareOp;
using kernels::cuda::ElementType;
using kernels::cuda::PredicateOp;

std::optional<ElementType> ElementTypeOf(DType d) {
  switch (d) {
    case DType::kFloat32: return ElementType::kFloat32;
    case DType::kFloat16: return ElementType::kFloat16;
    case DType::kBFloat16: return ElementType::kBFloat16;
    case DType::kInt8: return ElementType::kInt8;
    case DType::kUint8: return ElementType::kUint8;
    case DType::kInt32: return ElementType::kInt32;
    case DType::kInt64: return ElementType::kInt64;
    case DType::kBool: return ElementType::kBool;
    default: return std::nullopt;
  }
}

// The numeric dtypes the comparisons and Mod take (bool is not one).
bool IsNumericType(DType d) { return d != DType::kBool && ElementTypeOf(d).has_value(); }

// The dtype of a node with inputs (a, b) of one dtype and one output; kUndefined otherwise.
DType PairDType(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1) return DType::kUndefined;
  const DType a = InputDType(g, n, 0);
  return InputDType(g, n, 1) == a ? a : DType::kUndefined;
}

// The kernels' shape for writing `out` (dense) from `a` and, when given, `b`, each read in place
// through its broadcast strides. Unimplemented when an operand does not broadcast to `out`.
absl::StatusOr<BroadcastShape> ShapeFor(const Call& c, const DeviceTensor& out, const DeviceTensor& a,
                                        const DeviceTensor* b) {
  BroadcastShape shape;
  shape.rank = static_cast<int>(out.dims.size());
  for (int d = 0; d < shape.rank; ++d) shape.dims[d] = out.dims[d];
  for (const DeviceTensor* t : {&a, b}) {
    if (t == nullptr) continue;
    if (t->dims.size() > out.dims.size()) return c.Unsupported("operand rank above the output's");
    const size_t shift = out.dims.size() - t->dims.size();
    for (size_t i = 0; i < t->dims.size(); ++i) {
      if (t->dims[i] != 1 && t->dims[i] != out.dims[i + shift]) return c.Unsupported("operand does not broadcast");
    }
    const std::vector<int64_t> strides = t->BroadcastStrides(out.dims);
    int64_t* into = t == &a ? shape.a_strides : shape.b_strides;
    for (int d = 0; d < shape.rank; ++d) into[d] = strides[d];
  }
  return shape;
}

// ---- Comparisons and And, Or, Xor -----------------------------------------------------------------

CompareOp CompareOpOf(std::string_view op) {
  static const auto* ops = new std::map<std::string_view, CompareOp>{{"Equal", CompareOp::kEqual},
                                                                     {"Greater", CompareOp::kGreater},
                                                                     {"GreaterOrEqual", CompareOp::kGreaterOrEqual},
                                                                     {"Less", CompareOp::kLess},
                                                                     {"LessOrEqual", CompareOp::kLessOrEqual},
                                                                     {"And", CompareOp::kAnd},
                                                                     {"Or", CompareOp::kOr},
                                                                     {"Xor", CompareOp::kXor}};
  return ops->at(op);
}

// Numeric operands, or bool ones for Equal. The importer has rewritten opset < 7's `broadcast`.
bool SupportsCompare(const ir::Graph& g, const ir::Node& n) {
  const DType d = PairDType(g, n);
  return !n.attrs.Has("broadcast") && (IsNumericType(d) || (d == DType::kBool && n.op_type == "Equal"));
}

bool SupportsLogic(const ir::Graph& g, const ir::Node& n) {
  return !n.attrs.Has("broadcast") && PairDType(g, n) == DType::kBool;
}

Outputs RunCompare(const Call& c) {
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dtype != DType::kBool) return c.Unsupported("output not bool");
  absl::StatusOr<BroadcastShape> shape = ShapeFor(c, *out, c.in(0), &c.in(1));
  if (!shape.ok()) return shape.status();
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Compare(CompareOpOf(c.node.op_type), *ElementTypeOf(c.in(0).dtype),
                                                      c.in(0).data(), c.in(1).data(), out->data(), *shape, c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

// ---- Not, IsNaN, IsInf ----------------------------------------------------------------------------

bool OneInputOf(const ir::Graph& g, const ir::Node& n, bool (*accepts)(DType)) {
  return n.inputs.size() == 1 && n.outputs.size() == 1 && accepts(InputDType(g, n, 0));
}

bool SupportsNot(const ir::Graph& g, const ir::Node& n) {
  return OneInputOf(g, n, [](DType d) { return d == DType::kBool; });
}

bool SupportsIsNaN(const ir::Graph& g, const ir::Node& n) { return OneInputOf(g, n, IsFloat); }

bool SupportsIsInf(const ir::Graph& g, const ir::Node& n) {
  return OneInputOf(g, n, IsFloat) && ops::ParseIsInfAttrs(n).ok();
}

Outputs RunPredicate(const Call& c) {
  PredicateOp op = PredicateOp::kNot;
  kernels::cuda::PredicateParams params;
  if (c.node.op_type == "IsNaN") op = PredicateOp::kIsNaN;
  if (c.node.op_type == "IsInf") {
    absl::StatusOr<ops::IsInfAttrs> attrs = ops::ParseIsInfAttrs(c.node);
    if (!attrs.ok()) return c.Unsupported(attrs.status().message());
    op = PredicateOp::kIsInf;
    params.detect_negative = attrs->detect_negative;
    params.detect_positive = attrs->detect_positive;
  }
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dtype != DType::kBool || out->dims != c.in(0).dims) return c.Unsupported("output not bool of X's dims");
  absl::StatusOr<BroadcastShape> shape = ShapeFor(c, *out, c.in(0), nullptr);
  if (!shape.ok()) return shape.status();
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Predicate(op, params, *ElementTypeOf(c.in(0).dtype), c.in(0).data(),
                                                        out->data(), *shape, c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

// ---- Mod ------------------------------------------------------------------------------------------

// Whether `t` holds no zero (an integer divisor of zero is an error the host reports).
bool NoZero(const ir::Tensor& t) {
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.GetAsInt64(i) == 0) return false;
  }
  return true;
}

// Floats with fmod=1; integers only by a constant divisor without zeros.
bool SupportsMod(const ir::Graph& g, const ir::Node& n) {
  const DType d = PairDType(g, n);
  absl::StatusOr<ops::ModAttrs> attrs = ops::ParseModAttrs(n);
  if (!IsNumericType(d) || !attrs.ok()) return false;
  if (IsFloat(d)) return attrs->fmod;
  const ir::Tensor* divisor = ConstantInput(g, n, 1);
  return divisor != nullptr && NoZero(*divisor);
}

Outputs RunMod(const Call& c) {
  absl::StatusOr<ops::ModAttrs> attrs = ops::ParseModAttrs(c.node);
  if (!attrs.ok()) return c.Unsupported(attrs.status().message());
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dtype != c.in(0).dtype) return c.Unsupported("output dtype differs from the inputs'");
  absl::StatusOr<BroadcastShape> shape = ShapeFor(c, *out, c.in(0), &c.in(1));
  if (!shape.ok()) return shape.status();
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Mod(*ElementTypeOf(out->dtype), attrs->fmod, c.in(0).data(),
                                                  c.in(1).data(), out->data(), *shape, c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

}  // namespace

std::vector<DeviceRunnerDef> LogicRunners() {
  return {
      {"Equal", SupportsCompare, RunCompare},
      {"Greater", SupportsCompare, RunCompare},
      {"GreaterOrEqual", SupportsCompare, RunCompare},
      {"Less", SupportsCompare, RunCompare},
      {"LessOrEqual", SupportsCompare, RunCompare},
      {"And", SupportsLogic, RunCompare},
      {"Or", SupportsLogic, RunCompare},
      {"Xor", SupportsLogic, RunCompare},
      {"Not", SupportsNot, RunPredicate},
      {"IsNaN", SupportsIsNaN, RunPredicate},
      {"IsInf", SupportsIsInf, RunPredicate},
      {"Mod", SupportsMod, RunMod},
  };
}

}  // namespace exec
