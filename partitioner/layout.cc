// Layout: NHWC / KRSC annotations and the conversions they imply.
#include "partitioner/layout.h"

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/algorithm/container.h"
#include "ops/infer_util.h"

namespace partitioner {
namespace {

constexpr char kNhwc[] = "NHWC";
constexpr char kKrsc[] = "KRSC";
constexpr char kNchw[] = "NCHW";
constexpr int64_t kNhwcToNchw[] = {0, 3, 1, 2};
constexpr int64_t kNchwToNhwc[] = {0, 2, 3, 1};

bool IsWeightSlot(const ir::Node& node, size_t i) {
  return i == 1 && (node.op_type == "Conv" || node.op_type == "ConvTranspose");
}

bool Is4dFloat(const ir::Value& value) { return value.type.rank() == 4 && ir::IsFloatingPoint(value.type.dtype); }

// True when the node writes at least one NHWC output.
bool ProducesNhwc(const ir::Graph& graph, const ir::Node& node) {
  for (ir::ValueId out : node.outputs) {
    if (out != ir::kNoValue && graph.value(out).layout == kNhwc) return true;
  }
  return false;
}

// The layout a value has, as a conversion endpoint.
std::string StoredLayout(const ir::Value& value) { return value.layout.empty() ? kNchw : value.layout; }

// "KRSC" for constant 4-D weights read only as Conv/ConvTranspose weights.
std::vector<bool> WeightsOnly(const ir::Graph& graph) {
  std::vector<int> weight_reads(graph.values().size(), 0), other_reads(graph.values().size(), 0);
  for (const ir::Node& node : graph.nodes()) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] == ir::kNoValue) continue;
      (IsWeightSlot(node, i) ? weight_reads : other_reads)[node.inputs[i]]++;
    }
  }
  std::vector<bool> result(graph.values().size(), false);
  for (ir::ValueId id = 0; id < static_cast<ir::ValueId>(result.size()); ++id) {
    const ir::Value& v = graph.value(id);
    result[id] =
        v.constant && v.type.rank() == 4 && weight_reads[id] > 0 && other_reads[id] == 0 && !graph.IsGraphOutput(id);
  }
  return result;
}

// NCHW and NHWC order the bytes identically when H = W = 1 or C = 1: no conversion needed.
bool SameBytesInBothLayouts(const ir::Value& value) {
  if (!value.type.shape || value.type.shape->size() != 4) return false;
  const ir::Shape& s = *value.type.shape;
  auto is_one = [](const ir::Dim& d) { return d.known() && d.value == 1; };
  return (is_one(s[2]) && is_one(s[3])) || is_one(s[1]);
}

}  // namespace

bool IsTransposeWithPerm(const ir::Graph& graph, const ir::Node& node, absl::Span<const int64_t> perm) {
  if (node.op_type != "Transpose" || node.inputs.empty() || node.input(0) == ir::kNoValue) return false;
  const ir::Value& in = graph.value(node.input(0));
  if (in.type.rank() != static_cast<int64_t>(perm.size())) return false;
  absl::StatusOr<std::vector<int64_t>> resolved = ops::ResolvePermutation(node.attrs, in.type.rank());
  return resolved.ok() && absl::c_equal(*resolved, perm);
}

bool IsLayoutViewTranspose(const ir::Graph& graph, const ir::Node& node) {
  if (node.outputs.empty() || node.outputs[0] == ir::kNoValue || node.input(0) == ir::kNoValue) return false;
  const std::string in = StoredLayout(graph.value(node.input(0)));
  const std::string out = StoredLayout(graph.value(node.outputs[0]));
  return (in == kNchw && out == kNhwc && IsTransposeWithPerm(graph, node, kNhwcToNchw)) ||
         (in == kNhwc && out == kNchw && IsTransposeWithPerm(graph, node, kNchwToNhwc));
}

bool AcceptsChannelsLast(std::string_view op_type) {
  static const std::set<std::string, std::less<>> kOps = {
      // conv, pooling, normalisation over the channel axis, resize
      "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "BatchNormalization",
      "InstanceNormalization", "Resize",
      // pointwise (broadcast operands are read through logical strides)
      "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Softplus", "Gelu",
      "Erf", "Clip", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Min", "Max",
      "Sum", "Cast", "Where", "Identity", "Dropout",
      // axis-remapping ops: a channels-last executor concatenates along C as the last axis and
      // reorders pads (DenseNet/SqueezeNet concatenate channels; torch pads before pools)
      "Concat", "Pad"};
  return kOps.count(op_type) > 0;
}

