// InlineLocalFunctions (see inline_functions.h): an Inliner walks each graph's nodes, expanding
// calls (Expand) into renamed copies of the function's body (BodyCopy), recursively.
#include "importer/inline_functions.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/unknown_field_set.h"

namespace importer {
namespace {

using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

constexpr size_t kMaxCallDepth = 32;

// Fields newer than the ONNX protos this build links arrive as unknown fields: NodeProto.overload
// (8) and FunctionProto.overload (13) of IR 10, FunctionProto.attribute_proto (11, IR 9: the
// attributes' default values).
std::vector<std::string> UnknownStrings(const google::protobuf::Message& message, int number) {
  std::vector<std::string> found;
  const google::protobuf::UnknownFieldSet& fields = message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField& field = fields.field(i);
    if (field.number() == number && field.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      found.push_back(field.length_delimited());
    }
  }
  return found;
}

std::string FunctionKey(const std::string& domain, const std::string& name, const std::string& overload) {
  return absl::StrCat(domain == "ai.onnx" ? "" : domain, "\n", name, "\n", overload);
}

std::string Overload(const google::protobuf::Message& message, int number) {
  std::vector<std::string> values = UnknownStrings(message, number);
  return values.empty() ? "" : values.back();
}

// The node's control-flow bodies (its GRAPH and GRAPHS attributes).
std::vector<onnx::GraphProto*> Subgraphs(onnx::NodeProto& node) {
  std::vector<onnx::GraphProto*> graphs;
  for (onnx::AttributeProto& a : *node.mutable_attribute()) {
    if (a.has_g()) graphs.push_back(a.mutable_g());
    for (onnx::GraphProto& g : *a.mutable_graphs()) graphs.push_back(&g);
  }
  return graphs;
}

// One function's body bound to one call: value names and attribute references rewritten.
class BodyCopy {
 public:
  // Names in `kept` (a graph's reads of enclosing values) stay as they are; every other name the
  // body does not bind to the call gets `prefix`.
  BodyCopy(const onnx::NodeProto& call, const onnx::FunctionProto& fn,
           const google::protobuf::RepeatedPtrField<onnx::AttributeProto>& defaults, std::string prefix,
           std::set<std::string> kept = {})
      : call_(call), defaults_(defaults), prefix_(std::move(prefix)), kept_(std::move(kept)) {
    for (int i = 0; i < fn.input_size(); ++i) bound_[fn.input(i)] = i < call.input_size() ? call.input(i) : "";
    std::set<std::string> produced;
    for (const onnx::NodeProto& n : fn.node()) produced.insert(n.output().begin(), n.output().end());
    for (int i = 0; i < fn.output_size() && i < call.output_size(); ++i) {
      if (call.output(i).empty()) continue;
      if (produced.count(fn.output(i)) > 0) {
        bound_[fn.output(i)] = call.output(i);
      } else {  // an input passed through: the call's output still has to be written
        passed_through_.push_back({Rename(fn.output(i)), call.output(i)});
      }
    }
  }

  // `body` rewritten for this call.
  onnx::NodeProto Node(const onnx::NodeProto& body, int index) const {
    onnx::NodeProto n = body;
    RewriteNode(n);
    n.set_name(absl::StrCat(prefix_, body.name().empty() ? absl::StrCat(body.op_type(), "_", index) : body.name()));
    return n;
  }

  // Identity nodes for outputs that are inputs of the function.
  std::vector<onnx::NodeProto> PassThroughs() const {
    std::vector<onnx::NodeProto> nodes;
    for (const auto& [from, to] : passed_through_) {
      onnx::NodeProto n;
      n.set_op_type("Identity");
      n.set_name(absl::StrCat(prefix_, "pass_through_", to));
      n.add_input(from);
      n.add_output(to);
      nodes.push_back(std::move(n));
    }
    return nodes;
  }

 private:
  std::string Rename(const std::string& name) const {
    if (name.empty()) return name;
    auto it = bound_.find(name);
    if (it != bound_.end()) return it->second;
    return kept_.count(name) ? name : prefix_ + name;
  }

