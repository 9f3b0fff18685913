// Plan -> text, JSON and dot.
#include "partitioner/explain.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "partitioner/fusion_rules.h"
#include "partitioner/layout.h"
#include "partitioner/squeeze_excite.h"

namespace partitioner {
namespace {

constexpr exec::StepKind kKinds[] = {exec::StepKind::kFusedGraph, exec::StepKind::kLegacy, exec::StepKind::kKernel,
                                     exec::StepKind::kAlias};

std::string LayoutOf(const ir::Value& v) {
  if (!v.layout.empty()) return v.layout;
  return v.constant ? "const" : "logical";
}

std::string TensorText(const ir::Graph& g, ir::ValueId id) {
  const ir::Value& v = g.value(id);
  return absl::StrCat(v.name, " ", v.type.ToString(), " ", LayoutOf(v));
}

// Activation inputs (constants are weights: listed apart).
std::vector<ir::ValueId> ActivationInputs(const exec::Plan& plan, const exec::Step& step) {
  std::vector<ir::ValueId> ids;
  for (ir::ValueId id : step.inputs) {
    if (!plan.graph.value(id).constant) ids.push_back(id);
  }
  return ids;
}

struct Summary {
  std::map<exec::StepKind, int> steps, nodes;
  std::map<std::string, int> fused_pointwise;
  int fused_pointwise_total = 0;
  int bns_left = 0;
  int squeeze_excite = 0;  // squeeze-excite MLPs run as one step (squeeze_excite.h)
};

Summary Summarize(const exec::Plan& plan) {
  Summary s;
  for (const exec::Step& step : plan.steps) {
    ++s.steps[step.kind];
    s.nodes[step.kind] += static_cast<int>(step.nodes.size());
    if (step.kind == exec::StepKind::kKernel && MatchSqueezeExciteStep(plan.graph, step.nodes)) ++s.squeeze_excite;
    for (ir::NodeId id : step.nodes) {
      const ir::Node& node = plan.graph.node(id);
      if (node.op_type == "BatchNormalization") ++s.bns_left;
      if (step.kind == exec::StepKind::kFusedGraph && !IsAnchorOp(node.op_type)) {
        ++s.fused_pointwise[node.op_type];
        ++s.fused_pointwise_total;
      }
    }
  }
  return s;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, "\\u00", c < 16 ? "0" : "1", std::string(1, "0123456789abcdef"[c & 15]));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonTensor(const ir::Graph& g, ir::ValueId id) {
  const ir::Value& v = g.value(id);
  std::vector<std::string> dims;
  if (v.type.shape) {
    for (const ir::Dim& d : *v.type.shape)
      dims.push_back(d.known() ? std::to_string(d.value) : JsonString(d.ToString()));
  }
  return absl::StrCat("{\"name\": ", JsonString(v.name), ", \"dtype\": ", JsonString(ir::DTypeName(v.type.dtype)),
                      ", \"shape\": ", v.type.shape ? absl::StrCat("[", absl::StrJoin(dims, ", "), "]") : "null",
                      ", \"layout\": ", JsonString(LayoutOf(v)), "}");
}

std::string JsonList(const std::vector<std::string>& items) {
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

}  // namespace

std::string ExplainSummary(const exec::Plan& plan) {
  const Summary s = Summarize(plan);
  std::vector<std::string> steps, nodes, pointwise;
  for (exec::StepKind kind : kKinds) {
    steps.push_back(absl::StrCat(exec::StepKindName(kind), " ", s.steps.count(kind) ? s.steps.at(kind) : 0));
    nodes.push_back(absl::StrCat(exec::StepKindName(kind), " ", s.nodes.count(kind) ? s.nodes.at(kind) : 0));
  }
  for (const auto& [op, count] : s.fused_pointwise) pointwise.push_back(absl::StrCat(op, " ", count));
  return absl::StrCat(
      "steps: ", absl::StrJoin(steps, ", "), "\n", "nodes: ", absl::StrJoin(nodes, ", "), "\n",
      "fused pointwise ops: ", s.fused_pointwise_total,
      pointwise.empty() ? "" : absl::StrCat(" (", absl::StrJoin(pointwise, ", "), ")"), "\n",
      "BNs folded: ", plan.stats.bns_folded, ", BNs left: ", s.bns_left, "\n",
      "attention patterns fused: ", plan.stats.attention_fused, "\n",
      plan.stats.patch_convs > 0 ? absl::StrCat("patch convs run as matmuls: ", plan.stats.patch_convs, "\n") : "",
      plan.stats.einsums_lowered > 0 ? absl::StrCat("Einsums run as MatMul chains: ", plan.stats.einsums_lowered, "\n")
                                     : "",
      plan.stats.transposes_merged > 0
          ? absl::StrCat("Transpose pairs merged or dropped: ", plan.stats.transposes_merged, "\n")
          : "",
      plan.stats.pointwise_folded > 0
          ? absl::StrCat("per-channel Mul/Add/Sub/Div folded into convs: ", plan.stats.pointwise_folded, "\n")
          : "",
      plan.stats.pads_folded > 0 ? absl::StrCat("Pads folded into conv pads: ", plan.stats.pads_folded, "\n") : "",
      s.squeeze_excite > 0 ? absl::StrCat("squeeze-excite MLPs as one step: ", s.squeeze_excite, "\n") : "",
      "layout conversions: ", FindLayoutConversions(plan.graph).size(), "\n");
}

std::string ExplainText(const exec::Plan& plan) {
  const ir::Graph& g = plan.graph;
  std::string text = absl::StrCat("plan: ", plan.steps.size(), " steps, precision ", plan.precision, "\n");
  if (!plan.stats.precision_note.empty()) {
    absl::StrAppend(&text, "precision: float32 kept for the whole graph: ", plan.stats.precision_note, "\n");
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const exec::Step& step = plan.steps[i];
    std::vector<std::string> nodes, ins, outs;
    for (ir::NodeId id : step.nodes) nodes.push_back(absl::StrCat(g.node(id).name, ":", g.node(id).op_type));
    for (ir::ValueId id : ActivationInputs(plan, step)) ins.push_back(TensorText(g, id));
    for (ir::ValueId id : step.outputs) outs.push_back(TensorText(g, id));
    absl::StrAppend(&text, "#", i, " ", exec::StepKindName(step.kind), " ", step.pattern, " [",
                    absl::StrJoin(nodes, ", "), "]\n    in: ", absl::StrJoin(ins, "; "),
                    "\n    out: ", absl::StrJoin(outs, "; "), "\n");
    for (const std::string& reason : step.reasons) absl::StrAppend(&text, "    why: ", reason, "\n");
  }
  for (const LayoutConversion& c : FindLayoutConversions(g)) {
    absl::StrAppend(&text, "layout: ", g.value(c.value).name, " ", c.from, " -> ", c.to, " for ",
                    c.consumer >= 0 ? absl::StrCat(g.node(c.consumer).op_type, " '", g.node(c.consumer).name, "'")
                                    : std::string("the graph output"),
                    "\n");
  }
  return absl::StrCat(text, "summary:\n", ExplainSummary(plan));
}

std::string ExplainJson(const exec::Plan& plan) {
  const ir::Graph& g = plan.graph;
  const Summary s = Summarize(plan);
  std::vector<std::string> steps;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const exec::Step& step = plan.steps[i];
    std::vector<std::string> nodes, ins, outs, reasons;
    for (ir::NodeId id : step.nodes) {
      nodes.push_back(absl::StrCat("{\"name\": ", JsonString(g.node(id).name),
                                   ", \"op_type\": ", JsonString(g.node(id).op_type), "}"));
    }
    for (ir::ValueId id : ActivationInputs(plan, step)) ins.push_back(JsonTensor(g, id));
    for (ir::ValueId id : step.outputs) outs.push_back(JsonTensor(g, id));
    for (const std::string& r : step.reasons) reasons.push_back(JsonString(r));
    steps.push_back(absl::StrCat("    {\"index\": ", i, ", \"kind\": ", JsonString(exec::StepKindName(step.kind)),
                                 ", \"pattern\": ", JsonString(step.pattern), ", \"nodes\": ", JsonList(nodes),
                                 ", \"inputs\": ", JsonList(ins), ", \"outputs\": ", JsonList(outs),
                                 ", \"reasons\": ", JsonList(reasons), "}"));
  }
  std::vector<std::string> step_counts, node_counts, pointwise;
  for (exec::StepKind kind : kKinds) {
    step_counts.push_back(
        absl::StrCat(JsonString(exec::StepKindName(kind)), ": ", s.steps.count(kind) ? s.steps.at(kind) : 0));
    node_counts.push_back(
        absl::StrCat(JsonString(exec::StepKindName(kind)), ": ", s.nodes.count(kind) ? s.nodes.at(kind) : 0));
  }
  for (const auto& [op, count] : s.fused_pointwise) pointwise.push_back(absl::StrCat(JsonString(op), ": ", count));
  return absl::StrCat(
      "{\n  \"schema_version\": 1,\n  \"precision\": ", JsonString(plan.precision), ",\n  \"steps\": [\n",
      absl::StrJoin(steps, ",\n"), "\n  ],\n  \"summary\": {", "\"steps\": {", absl::StrJoin(step_counts, ", "),
      "}, \"nodes\": {", absl::StrJoin(node_counts, ", "), "}, \"fused_pointwise\": {", absl::StrJoin(pointwise, ", "),
      "}, \"bns_folded\": ", plan.stats.bns_folded, ", \"attention_fused\": ", plan.stats.attention_fused,
      ", \"patch_convs\": ", plan.stats.patch_convs, ", \"einsums_lowered\": ", plan.stats.einsums_lowered,
      ", \"transposes_merged\": ", plan.stats.transposes_merged,
      ", \"pointwise_folded\": ", plan.stats.pointwise_folded, ", \"pads_folded\": ", plan.stats.pads_folded,
      ", \"squeeze_excite\": ", s.squeeze_excite, ", \"bns_left\": ", s.bns_left,
      ", \"layout_conversions\": ", FindLayoutConversions(plan.graph).size(), "}\n}\n");
}

std::string ExplainDot(const exec::Plan& plan) {
  const ir::Graph& g = plan.graph;
  std::string dot = "digraph plan {\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n";
  static const std::map<exec::StepKind, std::string> kColor = {{exec::StepKind::kFusedGraph, "palegreen"},
                                                               {exec::StepKind::kLegacy, "lightblue"},
                                                               {exec::StepKind::kKernel, "lightgrey"},
                                                               {exec::StepKind::kAlias, "white"}};
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const exec::Step& step = plan.steps[i];
    absl::StrAppend(&dot, "  subgraph cluster_", i, " {\n    label=",
                    JsonString(absl::StrCat("#", i, " ", exec::StepKindName(step.kind), " ", step.pattern)),
                    ";\n    style=filled; color=", kColor.at(step.kind), ";\n");
    for (ir::NodeId id : step.nodes) {
      absl::StrAppend(&dot, "    n", id, " [label=", JsonString(absl::StrCat(g.node(id).name, " ", g.node(id).op_type)),
                      "];\n");
    }
    dot += "  }\n";
  }
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(g.nodes().size()); ++id) {
    for (ir::ValueId in : g.node(id).inputs) {
      if (in != ir::kNoValue && g.value(in).producer >= 0) {
        absl::StrAppend(&dot, "  n", g.value(in).producer, " -> n", id, ";\n");
      }
    }
  }
  return dot + "}\n";
}

}  // namespace partitioner
