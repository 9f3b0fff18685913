// GraphProto -> ir::Graph, bodies included: values, nodes in topological order, captured names.
#include "importer/graph_builder.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "importer/body_types.h"
#include "importer/canonicalize.h"
#include "importer/convert.h"
#include "importer/flex_attention.h"
#include "importer/node_order.h"
#include "importer/tensor_proto.h"
#include "ops/infer_graph.h"
#include "ops/op_def.h"

namespace importer {
namespace {

absl::Status Prefixed(const absl::Status& status, const std::string& prefix) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

void CollectUnsupported(const onnx::GraphProto& graph, std::map<std::string, std::vector<std::string>>& unsupported) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const std::string canonical = CanonicalOpType(node);
    const bool known = !canonical.empty() && (HandledByImporter(canonical) || ops::FindOpDef(canonical) != nullptr);
    if (!known) {
      std::string op = node.domain().empty() ? node.op_type() : node.domain() + "." + node.op_type();
      unsupported[op].push_back(absl::StrCat("'", NodeName(node, i), "'"));
    }
    for (const auto& attr : node.attribute()) {
      if (attr.type() == onnx::AttributeProto::GRAPH) CollectUnsupported(attr.g(), unsupported);
    }
  }
}

// `type` with only what stays true whatever the dims: its dtype, kind and optionality.
ir::TensorType WithoutShape(const ir::TensorType& type) {
  return ir::TensorType{type.dtype, std::nullopt, type.kind, type.optional, type.map_key};
}

// Builds one graph. A body's builder has its enclosing graph's builder as parent. A relaxed body
// sees the values it reads from enclosing graphs without their shapes (constants keep their values).
class GraphBuilder {
 public:
  GraphBuilder(ImportState& state, const GraphBuilder* parent, int depth, bool relaxed = false)
      : state_(state), parent_(parent), depth_(depth), relaxed_(relaxed) {}

  // Converts `proto` into graph(); a body's outer reads are in captured(). `input_types[i]` types
  // the graph's input i when the proto leaves it untyped.
  absl::Status Build(const onnx::GraphProto& proto, const std::vector<std::optional<ir::TensorType>>& input_types);
  // A body: makes its captured inputs exactly `names`, in order, after its own inputs (a name it
  // does not read becomes an unused input), and validates it.
  absl::Status BindCaptures(const std::vector<std::string>& names);
  ir::Graph& graph() { return graph_; }
  const std::vector<std::string>& captured() const { return captured_; }

 private:
  // The value `name` in this graph or an enclosing one; nullptr when none defines it. Sets
  // *crossed_relaxed when the lookup leaves a relaxed body to find it.
  const ir::Value* Lookup(const std::string& name, bool* crossed_relaxed = nullptr) const;
  // The id of `name` here, capturing it (or copying its constant) from an enclosing graph.
  absl::StatusOr<ir::ValueId> Resolve(const std::string& name);
  absl::Status AddInputs(const onnx::GraphProto& proto, const std::vector<std::optional<ir::TensorType>>& input_types);
  // The opset of the node's domain in the model's opset_import; an error when the model imports
  // none, or a version the importer does not accept.
  absl::StatusOr<int> NodeOpset(const onnx::NodeProto& proto) const;
  absl::Status AddNode(const onnx::NodeProto& proto, int index);
  absl::Status AddConstantNode(const onnx::NodeProto& proto, ir::Node& node);
  // The body `proto` of `node` (its explicit inputs and non-graph attributes set), built.
  absl::StatusOr<std::unique_ptr<GraphBuilder>> BuildBody(const onnx::GraphProto& proto, const ir::Node& node);
  // Converts the node's attributes; bodies are built and their captures become implicit inputs.
  absl::Status ConvertAttributes(const onnx::NodeProto& proto, ir::Node& node);
  absl::Status AddCanonicalNodes(const onnx::NodeProto& proto, int index, ir::Node node);
  // ai.onnx.preview's FlexAttention: the standard nodes of ExpandFlexAttention, added in its place.
  absl::Status AddExpandedFlexAttention(const onnx::NodeProto& proto, int index, const ir::Node& node,
                                        const std::string& prefix);

