// MatchMatmulEpilogue (see matmul_epilogue_form.h): the tail is walked node by node, each stage
// allowed once and only after the ones before it.
#include "runtime/matmul_epilogue_form.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

using Activation = kernels::cuda::MatmulEpilogueParams::Activation;

// The other input of a two-input node that reads `from`, or kNoValue.
ir::ValueId OtherInput(const ir::Node& node, ir::ValueId from) {
  if (node.inputs.size() != 2) return ir::kNoValue;
  if (node.inputs[0] == from) return node.inputs[1];
  return node.inputs[1] == from ? node.inputs[0] : ir::kNoValue;
}

// A constant with one value per output column: dims all 1 but the last, which is `columns`.
bool IsBiasRow(const ir::Graph& g, ir::ValueId id, const ir::Shape& out) {
  const auto& c = g.value(id).constant;
  if (!c || out.empty() || !out.back().known() || c->shape().empty() || c->shape().size() > out.size()) return false;
  for (size_t d = 0; d + 1 < c->shape().size(); ++d) {
    if (c->shape()[d] != 1) return false;
  }
  return c->shape().back() == out.back().value && IsFloat(c->dtype());
}

std::optional<Activation> ActivationOf(const ir::Node& node) {
  if (node.op_type == "Relu") return Activation::kRelu;
  if (node.op_type != "Gelu") return std::nullopt;
  const std::string approximate = node.attrs.GetString("approximate", "none");
  if (approximate == "none") return Activation::kGelu;
  if (approximate == "tanh") return Activation::kGeluTanh;
  return std::nullopt;
}

}  // namespace

absl::StatusOr<MatmulEpilogueForm> MatchMatmulEpilogue(const ir::Graph& g, const Step& step, bool allow_plain) {
  if (step.nodes.size() < (allow_plain ? 1u : 2u) || step.outputs.size() != 1) {
    return absl::UnimplementedError("no tail, or outputs");
  }
  const ir::Node& mm = g.node(step.nodes[0]);
  if (mm.op_type != "MatMul" || mm.inputs.size() != 2 || mm.outputs.size() != 1) {
    return absl::UnimplementedError("not a MatMul");
  }
  const auto& w = g.value(mm.inputs[1]).constant;
  if (!w || w->shape().size() != 2) return absl::UnimplementedError("weights not a constant matrix");
  const ir::TensorType& out = g.value(mm.outputs[0]).type;
  if (!out.shape || !IsFloat(out.dtype)) return absl::UnimplementedError("an untyped or non-float output");
  MatmulEpilogueForm form;
  form.x = mm.inputs[0];
  form.weights = mm.inputs[1];
  int stage = 0;  // 1 after the bias, 2 after the activation, 3 after the residual
  ir::ValueId last = mm.outputs[0];
  for (size_t k = 1; k < step.nodes.size(); ++k) {
    const ir::Node& node = g.node(step.nodes[k]);
    ir::ValueId other = OtherInput(node, last);
    const ir::NodeId producer = other == ir::kNoValue ? -1 : g.value(other).producer;
    if (other == last || std::find(step.nodes.begin(), step.nodes.end(), producer) != step.nodes.end()) {
      other = ir::kNoValue;  // computed inside the step: not an operand the kernel can read
    }
    const std::optional<Activation> act = ActivationOf(node);
    if (node.op_type == "Add" && other != ir::kNoValue && stage < 1 && IsBiasRow(g, other, *out.shape)) {
      form.bias = other;
      stage = 1;
    } else if (act && node.inputs.size() == 1 && node.inputs[0] == last && stage < 2) {
      form.activation = *act;
      stage = 2;
    } else if (node.op_type == "Add" && other != ir::kNoValue && stage < 3 && !g.value(other).constant &&
               g.value(other).type.shape == out.shape && g.value(other).type.dtype == out.dtype) {
      form.residual = other;
      stage = 3;
    } else {
      return absl::UnimplementedError(absl::StrCat(node.op_type, " after the matmul"));
    }
    if (node.outputs.size() != 1 || g.value(node.outputs[0]).type.shape != out.shape) {
      return absl::UnimplementedError("a tail op that changes the shape");
    }
    last = node.outputs[0];
  }
  if (last != step.outputs[0]) return absl::UnimplementedError("the step's output is not the tail's last value");
  return form;
}

}  // namespace exec
