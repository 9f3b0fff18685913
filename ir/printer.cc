// Graph -> text.
#include "ir/printer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ir {
namespace {

std::string ValueRef(const Graph& graph, ValueId id) {
  return id == kNoValue ? "_" : absl::StrCat("%", graph.value(id).name);
}

std::string TypedValue(const Graph& graph, ValueId id) {
  if (id == kNoValue) return "_";
  return absl::StrCat(ValueRef(graph, id), ": ", graph.value(id).type.ToString());
}

}  // namespace

std::string PrintNode(const Graph& graph, const Node& node) {
  std::vector<std::string> ins, outs, attrs;
  for (ValueId id : node.inputs) ins.push_back(ValueRef(graph, id));
  for (ValueId id : node.outputs) outs.push_back(TypedValue(graph, id));
  for (const auto& [name, value] : node.attrs.all()) {
    attrs.push_back(absl::StrCat(name, "=", AttributeValueToString(value)));
  }
  std::string line = absl::StrCat(node.name, ": ", node.op_type, "(", absl::StrJoin(ins, ", "), ") -> (",
                                  absl::StrJoin(outs, ", "), ")");
  if (!attrs.empty()) absl::StrAppend(&line, " {", absl::StrJoin(attrs, ", "), "}");
  return line;
}

std::string PrintGraph(const Graph& graph) {
  std::vector<std::string> ins, outs;
  for (ValueId id : graph.inputs()) ins.push_back(TypedValue(graph, id));
  for (ValueId id : graph.outputs()) outs.push_back(TypedValue(graph, id));
  std::string text =
      absl::StrCat("graph ", graph.name, " (", absl::StrJoin(ins, ", "), ") -> (", absl::StrJoin(outs, ", "), ")\n");
  for (const Value& v : graph.values()) {
    if (v.constant) absl::StrAppend(&text, "  %", v.name, " = const ", v.type.ToString(), "\n");
  }
  for (const Node& node : graph.nodes()) absl::StrAppend(&text, "  ", PrintNode(graph, node), "\n");
  return text;
}

}  // namespace ir