  ImportState& state_;
  const GraphBuilder* parent_;
  const int depth_;
  const bool relaxed_;
  ir::Graph graph_;
  std::map<std::string, ir::ValueId> ids_;
  std::vector<std::string> captured_;
  size_t num_formal_inputs_ = 0;
};

const ir::Value* GraphBuilder::Lookup(const std::string& name, bool* crossed_relaxed) const {
  auto it = ids_.find(name);
  if (it != ids_.end()) return &graph_.value(it->second);
  if (parent_ == nullptr) return nullptr;
  if (relaxed_ && crossed_relaxed != nullptr) *crossed_relaxed = true;
  return parent_->Lookup(name, crossed_relaxed);
}

absl::StatusOr<ir::ValueId> GraphBuilder::Resolve(const std::string& name) {
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  bool relaxed = relaxed_;
  const ir::Value* outer = parent_ ? parent_->Lookup(name, &relaxed) : nullptr;
  if (outer == nullptr) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is never produced"));
  ir::ValueId id;
  if (outer->constant) {
    id = graph_.AddConstant(name, *outer->constant);
  } else {
    id = graph_.AddValue(name, relaxed ? WithoutShape(outer->type) : outer->type);
    graph_.inputs().push_back(id);
    captured_.push_back(name);
  }
  ids_[name] = id;
  return id;
}

// True when the value info carries no element type (allowed for body inputs).
bool Untyped(const onnx::ValueInfoProto& info) {
  if (!info.has_type()) return true;
  const onnx::TypeProto& type = info.type();
  if (type.has_tensor_type()) return type.tensor_type().elem_type() == 0;
  if (type.has_sequence_type()) {
    const onnx::TypeProto& elem = type.sequence_type().elem_type();
    if (elem.has_map_type()) return false;
    return !elem.has_tensor_type() || elem.tensor_type().elem_type() == 0;
  }
  return false;
}

absl::Status GraphBuilder::AddInputs(const onnx::GraphProto& proto,
                                     const std::vector<std::optional<ir::TensorType>>& input_types) {
  const ImportLimits& limits = state_.limits;
  for (const auto& init : proto.initializer()) {
    if (init.dims_size() > limits.max_rank) {
      return absl::InvalidArgumentError(absl::StrCat("initializer '", init.name(), "' has rank ", init.dims_size(),
                                                     ", more than the limit of ", limits.max_rank));
    }
    absl::StatusOr<ir::Tensor> t = TensorFromProto(init, state_.model_dir, limits.max_tensor_bytes);
    if (!t.ok()) return t.status();
    absl::Status fits = AddConstantBytes(init.name(), *t, limits, state_.constant_bytes);
    if (!fits.ok()) return fits;
    ids_[init.name()] = graph_.AddConstant(init.name(), *std::move(t));
  }
  for (int i = 0; i < proto.input_size(); ++i) {
    const onnx::ValueInfoProto& input = proto.input(i);
    if (ids_.count(input.name())) continue;  // an initializer listed as input (IR < 4)
    const bool hinted = Untyped(input) && static_cast<size_t>(i) < input_types.size() && input_types[i];
    absl::StatusOr<ir::TensorType> type = hinted ? *input_types[i] : ConvertValueInfo(input, limits);
    if (!type.ok()) return Prefixed(type.status(), "graph input ");
    ir::ValueId id = graph_.AddValue(input.name(), *std::move(type));
    ids_[input.name()] = id;
    graph_.inputs().push_back(id);
  }
  num_formal_inputs_ = graph_.inputs().size();
  return absl::OkStatus();
}

