// If, Loop, Scan: input layout, Scan's attributes, and their type/shape inference (control_flow.h).
#include "ops/control_flow.h"

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"

namespace ops {
namespace {

using Types = std::vector<ir::TensorType>;

// The type both `a` and `b` fit: b's dtype; dims kept where they agree, unknown where they differ;
// no shape when the ranks differ or either is unknown.
ir::TensorType Merge(const ir::TensorType& a, const ir::TensorType& b) {
  ir::TensorType merged{b.dtype, std::nullopt, b.kind, a.optional || b.optional, b.map_key};
  if (!a.shape || !b.shape || a.shape->size() != b.shape->size()) return merged;
  merged.shape = ir::Shape();
  for (size_t i = 0; i < a.shape->size(); ++i) {
    merged.shape->push_back((*a.shape)[i] == (*b.shape)[i] ? (*a.shape)[i] : ir::Dim());
  }
  return merged;
}

const ir::TensorType& BodyOutput(const ir::Graph& body, size_t i) { return body.value(body.outputs()[i]).type; }

// `type` with `dim` inserted at `axis` (in [-rank-1, rank]); no shape when the rank is unknown.
absl::StatusOr<ir::TensorType> WithDimAt(const ir::TensorType& type, int64_t axis, ir::Dim dim) {
  if (type.kind != ir::ValueKind::kTensor || type.optional || type.dtype == ir::DType::kString) {
    return absl::UnimplementedError(
        absl::StrCat("a stacked body output must be a numeric tensor, not ", type.ToString()));
  }
  ir::TensorType out{type.dtype, std::nullopt};
  if (!type.shape) return out;
  absl::StatusOr<int64_t> at = NormalizeAxis(axis, static_cast<int64_t>(type.shape->size()) + 1);
  if (!at.ok()) return at.status();
  out.shape = *type.shape;
  out.shape->insert(out.shape->begin() + *at, dim);
  return out;
}

absl::Status ExpectOutputs(const InferContext& ctx, size_t expected) {
  if (ctx.num_outputs() == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("has ", ctx.num_outputs(), " outputs; its body gives ", expected, " (carried and scan outputs)"));
}

absl::StatusOr<Types> InferIf(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {ir::DType::kBool}); !s.ok()) return s;
  absl::StatusOr<const ir::Graph*> then_branch = BodyOf(ctx.node, "then_branch");
  if (!then_branch.ok()) return then_branch.status();
  absl::StatusOr<const ir::Graph*> else_branch = BodyOf(ctx.node, "else_branch");
  if (!else_branch.ok()) return else_branch.status();
  for (const ir::Graph* branch : {*then_branch, *else_branch}) {
    if (branch->outputs().size() != ctx.num_outputs() || NumFormalInputs(*branch) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("a branch has ", NumFormalInputs(*branch), " inputs and ",
                                                     branch->outputs().size(), " outputs; expected 0 inputs and ",
                                                     ctx.num_outputs(), " outputs"));
    }
    if (absl::StatusOr<size_t> n = NumExplicitInputs(ctx.node, *branch); !n.ok() || *n != 1) {
      return n.ok() ? absl::InvalidArgumentError("takes exactly one explicit input (cond)") : n.status();
    }
  }
  Types types;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const ir::TensorType& a = BodyOutput(**then_branch, i);
    const ir::TensorType& b = BodyOutput(**else_branch, i);
    if (a.dtype != b.dtype) {
      return absl::InvalidArgumentError(absl::StrCat("output ", i, " is ", ir::DTypeName(a.dtype),
                                                     " in then_branch but ", ir::DTypeName(b.dtype),
                                                     " in else_branch"));
    }
    types.push_back(Merge(a, b));
  }
  return types;
}

// The trip count when it is a known constant and no condition can stop the loop early.
ir::Dim LoopTripDim(const InferContext& ctx) {
  const ir::Tensor* m = ctx.value(0);
  if (m == nullptr || ctx.has_input(1) || m->dtype() != ir::DType::kInt64 || m->num_elements() != 1) return ir::Dim();
  const int64_t trips = m->data<int64_t>()[0];
  return trips >= 0 ? ir::Dim(trips) : ir::Dim();
}

