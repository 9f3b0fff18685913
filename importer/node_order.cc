// Topological order of a GraphProto's nodes, counting what their bodies read from the graph.
#include "importer/node_order.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "importer/convert.h"

namespace importer {
namespace {

// Names the graph (at `depth`) reads without defining: its nodes' inputs, its outputs, and what its
// own bodies read, less its inputs, initializers and node outputs.
absl::Status AddGraphFreeNames(const onnx::GraphProto& graph, int depth, const ImportLimits& limits,
                               std::set<std::string>& free) {
  if (absl::Status deep = CheckSubgraphDepth(depth, limits); !deep.ok()) return deep;
  std::set<std::string> defined, reads;
  for (const auto& input : graph.input()) defined.insert(input.name());
  for (const auto& init : graph.initializer()) defined.insert(init.name());
  for (const auto& node : graph.node()) {
    for (const std::string& out : node.output()) defined.insert(out);
    for (const std::string& in : node.input()) {
      if (!in.empty()) reads.insert(in);
    }
    if (absl::Status inner = AddBodyFreeNames(node, depth, limits, reads); !inner.ok()) return inner;
  }
  for (const auto& output : graph.output()) reads.insert(output.name());
  for (const std::string& name : reads) {
    if (!defined.count(name)) free.insert(name);
  }
  return absl::OkStatus();
}

// What node i reads: its inputs and its bodies' free names.
absl::StatusOr<std::vector<std::vector<std::string>>> NodeReads(const onnx::GraphProto& graph, int depth,
                                                                const ImportLimits& limits) {
  std::vector<std::vector<std::string>> reads(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    std::set<std::string> names;
    for (const std::string& in : graph.node(i).input()) {
      if (!in.empty()) names.insert(in);
    }
    if (absl::Status status = AddBodyFreeNames(graph.node(i), depth, limits, names); !status.ok()) return status;
    reads[i].assign(names.begin(), names.end());
  }
  return reads;
}

}  // namespace

absl::Status CheckSubgraphDepth(int depth, const ImportLimits& limits) {
  if (depth <= limits.max_subgraph_depth) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("control-flow bodies nest deeper than the limit of ", limits.max_subgraph_depth, " levels"));
}

absl::Status AddBodyFreeNames(const onnx::NodeProto& node, int depth, const ImportLimits& limits,
                              std::set<std::string>& free) {
  for (const auto& attr : node.attribute()) {
    if (attr.type() != onnx::AttributeProto::GRAPH) continue;
    if (absl::Status status = AddGraphFreeNames(attr.g(), depth + 1, limits, free); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> TopologicalOrder(const onnx::GraphProto& graph, int depth, const ImportLimits& limits,
                                                  const std::function<bool(const std::string&)>& is_outer) {
  absl::StatusOr<std::vector<std::vector<std::string>>> reads = NodeReads(graph, depth, limits);
  if (!reads.ok()) return reads.status();
  std::set<std::string> available;
  for (const auto& input : graph.input()) available.insert(input.name());
  for (const auto& init : graph.initializer()) available.insert(init.name());
  std::map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string& out : graph.node(i).output()) {
      if (out.empty()) continue;
      if (available.count(out) || !producer.emplace(out, i).second) {
        return absl::InvalidArgumentError(absl::StrCat("value '", out, "' is produced more than once"));
      }
    }
  }
  std::vector<int> order;
  std::vector<bool> placed(graph.node_size(), false);
  bool progress = true;
  while (progress && static_cast<int>(order.size()) < graph.node_size()) {
    progress = false;
    for (int i = 0; i < graph.node_size(); ++i) {
      if (placed[i]) continue;
      bool ready = true;
      for (const std::string& in : (*reads)[i]) {
        if (available.count(in)) continue;
        if (producer.count(in)) {
          ready = false;
        } else if (!is_outer(in)) {
          return absl::InvalidArgumentError(absl::StrCat("node '", NodeName(graph.node(i), i), "' reads '", in,
                                                         "', which nothing produces (dangling input)"));
        }
      }
      if (!ready) continue;
      for (const std::string& out : graph.node(i).output()) available.insert(out);
      placed[i] = true;
      order.push_back(i);
      progress = true;
    }
  }
  if (static_cast<int>(order.size()) < graph.node_size()) {
    std::vector<std::string> stuck;
    for (int i = 0; i < graph.node_size(); ++i) {
      if (!placed[i]) stuck.push_back(absl::StrCat("'", NodeName(graph.node(i), i), "'"));
    }
    return absl::InvalidArgumentError(absl::StrCat("the graph has a cycle through nodes ", absl::StrJoin(stuck, ", ")));
  }
  return order;
}

}  // namespace importer