absl::Status GraphBuilder::Build(const onnx::GraphProto& proto,
                                 const std::vector<std::optional<ir::TensorType>>& input_types) {
  const ImportLimits& limits = state_.limits;
  if (absl::Status deep = CheckSubgraphDepth(depth_, limits); !deep.ok()) return deep;
  state_.nodes += proto.node_size();
  if (state_.nodes > limits.max_nodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("model has more than ", limits.max_nodes, " nodes (bodies included), the limit"));
  }
  auto is_outer = [this](const std::string& name) { return parent_ != nullptr && parent_->Lookup(name) != nullptr; };
  absl::StatusOr<std::vector<int>> order = TopologicalOrder(proto, depth_, limits, is_outer);
  if (!order.ok()) return order.status();
  graph_.name = proto.name().empty() ? (depth_ == 0 ? "main" : "body") : proto.name();
  if (absl::Status status = AddInputs(proto, input_types); !status.ok()) return status;
  for (int i : *order) {
    if (absl::Status status = AddNode(proto.node(i), i); !status.ok()) return status;
  }
  for (const auto& output : proto.output()) {
    absl::StatusOr<ir::ValueId> id = Resolve(output.name());
    if (!id.ok()) return Prefixed(id.status(), "graph output ");
    graph_.outputs().push_back(*id);
  }
  if (graph_.outputs().empty()) return absl::InvalidArgumentError("the graph has no outputs");
  return parent_ == nullptr ? graph_.Validate() : absl::OkStatus();
}

absl::Status GraphBuilder::BindCaptures(const std::vector<std::string>& names) {
  const std::set<std::string> own(captured_.begin(), captured_.end());
  std::vector<ir::ValueId> inputs(graph_.inputs().begin(), graph_.inputs().begin() + num_formal_inputs_);
  for (const std::string& name : names) {
    if (ids_.count(name) && !own.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat("'", name, "' is defined both here and in an enclosing graph"));
    }
    absl::StatusOr<ir::ValueId> id = Resolve(name);
    if (!id.ok()) return id.status();
    inputs.push_back(*id);
  }
  graph_.inputs() = std::move(inputs);
  graph_.num_captured_inputs = static_cast<int>(names.size());
  return graph_.Validate();
}

absl::Status GraphBuilder::ConvertAttributes(const onnx::NodeProto& proto, ir::Node& node) {
  std::vector<std::pair<std::string, std::unique_ptr<GraphBuilder>>> bodies;
  std::vector<std::string> implicit;
  for (const auto& attr : proto.attribute()) {
    if (attr.type() == onnx::AttributeProto::GRAPH) continue;
    absl::StatusOr<ir::AttributeValue> value = ConvertAttribute(attr, state_.model_dir, state_.limits);
    if (!value.ok()) return value.status();
    node.attrs.Set(attr.name(), *std::move(value));
  }
  for (const auto& attr : proto.attribute()) {
    if (attr.type() != onnx::AttributeProto::GRAPH) continue;
    absl::StatusOr<std::unique_ptr<GraphBuilder>> built = BuildBody(attr.g(), node);
    if (!built.ok()) return Prefixed(built.status(), absl::StrCat("attribute '", attr.name(), "': "));
    std::unique_ptr<GraphBuilder> body = *std::move(built);
    for (const std::string& name : body->captured()) {
      if (std::find(implicit.begin(), implicit.end(), name) == implicit.end()) implicit.push_back(name);
    }
    bodies.emplace_back(attr.name(), std::move(body));
  }
  if (bodies.empty()) return absl::OkStatus();
  for (const std::string& name : implicit) {
    absl::StatusOr<ir::ValueId> id = Resolve(name);
    if (!id.ok()) return id.status();
    node.inputs.push_back(*id);
  }
  for (auto& [name, body] : bodies) {
    if (absl::Status bound = body->BindCaptures(implicit); !bound.ok()) {
      return Prefixed(bound, absl::StrCat("attribute '", name, "': "));
    }
    node.attrs.Set(name, std::make_shared<const ir::Graph>(std::move(body->graph())));
  }
  return absl::OkStatus();
}