absl::StatusOr<Types> InferLoop(const InferContext& ctx) {
  absl::StatusOr<const ir::Graph*> body = BodyOf(ctx.node, "body");
  if (!body.ok()) return body.status();
  absl::StatusOr<size_t> explicit_inputs = NumExplicitInputs(ctx.node, **body);
  if (!explicit_inputs.ok()) return explicit_inputs.status();
  if (*explicit_inputs < 2) return absl::InvalidArgumentError("needs the inputs M and cond (either may be empty)");
  const size_t carried = *explicit_inputs - 2;
  const size_t body_outputs = (*body)->outputs().size();
  if (NumFormalInputs(**body) != 2 + carried || body_outputs < 1 + carried) {
    return absl::InvalidArgumentError(
        absl::StrCat("its body has ", NumFormalInputs(**body), " inputs and ", body_outputs, " outputs; with ", carried,
                     " carried values it needs ", 2 + carried, " inputs and at least ", 1 + carried, " outputs"));
  }
  if (ctx.has_input(0)) {
    if (absl::Status s = ExpectDType(ctx, 0, {ir::DType::kInt64}); !s.ok()) return s;
  }
  if (ctx.has_input(1)) {
    if (absl::Status s = ExpectDType(ctx, 1, {ir::DType::kBool}); !s.ok()) return s;
  }
  if (absl::Status s = ExpectOutputs(ctx, body_outputs - 1); !s.ok()) return s;
  Types types;
  for (size_t i = 0; i < carried; ++i) {
    if (!ctx.has_input(2 + i)) return absl::InvalidArgumentError(absl::StrCat("carried value ", i, " is missing"));
    ir::TensorType merged = Merge(ctx.type(2 + i), BodyOutput(**body, 1 + i));
    merged.optional = BodyOutput(**body, 1 + i).optional;  // v_final has the body output's type
    types.push_back(std::move(merged));
  }
  for (size_t k = 1 + carried; k < body_outputs; ++k) {
    absl::StatusOr<ir::TensorType> stacked = WithDimAt(BodyOutput(**body, k), 0, LoopTripDim(ctx));
    if (!stacked.ok()) return stacked.status();
    types.push_back(*std::move(stacked));
  }
  return types;
}

// The sequence length of the scan inputs: the dim at each one's axis (agreeing where known).
absl::StatusOr<ir::Dim> ScanLength(const InferContext& ctx, const ScanAttrs& attrs) {
  ir::Dim length;
  const size_t lead = attrs.batched ? 1 : 0;
  for (size_t j = 0; j < attrs.num_scan_inputs; ++j) {
    const size_t input = attrs.first_input + attrs.num_state + j;
    if (!ctx.has_input(input)) return absl::InvalidArgumentError(absl::StrCat("scan input ", j, " is missing"));
    const ir::TensorType& t = ctx.type(input);
    if (!t.shape) continue;
    const int64_t rank = static_cast<int64_t>(t.shape->size()) - static_cast<int64_t>(lead);
    absl::StatusOr<int64_t> axis = NormalizeAxis(attrs.input_axes[j], rank);
    if (!axis.ok()) return absl::InvalidArgumentError(absl::StrCat("scan input ", j, ": ", axis.status().message()));
    const ir::Dim& d = (*t.shape)[lead + *axis];
    if (d.known() && length.known() && d.value != length.value) {
      return absl::InvalidArgumentError(
          absl::StrCat("scan inputs have different lengths (", length.value, " and ", d.value, ")"));
    }
    if (!length.known()) length = d;
  }
  return length;
}

absl::StatusOr<Types> InferScan(const InferContext& ctx) {
  absl::StatusOr<ScanAttrs> attrs = ParseScanAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<const ir::Graph*> body = BodyOf(ctx.node, "body");
  if (!body.ok()) return body.status();
  absl::StatusOr<ir::Dim> length = ScanLength(ctx, *attrs);
  if (!length.ok()) return length.status();
  ir::Dim batch;
  if (attrs->batched && ctx.has_input(1) && ctx.type(1).shape && !ctx.type(1).shape->empty()) {
    batch = (*ctx.type(1).shape)[0];
  }
  Types types;
  for (size_t i = 0; i < attrs->num_state; ++i) {
    if (!ctx.has_input(attrs->first_input + i)) {
      return absl::InvalidArgumentError(absl::StrCat("state ", i, " is missing"));
    }
    absl::StatusOr<ir::TensorType> out = BodyOutput(**body, i);
    if (attrs->batched) out = WithDimAt(*out, 0, batch);
    if (!out.ok()) return out.status();
    types.push_back(Merge(ctx.type(attrs->first_input + i), *out));
  }
  for (size_t k = 0; k < attrs->num_scan_outputs; ++k) {
    absl::StatusOr<ir::TensorType> out =
        WithDimAt(BodyOutput(**body, attrs->num_state + k), attrs->output_axes[k], *length);
    if (attrs->batched && out.ok()) out = WithDimAt(*out, 0, batch);
    if (!out.ok()) return absl::InvalidArgumentError(absl::StrCat("scan output ", k, ": ", out.status().message()));
    types.push_back(*std::move(out));
  }
  return types;
}

}  // namespace

