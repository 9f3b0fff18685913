// MatchScaledConvs (scaled_conv_form.h): the Mul step's operand shapes, who reads its product, and
// the conv step's attributes and tail.
#include "runtime/scaled_conv_form.h"

#include <algorithm>

#include "runtime/pointwise_conv_form.h"

namespace exec {
namespace {

bool KnownIs(const ir::Dim& d, int64_t value) { return d.known() && d.value == value; }

// The Mul's operands as (x, gate) when one is [N, C, H, W] and the other [N, C, 1, 1] with the same
// known C and the same batch dim.
std::optional<std::pair<ir::ValueId, ir::ValueId>> MapAndGate(const ir::Graph& g, const ir::Node& mul) {
  if (mul.op_type != "Mul" || mul.inputs.size() != 2 || mul.inputs[0] == mul.inputs[1]) return std::nullopt;
  for (int first = 0; first < 2; ++first) {
    const ir::ValueId x = mul.inputs[first], gate = mul.inputs[1 - first];
    const ir::TensorType &xt = g.value(x).type, &st = g.value(gate).type;
    if (!xt.shape || !st.shape || xt.shape->size() != 4 || st.shape->size() != 4 || xt.dtype != st.dtype) continue;
    const ir::Shape &xs = *xt.shape, &ss = *st.shape;
    if (!xs[1].known() || !KnownIs(ss[1], xs[1].value) || !KnownIs(ss[2], 1) || !KnownIs(ss[3], 1)) continue;
    if (xs[0] != ss[0] || (KnownIs(xs[2], 1) && KnownIs(xs[3], 1))) continue;  // a map, not another gate
    if (g.value(x).constant || g.value(gate).constant) continue;
    return std::make_pair(x, gate);
  }
  return std::nullopt;
}

// The conv step's form given the product `y` it must read as the conv's input and nothing else.
std::optional<ScaledConvForm> ConvReading(const ir::Graph& g, const Step& step, ir::ValueId y, int64_t channels) {
  if (step.kind != StepKind::kFusedGraph || step.outputs.size() != 1) return std::nullopt;
  if (step.nodes.size() != 1 && step.nodes.size() != 2) return std::nullopt;
  const ir::Node& conv = g.node(step.nodes[0]);
  if (!CheckOneByOneConv(g, conv).ok() || conv.inputs[0] != y) return std::nullopt;
  const auto& w = g.value(conv.inputs[1]).constant;
  const std::string auto_pad = conv.attrs.GetString("auto_pad", "NOTSET");
  if (w->shape()[1] != channels || (auto_pad != "NOTSET" && auto_pad != "VALID")) return std::nullopt;
  const ir::DType dtype = g.value(y).type.dtype;
  const ir::ValueId bias = conv.input(2);
  if (w->dtype() != dtype ||
      (bias != ir::kNoValue && (g.value(bias).constant->dtype() != dtype ||
                                g.value(bias).constant->shape() != std::vector<int64_t>{w->shape()[0]}))) {
    return std::nullopt;
  }
  ScaledConvForm form;
  form.weights = conv.inputs[1];
  form.bias = bias;
  form.channels = channels;
  form.out_channels = w->shape()[0];
  if (step.nodes.size() == 2) {  // conv + residual Add
    const ir::Node& add = g.node(step.nodes[1]);
    const ir::ValueId c = conv.outputs[0];
    if (add.op_type != "Add" || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) return std::nullopt;
    if (add.inputs[0] != c && add.inputs[1] != c) return std::nullopt;
    form.residual = add.inputs[0] == c ? add.inputs[1] : add.inputs[0];
    const ir::TensorType &rt = g.value(form.residual).type, &ct = g.value(c).type;
    if (rt.dtype != dtype || !rt.shape || !ct.shape || *rt.shape != *ct.shape) return std::nullopt;
  }
  // Nothing in the step but the conv reads the product.
  for (size_t k = 1; k < step.nodes.size(); ++k) {
    const std::vector<ir::ValueId>& in = g.node(step.nodes[k]).inputs;
    if (std::find(in.begin(), in.end(), y) != in.end()) return std::nullopt;
  }
  return form;
}

}  // namespace

std::vector<std::optional<ScaledConvForm>> MatchScaledConvs(const Plan& plan) {
  const ir::Graph& g = plan.graph;
  std::vector<std::optional<ScaledConvForm>> forms(plan.steps.size());
  const std::vector<std::vector<size_t>> readers = StepReaders(plan);
  for (size_t m = 0; m < plan.steps.size(); ++m) {
    const Step& mul_step = plan.steps[m];
    if (mul_step.kind != StepKind::kKernel || mul_step.nodes.size() != 1 || mul_step.outputs.size() != 1) continue;
    const ir::Node& mul = g.node(mul_step.nodes[0]);
    const std::optional<std::pair<ir::ValueId, ir::ValueId>> operands = MapAndGate(g, mul);
    const ir::ValueId y = mul_step.outputs[0];
    if (!operands || mul.outputs.size() != 1 || mul.outputs[0] != y || g.IsGraphOutput(y)) continue;
    if (readers[y].size() != 1 || readers[y][0] <= m) continue;
    const size_t conv_step = readers[y][0];
    const int64_t channels = (*g.value(operands->first).type.shape)[1].value;
    std::optional<ScaledConvForm> form = ConvReading(g, plan.steps[conv_step], y, channels);
    if (!form) continue;
    form->mul_step = m;
    form->x = operands->first;
    form->gate = operands->second;
    forms[conv_step] = std::move(form);
  }
  return forms;
}

}  // namespace exec