// An If branch runs only when its condition picks it, so a branch that does not type-check with
// the shapes of the enclosing values it reads (an expanded function's branch for another rank, say)
// must not fail the import: it is built again seeing only their dtypes, and checked with the
// concrete shapes if it ever runs (where it fails, naming its node, when those shapes do not fit).
// Its output types are then less precise, never wrong; the If merges them with the other branch's.
// An error that remains without the shapes stands, as does any error of a Loop or Scan body,
// which runs whenever its node does. The second build's nodes count again against
// ImportLimits::max_nodes, which so bounds the work however such branches nest; the first
// build's constants are dropped with it.
absl::StatusOr<std::unique_ptr<GraphBuilder>> GraphBuilder::BuildBody(const onnx::GraphProto& proto,
                                                                      const ir::Node& node) {
  const int64_t constant_bytes = state_.constant_bytes;
  auto body = std::make_unique<GraphBuilder>(state_, this, depth_ + 1);
  absl::Status built = body->Build(proto, BodyInputTypes(graph_, node));
  if (built.ok()) return body;
  if (node.op_type != "If" || absl::IsResourceExhausted(built)) return built;
  state_.constant_bytes = constant_bytes;
  auto relaxed = std::make_unique<GraphBuilder>(state_, this, depth_ + 1, /*relaxed=*/true);
  if (!relaxed->Build(proto, BodyInputTypes(graph_, node)).ok()) return built;
  return relaxed;
}

absl::Status GraphBuilder::AddConstantNode(const onnx::NodeProto& proto, ir::Node& node) {
  absl::StatusOr<ir::Tensor> value = ConstantValue(node.attrs);
  if (!value.ok() || proto.output_size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node.name, "' (Constant): ", value.ok() ? "needs one output" : value.status().message()));
  }
  absl::Status fits = AddConstantBytes(proto.output(0), *value, state_.limits, state_.constant_bytes);
  if (!fits.ok()) return fits;
  ids_[proto.output(0)] = graph_.AddConstant(proto.output(0), *std::move(value));
  return absl::OkStatus();
}

absl::StatusOr<int> GraphBuilder::NodeOpset(const onnx::NodeProto& proto) const {
  if (IsDefaultDomain(proto.domain())) {
    if (state_.opset == 0) return absl::InvalidArgumentError("model has no ai.onnx opset_import");
    return state_.opset;
  }
  auto it = state_.domain_opsets.find(proto.domain());
  // ONNX Runtime runs com.microsoft nodes without an opset_import (its optimizer's in-memory models
  // lack one) at that domain's version 1, the only one there is.
  if (it == state_.domain_opsets.end() && proto.domain() == "com.microsoft") return 1;
  if (it == state_.domain_opsets.end()) {
    return absl::InvalidArgumentError(absl::StrCat("domain '", proto.domain(), "' has no opset_import"));
  }
  const DomainVersions supported = SupportedDomainVersions(proto.domain());
  if (it->second < supported.min || it->second > supported.max) {
    return absl::UnimplementedError(absl::StrCat("model uses ", proto.domain(), " opset ", it->second,
                                                 "; onnxrun supports opsets ", supported.min, " to ", supported.max));
  }
  return static_cast<int>(it->second);
}

absl::Status GraphBuilder::AddNode(const onnx::NodeProto& proto, int index) {
  ir::Node node;
  node.name = NodeName(proto, index);
  node.op_type = CanonicalOpType(proto);
  const std::string prefix = absl::StrCat("node '", node.name, "' (", node.op_type, "): ");
  absl::StatusOr<int> opset = NodeOpset(proto);
  if (!opset.ok()) return Prefixed(opset.status(), prefix);
  node.opset = *opset;
  for (const std::string& in : proto.input()) {
    absl::StatusOr<ir::ValueId> id = in.empty() ? ir::kNoValue : Resolve(in);
    if (!id.ok()) return Prefixed(id.status(), prefix);
    node.inputs.push_back(*id);
  }
  for (const std::string& out : proto.output()) {  // a model's own repeats, or an expansion's name
    if (!out.empty() && ids_.count(out)) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, "value '", out, "' is produced twice"));
    }
  }
  if (node.op_type == "ai.onnx.preview.FlexAttention") return AddExpandedFlexAttention(proto, index, node, prefix);
  if (absl::Status converted = ConvertAttributes(proto, node); !converted.ok()) return Prefixed(converted, prefix);
  if (node.op_type == "Constant") return AddConstantNode(proto, node);
  // Optional inputs left out at the end; a control-flow node keeps its slots (implicit inputs follow).
  const bool has_body =
      std::any_of(proto.attribute().begin(), proto.attribute().end(),
                  [](const onnx::AttributeProto& a) { return a.type() == onnx::AttributeProto::GRAPH; });
  if (!has_body) {
    while (!node.inputs.empty() && node.inputs.back() == ir::kNoValue) node.inputs.pop_back();
  }
  for (const std::string& out : proto.output()) {
    node.outputs.push_back(out.empty() ? ir::kNoValue : (ids_[out] = graph_.AddValue(out)));
  }
  return AddCanonicalNodes(proto, index, std::move(node));
}

