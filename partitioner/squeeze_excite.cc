// MatchSqueezeExcite (squeeze_excite.h): follows the chain from the first 1x1 conv, checking each
// link's op, attributes, shapes and readers.
#include "partitioner/squeeze_excite.h"

#include <algorithm>

#include "partitioner/channel_padding.h"

namespace partitioner {
namespace {

using ir::NodeId;
using ir::ValueId;

// A value [N, C, 1, 1] (N may be symbolic): its C, or 0.
int64_t PooledChannels(const ir::Graph& graph, ValueId v) {
  const ir::TensorType& t = graph.value(v).type;
  if (!t.shape || t.shape->size() != 4) return 0;
  const ir::Shape& s = *t.shape;
  if (!s[1].known() || !s[2].known() || !s[3].known() || s[2].value != 1 || s[3].value != 1) return 0;
  return s[1].value;
}

bool IsConstantOf(const ir::Graph& graph, ValueId v, ir::DType dtype, const std::vector<int64_t>& shape) {
  if (v == ir::kNoValue || !graph.value(v).constant) return false;
  const ir::Tensor& t = *graph.value(v).constant;
  return t.dtype() == dtype && t.shape() == shape;
}

// A dense 1x1 Conv of the pooled [N, in, 1, 1] value `x` with constant weights [out, in, 1, 1]
// (and bias [out]) and no padding: its `out`, or 0.
int64_t PointwiseConvOnPooled(const ir::Graph& graph, const ir::Node& conv, ValueId x, int64_t in) {
  if (conv.op_type != "Conv" || conv.inputs.size() < 2 || conv.input(0) != x) return 0;
  if (conv.attrs.GetInt("group", 1) != 1) return 0;
  const std::string auto_pad = conv.attrs.GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return 0;
  for (int64_t p : conv.attrs.GetInts("pads")) {
    if (p != 0) return 0;
  }
  const ValueId w = conv.input(1);
  if (!graph.value(w).constant || graph.value(w).constant->rank() != 4) return 0;
  const int64_t out = graph.value(w).constant->shape()[0];
  const ir::DType dtype = graph.value(x).type.dtype;
  if (!IsConstantOf(graph, w, dtype, {out, in, 1, 1})) return 0;
  if (conv.input(2) != ir::kNoValue && !IsConstantOf(graph, conv.input(2), dtype, {out})) return 0;
  return PooledChannels(graph, conv.outputs[0]) == out ? out : 0;
}

// Who reads `v` inside the chain: none when it is a graph output (it must stay visible).
std::vector<NodeId> ChainReaders(const ir::Graph& graph, const ValueReaders& readers, ValueId v) {
  if (graph.IsGraphOutput(v)) return {};
  return readers(v);
}

// The single reader of `v`, or -1.
NodeId SingleReader(const ir::Graph& graph, const ValueReaders& readers, ValueId v) {
  const std::vector<NodeId> r = ChainReaders(graph, readers, v);
  return r.size() == 1 ? r[0] : -1;
}

// After fc1's output `h`: Relu, or SiLU as Sigmoid(h) and Mul(h, Sigmoid(h)). Appends the nodes;
// returns the activation's output, or kNoValue.
ValueId MatchActivation(const ir::Graph& graph, const ValueReaders& readers, ValueId h, SqueezeExciteForm& form) {
  const NodeId relu = SingleReader(graph, readers, h);
  if (relu >= 0 && graph.node(relu).op_type == "Relu") {
    form.activation = SqueezeExciteForm::kRelu;
    form.nodes.push_back(relu);
    return graph.node(relu).outputs[0];
  }
  const std::optional<std::pair<NodeId, NodeId>> silu = MatchSiluTail(graph, h, readers);
  if (!silu) return ir::kNoValue;
  form.activation = SqueezeExciteForm::kSilu;
  form.nodes.push_back(std::min(silu->first, silu->second));
  form.nodes.push_back(std::max(silu->first, silu->second));
  return graph.node(silu->second).outputs[0];
}

// fc2's output `z` read by Sigmoid or HardSigmoid alone: appends it and returns its output.
ValueId MatchGate(const ir::Graph& graph, const ValueReaders& readers, ValueId z, SqueezeExciteForm& form) {
  const NodeId g = SingleReader(graph, readers, z);
  if (g < 0) return ir::kNoValue;
  const ir::Node& gate = graph.node(g);
  if (gate.op_type == "Sigmoid") {
    form.gate = SqueezeExciteForm::kSigmoid;
  } else if (gate.op_type == "HardSigmoid") {
    form.gate = SqueezeExciteForm::kHardSigmoid;
    form.alpha = gate.attrs.GetFloat("alpha", 0.2f);
    form.beta = gate.attrs.GetFloat("beta", 0.5f);
  } else {
    return ir::kNoValue;
  }
  form.nodes.push_back(g);
  return gate.outputs[0];
}

}  // namespace

std::optional<SqueezeExciteForm> MatchSqueezeExcite(const ir::Graph& graph, NodeId fc1, const ValueReaders& readers) {
  const ir::Node& conv1 = graph.node(fc1);
  if (conv1.op_type != "Conv" || conv1.inputs.empty() || conv1.input(0) == ir::kNoValue) return std::nullopt;
  SqueezeExciteForm form;
  form.input = conv1.input(0);
  const ir::DType dtype = graph.value(form.input).type.dtype;
  if (!ir::IsFloatingPoint(dtype) || dtype == ir::DType::kFloat64) return std::nullopt;
  form.channels = PooledChannels(graph, form.input);  // 0 unless the shape is [N, C, 1, 1]
  if (form.channels <= 0 || form.channels > kMaxSqueezeExciteChannels) return std::nullopt;
  const ir::Dim batch = (*graph.value(form.input).type.shape)[0];
  if (!batch.known() || batch.value > kMaxSqueezeExciteBatch) return std::nullopt;
  form.reduced = PointwiseConvOnPooled(graph, conv1, form.input, form.channels);
  if (form.reduced <= 0 || form.reduced * form.channels > kMaxSqueezeExciteWeights) return std::nullopt;
  form.nodes.push_back(fc1);
  form.w1 = conv1.input(1);
  form.b1 = conv1.input(2);
  ValueId hidden = MatchActivation(graph, readers, conv1.outputs[0], form);
  if (hidden == ir::kNoValue) return std::nullopt;
  NodeId next = SingleReader(graph, readers, hidden);
  form.w2_row = form.reduced;
  if (next >= 0 && IsChannelZeroPad(graph, graph.node(next))) {  // inserted by ChannelPadding
    form.nodes.push_back(next);
    hidden = graph.node(next).outputs[0];
    form.w2_row = PooledChannels(graph, hidden);
    next = SingleReader(graph, readers, hidden);
  }
  if (next < 0 || form.w2_row < form.reduced || form.w2_row > kMaxSqueezeExciteReduced) return std::nullopt;
  const ir::Node& conv2 = graph.node(next);
  if (PointwiseConvOnPooled(graph, conv2, hidden, form.w2_row) != form.channels) return std::nullopt;
  form.nodes.push_back(next);
  form.w2 = conv2.input(1);
  form.b2 = conv2.input(2);
  form.output = MatchGate(graph, readers, conv2.outputs[0], form);
  if (form.output == ir::kNoValue || graph.value(form.output).type.dtype != dtype) return std::nullopt;
  return form;
}

std::optional<SqueezeExciteForm> MatchSqueezeExciteStep(const ir::Graph& graph, const std::vector<NodeId>& nodes) {
  if (nodes.size() < 4 || nodes.size() > 7) return std::nullopt;
  const ValueReaders in_step = [&](ValueId v) {
    std::vector<NodeId> r;
    for (NodeId n : nodes) {
      const std::vector<ValueId>& ins = graph.node(n).inputs;
      if (std::find(ins.begin(), ins.end(), v) != ins.end()) r.push_back(n);
    }
    return r;
  };
  std::optional<SqueezeExciteForm> form = MatchSqueezeExcite(graph, nodes[0], in_step);
  if (!form || form->nodes != nodes) return std::nullopt;
  return form;
}

}  // namespace partitioner