namespace {

// Ops whose work is laid out by the spatial axes (conv, pooling, normalisation over channels,
// resize): their 4-D outputs are always stored channels-last.
bool IsSpatial(std::string_view op_type) {
  static const std::set<std::string, std::less<>> kOps = {"Conv",
                                                          "ConvTranspose",
                                                          "MaxPool",
                                                          "AveragePool",
                                                          "GlobalAveragePool",
                                                          "GlobalMaxPool",
                                                          "BatchNormalization",
                                                          "InstanceNormalization",
                                                          "Resize"};
  return kOps.count(op_type) > 0;
}

bool AnyOutputNhwc(const ir::Graph& graph, const ir::Node& node, const std::vector<bool>& nhwc) {
  for (ir::ValueId out : node.outputs) {
    if (out != ir::kNoValue && nhwc[out]) return true;
  }
  return false;
}

// Whether a layout-agnostic (pointwise, Concat, Pad) node should store its 4-D outputs NHWC: it
// reads an NHWC activation, or its output feeds a node that stores NHWC (the input Cast and Pad
// before a stem conv).
bool JoinsChannelsLast(const ir::Graph& graph, const ir::Node& node, const std::vector<bool>& nhwc,
                       const std::vector<std::vector<ir::NodeId>>& readers) {
  for (ir::ValueId in : node.inputs) {
    if (in != ir::kNoValue && nhwc[in]) return true;
  }
  for (ir::ValueId out : node.outputs) {
    if (out == ir::kNoValue) continue;
    for (ir::NodeId reader : readers[out]) {
      const ir::Node& node_reading = graph.node(reader);
      // A Transpose storing NHWC wants its input logical (it is a view of it, below).
      if (node_reading.op_type != "Transpose" && AnyOutputNhwc(graph, node_reading, nhwc)) return true;
    }
  }
  return false;
}

// Whether a Transpose(0, 3, 1, 2) of a logical value (an NHWC graph input, as tf2onnx writes
// before the first conv) stores its output NHWC: when a reader stores NHWC. Its output then has
// its input's bytes (a view, no copy) and the conv reads it without a conversion.
bool TransposesIntoChannelsLast(const ir::Graph& graph, const ir::Node& node, const std::vector<bool>& nhwc,
                                const std::vector<std::vector<ir::NodeId>>& readers) {
  if (!IsTransposeWithPerm(graph, node, kNhwcToNchw) || nhwc[node.input(0)]) return false;
  const ir::ValueId out = node.outputs[0];
  if (out == ir::kNoValue || !Is4dFloat(graph.value(out))) return false;
  for (ir::NodeId reader : readers[out]) {
    if (AnyOutputNhwc(graph, graph.node(reader), nhwc)) return true;
  }
  return false;
}

// NHWC marks: spatial ops' 4-D float outputs, then (to a fixed point) the layout-agnostic nodes
// connected to them and the Transposes into them. A 4-D activation no spatial op touches (attention heads [B, H, S, D],
// masks) stays in logical order, so the ops around attention read it without conversions.
std::vector<bool> ChannelsLastValues(const ir::Graph& graph) {
  std::vector<bool> nhwc(graph.values().size(), false);
  std::vector<std::vector<ir::NodeId>> readers(graph.values().size());
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(graph.nodes().size()); ++id) {
    const ir::Node& node = graph.node(id);
    for (ir::ValueId in : node.inputs) {
      if (in != ir::kNoValue) readers[in].push_back(id);
    }
    if (!IsSpatial(node.op_type)) continue;
    for (ir::ValueId out : node.outputs) {
      if (out != ir::kNoValue && Is4dFloat(graph.value(out))) nhwc[out] = true;
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const ir::Node& node : graph.nodes()) {
      if (TransposesIntoChannelsLast(graph, node, nhwc, readers) && !nhwc[node.outputs[0]]) {
        nhwc[node.outputs[0]] = changed = true;
        continue;
      }
      if (!AcceptsChannelsLast(node.op_type) || IsSpatial(node.op_type)) continue;
      if (!JoinsChannelsLast(graph, node, nhwc, readers)) continue;
      for (ir::ValueId out : node.outputs) {
        if (out == ir::kNoValue || nhwc[out] || !Is4dFloat(graph.value(out))) continue;
        nhwc[out] = true;
        changed = true;
      }
    }
  }
  return nhwc;
}

}  // namespace

absl::StatusOr<bool> Layout::Run(ir::Graph& graph) {
  const std::vector<bool> weights = WeightsOnly(graph);
  const std::vector<bool> nhwc = ChannelsLastValues(graph);
  std::vector<std::string> layouts(graph.values().size());
  for (ir::ValueId id = 0; id < static_cast<ir::ValueId>(layouts.size()); ++id) {
    if (weights[id]) layouts[id] = kKrsc;
    if (nhwc[id]) layouts[id] = kNhwc;
  }
  bool changed = false;
  for (ir::ValueId id = 0; id < static_cast<ir::ValueId>(layouts.size()); ++id) {
    if (graph.value(id).layout == layouts[id]) continue;
    graph.value(id).layout = layouts[id];
    changed = true;
  }
  return changed;
}

std::vector<LayoutConversion> FindLayoutConversions(const ir::Graph& graph) {
  std::vector<LayoutConversion> conversions;
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(graph.nodes().size()); ++id) {
    const ir::Node& node = graph.node(id);
    if (node.op_type == "Shape" || IsLayoutViewTranspose(graph, node)) continue;
    const std::string wanted = ProducesNhwc(graph, node) ? kNhwc : kNchw;
    std::set<ir::ValueId> seen;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ir::ValueId in = node.inputs[i];
      if (in == ir::kNoValue || IsWeightSlot(node, i) || !seen.insert(in).second) continue;
      const ir::Value& value = graph.value(in);
      if (value.type.rank() != 4 || SameBytesInBothLayouts(value)) continue;
      const std::string stored = StoredLayout(value);
      if (stored != wanted) conversions.push_back({in, id, stored, wanted});
    }
  }
  for (ir::ValueId out : graph.outputs()) {
    const std::string stored = StoredLayout(graph.value(out));
    if (stored != kNchw && !SameBytesInBothLayouts(graph.value(out))) {
      conversions.push_back({out, -1, stored, kNchw});
    }
  }
  return conversions;
}

}  // namespace partitioner