absl::Status GraphBuilder::AddExpandedFlexAttention(const onnx::NodeProto& proto, int index, const ir::Node& node,
                                                    const std::string& prefix) {
  std::vector<ir::TensorType> types;
  for (ir::ValueId in : node.inputs) {
    if (in == ir::kNoValue) return absl::InvalidArgumentError(absl::StrCat(prefix, "Q, K and V are all required"));
    types.push_back(graph_.value(in).type);
  }
  types.resize(3);
  absl::StatusOr<std::vector<onnx::NodeProto>> nodes =
      ExpandFlexAttention(proto, absl::StrCat(node.name, "/"), types[0], types[1], types[2]);
  if (!nodes.ok()) return Prefixed(nodes.status(), prefix);
  state_.nodes += static_cast<int64_t>(nodes->size());
  if (state_.nodes > state_.limits.max_nodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(prefix, "its expansion makes the model more than ", state_.limits.max_nodes, " nodes, the limit"));
  }
  for (const onnx::NodeProto& n : *nodes) {
    if (absl::Status added = AddNode(n, index); !added.ok()) return added;
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::AddCanonicalNodes(const onnx::NodeProto& proto, int index, ir::Node node) {
  absl::StatusOr<std::vector<ir::Node>> nodes = CanonicalizeNode(graph_, std::move(node));
  if (!nodes.ok()) {
    return Prefixed(nodes.status(), absl::StrCat("node '", NodeName(proto, index), "' (", proto.op_type(), "): "));
  }
  for (ir::Node& n : *nodes) {
    ir::NodeId id = graph_.AddNode(std::move(n));
    absl::Status inferred = ops::InferNodeTypes(graph_, id);
    if (!inferred.ok()) return inferred;
    for (ir::ValueId out : graph_.node(id).outputs) {
      if (out == ir::kNoValue) continue;
      absl::Status fits = CheckTypeLimits(absl::StrCat("node '", graph_.node(id).name, "' (", graph_.node(id).op_type,
                                                       ") output '", graph_.value(out).name, "'"),
                                          graph_.value(out).type, state_.limits);
      if (!fits.ok()) return fits;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckOpsSupported(const onnx::GraphProto& graph, int opset) {
  std::map<std::string, std::vector<std::string>> unsupported;
  CollectUnsupported(graph, unsupported);
  if (unsupported.empty()) return absl::OkStatus();
  std::vector<std::string> parts;
  for (const auto& [op, nodes] : unsupported) {
    parts.push_back(absl::StrCat(op, " (nodes ", absl::StrJoin(nodes, ", "), ")"));
  }
  // ORT's NCHWc ops are what its ORT_ENABLE_ALL level (the default) writes into a saved optimized
  // model: weights blocked for the saving CPU's vector width, which the file does not record.
  const bool nchwc = std::any_of(unsupported.begin(), unsupported.end(), [](const auto& entry) {
    return absl::StartsWith(entry.first, "com.microsoft.nchwc.");
  });
  return absl::UnimplementedError(
      absl::StrCat("unsupported ops at opset ", opset, ": ", absl::StrJoin(parts, "; "),
                   nchwc ? " (com.microsoft.nchwc ops come from a model ONNX Runtime saved at ORT_ENABLE_ALL, laid out "
                           "for the saving CPU; save it at ORT_ENABLE_EXTENDED or earlier, or use the model before "
                           "optimization)"
                         : ""));
}

absl::StatusOr<ir::Graph> BuildMainGraph(const onnx::GraphProto& proto, ImportState& state) {
  GraphBuilder builder(state, nullptr, 0);
  if (absl::Status status = builder.Build(proto, {}); !status.ok()) return status;
  return std::move(builder.graph());
}

}  // namespace importer