  void RewriteNode(onnx::NodeProto& n) const {
    for (std::string& in : *n.mutable_input()) in = Rename(in);
    for (std::string& out : *n.mutable_output()) out = Rename(out);
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.ref_attr_name().empty()) {
        *kept.Add() = a;
        continue;
      }
      const onnx::AttributeProto* given = FindAttribute(call_.attribute(), a.ref_attr_name());
      if (given == nullptr) given = FindAttribute(defaults_, a.ref_attr_name());
      if (given == nullptr) continue;  // the op's own default applies
      onnx::AttributeProto resolved = *given;
      resolved.set_name(a.name());
      resolved.clear_ref_attr_name();
      *kept.Add() = std::move(resolved);
    }
    n.mutable_attribute()->Swap(&kept);
    for (onnx::GraphProto* g : Subgraphs(n)) RewriteGraph(*g);
  }

  // A control-flow body inside the function: every name renamed alike (its own ones included, which
  // keeps them consistent), attribute references resolved.
  void RewriteGraph(onnx::GraphProto& g) const {
    for (auto* infos : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()}) {
      for (onnx::ValueInfoProto& info : *infos) info.set_name(Rename(info.name()));
    }
    for (onnx::TensorProto& t : *g.mutable_initializer()) t.set_name(Rename(t.name()));
    for (onnx::SparseTensorProto& t : *g.mutable_sparse_initializer()) {
      t.mutable_values()->set_name(Rename(t.values().name()));
    }
    for (onnx::NodeProto& n : *g.mutable_node()) RewriteNode(n);
  }

  const onnx::NodeProto& call_;
  const google::protobuf::RepeatedPtrField<onnx::AttributeProto>& defaults_;
  const std::string prefix_;
  const std::set<std::string> kept_;
  std::map<std::string, std::string> bound_;  // formal input / output -> the call's value
  std::vector<std::pair<std::string, std::string>> passed_through_;
};

class Inliner {
 public:
  Inliner(const onnx::ModelProto& model, int64_t max_nodes) : max_nodes_(max_nodes) {
    for (const onnx::FunctionProto& fn : model.functions()) {
      functions_[FunctionKey(fn.domain(), fn.name(), Overload(fn, 13))] = &fn;
      for (const std::string& bytes : UnknownStrings(fn, 11)) {
        onnx::AttributeProto a;
        if (a.ParseFromString(bytes)) *defaults_[&fn].Add() = std::move(a);
      }
    }
  }

  absl::Status InlineGraph(onnx::GraphProto& graph) {
    Nodes out;
    for (onnx::NodeProto& node : *graph.mutable_node()) {
      absl::Status added = Append(std::move(node), out);
      if (!added.ok()) return added;
    }
    graph.mutable_node()->Swap(&out);
    return absl::OkStatus();
  }

 private:
  absl::Status Count(const onnx::NodeProto& node) {
    if (++nodes_ <= max_nodes_) return absl::OkStatus();
    return absl::ResourceExhaustedError(absl::StrCat("expanding the model's functions (at node '", node.name(),
                                                     "') gives more than the limit of ", max_nodes_, " nodes"));
  }

  absl::Status Append(onnx::NodeProto node, Nodes& out) {
    if (absl::Status counted = Count(node); !counted.ok()) return counted;
    auto fn = functions_.find(FunctionKey(node.domain(), node.op_type(), Overload(node, 8)));
    if (fn != functions_.end()) return Expand(node, *fn->second, out);
    for (onnx::GraphProto* g : Subgraphs(node)) {
      if (absl::Status s = InlineGraph(*g); !s.ok()) return s;
    }
    *out.Add() = std::move(node);
    return absl::OkStatus();
  }