bool IsControlFlowOp(std::string_view op_type) { return op_type == "If" || op_type == "Loop" || op_type == "Scan"; }

absl::StatusOr<const ir::Graph*> BodyOf(const ir::Node& node, const std::string& name) {
  const ir::Graph* body = node.attrs.GetGraph(name);
  if (body == nullptr) return absl::InvalidArgumentError(absl::StrCat("graph attribute '", name, "' is missing"));
  return body;
}

size_t NumFormalInputs(const ir::Graph& body) {
  return body.inputs().size() - static_cast<size_t>(body.num_captured_inputs);
}

absl::StatusOr<size_t> NumExplicitInputs(const ir::Node& node, const ir::Graph& body) {
  const size_t captured = static_cast<size_t>(body.num_captured_inputs);
  if (node.inputs.size() < captured || body.inputs().size() < captured) {
    return absl::InvalidArgumentError(absl::StrCat("has ", node.inputs.size(), " inputs but its body reads ", captured,
                                                   " values of the enclosing graph"));
  }
  return node.inputs.size() - captured;
}

namespace {

// A per-input (or per-output) list attribute: `count` values, zeros when absent.
absl::StatusOr<std::vector<int64_t>> PerItem(const ir::Node& node, const char* name, size_t count, bool direction) {
  if (!node.attrs.Has(name)) return std::vector<int64_t>(count, 0);
  std::vector<int64_t> values = node.attrs.GetInts(name);
  if (values.size() != count) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute '", name, "' has ", values.size(), " values, expected ", count));
  }
  for (int64_t v : values) {
    if (direction && v != 0 && v != 1) {
      return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' must hold 0 or 1, not ", v));
    }
  }
  return values;
}

}  // namespace

absl::StatusOr<ScanAttrs> ParseScanAttrs(const ir::Node& node) {
  absl::StatusOr<const ir::Graph*> body = BodyOf(node, "body");
  if (!body.ok()) return body.status();
  absl::StatusOr<size_t> explicit_inputs = NumExplicitInputs(node, **body);
  if (!explicit_inputs.ok()) return explicit_inputs.status();
  ScanAttrs attrs;
  attrs.batched = node.opset < 9;
  attrs.first_input = attrs.batched ? 1 : 0;
  const int64_t m = node.attrs.GetInt("num_scan_inputs", 0);
  if (m < 1 || static_cast<size_t>(m) + attrs.first_input > *explicit_inputs) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'num_scan_inputs' is ", m, "; it must be in [1, ",
                                                   *explicit_inputs - attrs.first_input, "]"));
  }
  attrs.num_scan_inputs = static_cast<size_t>(m);
  attrs.num_state = *explicit_inputs - attrs.first_input - attrs.num_scan_inputs;
  const size_t body_outputs = (*body)->outputs().size();
  if (NumFormalInputs(**body) != attrs.num_state + attrs.num_scan_inputs || body_outputs < attrs.num_state ||
      node.outputs.size() != body_outputs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "its body has ", NumFormalInputs(**body), " inputs and ", body_outputs, " outputs, the node ",
        node.outputs.size(), " outputs; with ", attrs.num_state, " states and ", m, " scan inputs the body needs ",
        attrs.num_state + attrs.num_scan_inputs, " inputs and the node as many outputs as the body"));
  }
  attrs.num_scan_outputs = body_outputs - attrs.num_state;
  const char* in_dirs = attrs.batched ? "directions" : "scan_input_directions";
  auto input_directions = PerItem(node, in_dirs, attrs.num_scan_inputs, true);
  auto output_directions = PerItem(node, "scan_output_directions", attrs.num_scan_outputs, true);
  auto input_axes = PerItem(node, "scan_input_axes", attrs.num_scan_inputs, false);
  auto output_axes = PerItem(node, "scan_output_axes", attrs.num_scan_outputs, false);
  for (const auto* list : {&input_directions, &output_directions, &input_axes, &output_axes}) {
    if (!list->ok()) return list->status();
  }
  attrs.input_directions = *std::move(input_directions);
  attrs.output_directions = *std::move(output_directions);
  attrs.input_axes = *std::move(input_axes);
  attrs.output_axes = *std::move(output_axes);
  return attrs;
}

std::vector<OpDef> ControlFlowOpDefs() {
  constexpr int kAny = 1 << 20;  // implicit inputs follow the explicit ones
  return {{"If", 1, kAny, InferIf, true}, {"Loop", 0, kAny, InferLoop, true}, {"Scan", 0, kAny, InferScan}};
}

}  // namespace ops