  absl::Status Expand(const onnx::NodeProto& call, const onnx::FunctionProto& fn, Nodes& out) {
    const std::string name = fn.domain().empty() ? fn.name() : absl::StrCat(fn.domain(), ".", fn.name());
    if (std::find(stack_.begin(), stack_.end(), &fn) != stack_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("function ", name, " calls itself (at node '", call.name(), "')"));
    }
    if (stack_.size() >= kMaxCallDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat("function calls nest deeper than ", kMaxCallDepth, " (at node '", call.name(), "')"));
    }
    const std::string prefix = absl::StrCat(call.name().empty() ? fn.name() : call.name(), "#", ++calls_, "/");
    const BodyCopy body(call, fn, defaults_[&fn], prefix);
    stack_.push_back(&fn);
    absl::Status status = absl::OkStatus();
    for (int i = 0; i < fn.node_size() && status.ok(); ++i) status = Append(body.Node(fn.node(i), i), out);
    for (onnx::NodeProto& n : body.PassThroughs()) {
      if (status.ok()) status = Append(std::move(n), out);
    }
    stack_.pop_back();
    return status;
  }

  std::map<std::string, const onnx::FunctionProto*> functions_;
  std::map<const onnx::FunctionProto*, google::protobuf::RepeatedPtrField<onnx::AttributeProto>> defaults_;
  std::vector<const onnx::FunctionProto*> stack_;  // the functions being expanded
  const int64_t max_nodes_;
  int64_t nodes_ = 0, calls_ = 0;
};

// The names `graph` and the bodies inside it define (inputs, initializers, node outputs), and
// the names they read.
void CollectNames(const onnx::GraphProto& graph, std::set<std::string>& defined, std::set<std::string>& read) {
  for (const onnx::ValueInfoProto& info : graph.input()) defined.insert(info.name());
  for (const onnx::TensorProto& t : graph.initializer()) defined.insert(t.name());
  for (const onnx::SparseTensorProto& t : graph.sparse_initializer()) defined.insert(t.values().name());
  for (const onnx::NodeProto& n : graph.node()) {
    defined.insert(n.output().begin(), n.output().end());
    read.insert(n.input().begin(), n.input().end());
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) CollectNames(a.g(), defined, read);
      for (const onnx::GraphProto& g : a.graphs()) CollectNames(g, defined, read);
    }
  }
  for (const onnx::ValueInfoProto& info : graph.output()) read.insert(info.name());
}

}  // namespace

const onnx::AttributeProto* FindAttribute(const google::protobuf::RepeatedPtrField<onnx::AttributeProto>& attrs,
                                          const std::string& name) {
  for (const onnx::AttributeProto& a : attrs) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

onnx::NodeProto ConstantNodeProto(const onnx::TensorProto& value, const std::string& output) {
  onnx::NodeProto node;
  node.set_op_type("Constant");
  node.add_output(output);
  onnx::AttributeProto* attr = node.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  *attr->mutable_t() = value;
  return node;
}

std::vector<onnx::NodeProto> InlineGraphBody(const onnx::GraphProto& graph, const std::vector<std::string>& inputs,
                                             const std::vector<std::string>& outputs, const std::string& prefix) {
  onnx::FunctionProto fn;
  onnx::NodeProto call;
  for (const onnx::ValueInfoProto& info : graph.input()) fn.add_input(info.name());
  for (const onnx::ValueInfoProto& info : graph.output()) fn.add_output(info.name());
  for (const std::string& name : inputs) call.add_input(name);
  for (const std::string& name : outputs) call.add_output(name);
  for (const onnx::TensorProto& t : graph.initializer()) *fn.add_node() = ConstantNodeProto(t, t.name());
  for (const onnx::NodeProto& n : graph.node()) *fn.add_node() = n;
  std::set<std::string> defined, read, kept;
  CollectNames(graph, defined, read);
  for (const std::string& name : read) {
    if (!defined.count(name)) kept.insert(name);
  }
  const google::protobuf::RepeatedPtrField<onnx::AttributeProto> no_defaults;
  const BodyCopy body(call, fn, no_defaults, prefix, std::move(kept));
  std::vector<onnx::NodeProto> nodes;
  for (int i = 0; i < fn.node_size(); ++i) nodes.push_back(body.Node(fn.node(i), i));
  for (onnx::NodeProto& n : body.PassThroughs()) nodes.push_back(std::move(n));
  return nodes;
}

absl::Status InlineLocalFunctions(onnx::ModelProto& model, int64_t max_nodes) {
  if (model.functions_size() == 0) return absl::OkStatus();
  Inliner inliner(model, max_nodes);
  absl::Status inlined = inliner.InlineGraph(*model.mutable_graph());
  if (inlined.ok()) model.clear_functions();
  return inlined;
}

}  // namespace importer
