// Greedy cover: walk nodes in order; a conv/matmul that may anchor grows an epilogue region over
// its pointwise consumers, trimmed back to a single exit value; the rest map to
// Legacy/Alias/Kernel.
#include "partitioner/cover.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "partitioner/add_layer_norm.h"
#include "partitioner/channel_padding.h"
#include "partitioner/silu_tail.h"
#include "partitioner/squeeze_excite.h"

namespace partitioner {
namespace {

using ir::NodeId;
using ir::ValueId;

class Coverer {
 public:
  Coverer(const ir::Graph& graph, const FusionRules& rules)
      : graph_(graph), rules_(rules), consumers_(graph.ComputeConsumers()), assigned_(graph.nodes().size(), -1) {}

  absl::StatusOr<std::vector<exec::Step>> Run();

 private:
  exec::Step FusedStep(NodeId anchor);
  exec::Step LegacyStep(NodeId node, const std::string& reason);
  std::optional<std::pair<NodeId, NodeId>> SiluTail(ValueId x) const;
  exec::Step SingleStep(NodeId node, exec::StepKind kind, const std::string& reason);
  // The squeeze-excite MLP starting at the Conv `fc1` as one Kernel step (squeeze_excite.h).
  std::optional<exec::Step> SqueezeExciteStep(NodeId fc1) const;
  // The residual Add `add` and the LayerNormalization reading its sum as one Kernel step
  // (add_layer_norm.h).
  std::optional<AddLayerNorm> AddNorm(NodeId add) const;
  // The index of the single-Cast Kernel step that the channel Pad `pad` joins (one pass that casts,
  // changes the layout and pads on the GPU), or -1.
  int CastStepToJoin(NodeId pad, const std::vector<exec::Step>& steps) const;
  bool SameShapeAsAnchor(const ir::Node& node, const ir::Shape& out, const ir::Shape& anchor,
                         const std::set<ValueId>& region_values) const;
  // "" when `candidate` may join the region grown from `anchor`.
  std::string CandidateRejection(NodeId anchor, NodeId candidate, const std::set<ValueId>& region_values,
                                 const std::set<NodeId>& downstream) const;
  std::set<NodeId> Downstream(NodeId anchor) const;
  // Values of `nodes` read outside them or graph outputs.
  std::vector<ValueId> EscapingValues(const std::vector<NodeId>& nodes) const;
  bool IsSingleReaderOf(ValueId value, NodeId reader) const;
  void FillEdges(exec::Step& step) const;
  absl::StatusOr<std::vector<exec::Step>> Order(std::vector<exec::Step> steps) const;

  const ir::Graph& graph_;
  const FusionRules& rules_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<int> assigned_;  // node -> step index
  int next_step_index_ = 0;    // index of the step being built
  // Fusion stops per step, kept only if the blocked node does not end up fused by another anchor.
  std::map<int, std::vector<std::pair<NodeId, std::string>>> stops_;
};

std::string NodeLabel(const ir::Node& node) { return absl::StrCat(node.op_type, " '", node.name, "'"); }

std::set<NodeId> Coverer::Downstream(NodeId anchor) const {
  std::set<NodeId> seen;
  std::vector<NodeId> stack = {anchor};
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    for (ValueId out : graph_.node(n).outputs) {
      if (out == ir::kNoValue) continue;
      for (NodeId c : consumers_[out]) {
        if (seen.insert(c).second) stack.push_back(c);
      }
    }
  }
  return seen;
}

int Coverer::CastStepToJoin(NodeId pad, const std::vector<exec::Step>& steps) const {
  const ir::Node& node = graph_.node(pad);
  if (!IsChannelZeroPad(graph_, node)) return -1;
  const NodeId cast = graph_.value(node.inputs[0]).producer;
  if (cast < 0 || graph_.node(cast).op_type != "Cast" || !IsSingleReaderOf(node.inputs[0], pad)) return -1;
  const int s = assigned_[cast];
  return s >= 0 && steps[s].kind == exec::StepKind::kKernel && steps[s].nodes.size() == 1 ? s : -1;
}

bool Coverer::IsSingleReaderOf(ValueId value, NodeId reader) const {
  return consumers_[value].size() == 1 && consumers_[value][0] == reader && !graph_.IsGraphOutput(value);
}

// The node's output has the anchor's shape: equal dims, or dims unknown in both (dynamic exports)
// where no other operand of the node can widen them (it has 1 there, or lacks the dim).
bool Coverer::SameShapeAsAnchor(const ir::Node& node, const ir::Shape& out, const ir::Shape& anchor,
                                const std::set<ValueId>& region_values) const {
  if (out.size() != anchor.size()) return false;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == anchor[d]) continue;
    const bool both_unknown =
        !out[d].known() && out[d].symbol.empty() && !anchor[d].known() && anchor[d].symbol.empty();
    if (!both_unknown) return false;
    for (ValueId in : node.inputs) {
      if (in == ir::kNoValue || region_values.count(in)) continue;
      const ir::TensorType& t = graph_.value(in).type;
      if (!t.shape) return false;
      const int64_t at = static_cast<int64_t>(d) - static_cast<int64_t>(out.size() - t.shape->size());
      if (at >= 0 && !((*t.shape)[at].known() && (*t.shape)[at].value == 1)) return false;
    }
  }
  return true;
}

std::string Coverer::CandidateRejection(NodeId anchor, NodeId candidate, const std::set<ValueId>& region_values,
                                        const std::set<NodeId>& downstream) const {
  const ir::Node& node = graph_.node(candidate);
  std::string reason = EpilogueNodeRejection(rules_, graph_, node);
  if (!reason.empty()) return reason;
  if (AddNorm(candidate)) {
    return "the residual Add joins the LayerNormalization that reads its sum (added in the norm's pass, cheaper "
           "than in the matmul's epilogue)";
  }
  const ir::TensorType& anchor_out = graph_.value(graph_.node(anchor).outputs[0]).type;
  const ir::TensorType& out = graph_.value(node.outputs[0]).type;
  if (node.outputs.size() != 1 || out.dtype != anchor_out.dtype || !out.shape || !anchor_out.shape ||
      !SameShapeAsAnchor(node, *out.shape, *anchor_out.shape, region_values)) {
    return absl::StrCat(node.op_type, " output ", out.ToString(), " differs from the anchor's ", anchor_out.ToString());
  }
  const EpilogueOpRule* rule = FindEpilogueRule(rules_, node.op_type);
  const bool is_conv = graph_.node(anchor).op_type == "Conv";
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId in = node.inputs[i];
    if (in == ir::kNoValue || region_values.count(in)) continue;
    if (rule->operands == 1) continue;  // Clip bounds: constants, checked by the node rule
    if (i == 0 && !rule->commutative) {
      return absl::StrCat(node.op_type, " has the anchor's result as second operand (cuDNN needs it first)");
    }
    const ir::Value& v = graph_.value(in);
    std::optional<OperandShape> shape =
        v.type.shape ? ClassifyOperand(*anchor_out.shape, *v.type.shape, is_conv) : std::nullopt;
    if (!shape) {
      return absl::StrCat(node.op_type, " operand shape ", v.type.ToString(),
                          " not allowed as epilogue operand (scalar, per-channel or the full output)");
    }
    if (v.producer >= 0 && downstream.count(v.producer)) {
      return absl::StrCat(node.op_type, " operand '", v.name, "' is computed from the anchor's output");
    }
  }
  return "";
}

std::vector<ValueId> Coverer::EscapingValues(const std::vector<NodeId>& nodes) const {
  std::set<NodeId> inside(nodes.begin(), nodes.end());
  std::vector<ValueId> escaping;
  for (NodeId n : nodes) {
    for (ValueId out : graph_.node(n).outputs) {
      if (out == ir::kNoValue) continue;
      bool escapes = graph_.IsGraphOutput(out);
      for (NodeId c : consumers_[out]) escapes = escapes || !inside.count(c);
      if (escapes) escaping.push_back(out);
    }
  }
  return escaping;
}

exec::Step Coverer::FusedStep(NodeId anchor) {
  const std::set<NodeId> downstream = Downstream(anchor);
  std::vector<NodeId> region = {anchor};
  std::set<ValueId> region_values = {graph_.node(anchor).outputs[0]};
  std::map<NodeId, std::string> blocked;
  while (true) {
    NodeId next = -1;
    for (ValueId v : region_values) {
      for (NodeId c : consumers_[v]) {
        if (assigned_[c] >= 0 || std::count(region.begin(), region.end(), c)) continue;
        std::string reason = CandidateRejection(anchor, c, region_values, downstream);
        if (reason.empty()) {
          if (next < 0 || c < next) next = c;
        } else {
          blocked[c] = reason;
        }
      }
    }
    if (next < 0) break;
    blocked.erase(next);
    region.push_back(next);
    region_values.insert(graph_.node(next).outputs[0]);
  }
  // Keep the longest prefix with a single exit value (cuDNN writes one output).
  size_t keep = region.size();
  while (keep > 1 && EscapingValues({region.begin(), region.begin() + keep}).size() != 1) --keep;
  exec::Step step;
  step.kind = exec::StepKind::kFusedGraph;
  step.nodes.assign(region.begin(), region.begin() + keep);
  for (size_t i = keep; i < region.size(); ++i) {
    blocked[region[i]] = "joining it would leave a second intermediate read outside the step";
  }
  const std::set<NodeId> kept(step.nodes.begin(), step.nodes.end());
  for (const auto& [node, reason] : blocked) {
    const bool pointwise = FindEpilogueRule(rules_, graph_.node(node).op_type) != nullptr;
    if (pointwise && !kept.count(node)) {
      step.reasons.push_back(absl::StrCat("not fused ", NodeLabel(graph_.node(node)), ": ", reason));
    }
  }
  return step;
}

exec::Step Coverer::SingleStep(NodeId node, exec::StepKind kind, const std::string& reason) {
  exec::Step step;
  step.kind = kind;
  step.nodes = {node};
  if (!reason.empty()) step.reasons.push_back(reason);
  return step;
}

std::optional<exec::Step> Coverer::SqueezeExciteStep(NodeId fc1) const {
  if (graph_.node(fc1).op_type != "Conv") return std::nullopt;
  const ValueReaders readers = [this](ValueId v) { return consumers_[v]; };
  std::optional<SqueezeExciteForm> form = MatchSqueezeExcite(graph_, fc1, readers);
  if (!form) return std::nullopt;
  for (NodeId n : form->nodes) {
    if (assigned_[n] >= 0) return std::nullopt;
  }
  exec::Step step;
  step.kind = exec::StepKind::kKernel;
  step.nodes = form->nodes;
  return step;
}

std::optional<AddLayerNorm> Coverer::AddNorm(NodeId add) const {
  const std::optional<AddLayerNorm> form = MatchAddLayerNorm(graph_, add, [this](ValueId v) { return consumers_[v]; });
  if (!form || assigned_[form->add] >= 0 || assigned_[form->norm] >= 0) return std::nullopt;
  return form;
}

// The Sigmoid and Mul of x * Sigmoid(x) (SiLU) behind `x` (MatchSiluTail), both still unassigned.
std::optional<std::pair<NodeId, NodeId>> Coverer::SiluTail(ValueId x) const {
  std::optional<std::pair<NodeId, NodeId>> silu = MatchSiluTail(graph_, x, [this](ValueId v) { return consumers_[v]; });
  if (!silu || assigned_[silu->first] >= 0 || assigned_[silu->second] >= 0) return std::nullopt;
  return silu;
}

// Legacy step; a grouped/depthwise conv also takes a following Relu or Clip(0, x) (cuDNN's legacy
// conv+bias+activation) or, when depthwise, SiLU x*Sigmoid(x) (the own depthwise kernel's
// activation); a BatchNormalization a following Relu (cudnnNormalizationForwardInference with
// activation); each when the step is the only reader of the output.
exec::Step Coverer::LegacyStep(NodeId node, const std::string& reason) {
  exec::Step step = SingleStep(node, exec::StepKind::kLegacy, reason);
  const ir::Node& anchor = graph_.node(node);
  const std::string& op = anchor.op_type;
  if (op != "Conv" && op != "BatchNormalization") return step;
  const ValueId out = anchor.outputs[0];
  const ir::Dim* channels = anchor.inputs.empty() || graph_.value(anchor.inputs[0]).type.rank() != 4
                                ? nullptr
                                : &(*graph_.value(anchor.inputs[0]).type.shape)[1];
  const bool depthwise =
      op == "Conv" && channels != nullptr && channels->known() && anchor.attrs.GetInt("group", 1) == channels->value;
  if (depthwise) {
    if (std::optional<std::pair<NodeId, NodeId>> silu = SiluTail(out)) {
      step.nodes.push_back(silu->first);
      step.nodes.push_back(silu->second);
      return step;
    }
  }
  if (consumers_[out].size() != 1 || !IsSingleReaderOf(out, consumers_[out][0])) return step;
  const NodeId next = consumers_[out][0];
  const ir::Node& act = graph_.node(next);
  bool absorbable = act.op_type == "Relu";
  if (act.op_type == "Clip" && op == "Conv") {
    const ValueId lo = act.input(1);
    absorbable = lo != ir::kNoValue && graph_.value(lo).constant && graph_.value(lo).constant->GetAsDouble(0) == 0.0;
    for (size_t i = 1; i < act.inputs.size(); ++i) {
      if (act.inputs[i] != ir::kNoValue && !graph_.value(act.inputs[i]).constant) absorbable = false;
    }
  }
  if (absorbable && assigned_[next] < 0) step.nodes.push_back(next);
  return step;
}

void Coverer::FillEdges(exec::Step& step) const {
  std::set<ValueId> produced;
  std::vector<std::string> ops;
  for (NodeId n : step.nodes) {
    for (ValueId out : graph_.node(n).outputs) produced.insert(out);
    ops.push_back(graph_.node(n).op_type);
  }
  step.pattern = absl::StrJoin(ops, "+");
  for (NodeId n : step.nodes) {
    for (ValueId in : graph_.node(n).inputs) {
      if (in == ir::kNoValue || produced.count(in)) continue;
      if (std::find(step.inputs.begin(), step.inputs.end(), in) == step.inputs.end()) step.inputs.push_back(in);
    }
  }
  step.outputs = EscapingValues(step.nodes);
}

absl::StatusOr<std::vector<exec::Step>> Coverer::Order(std::vector<exec::Step> steps) const {
  const int n = static_cast<int>(steps.size());
  std::vector<std::set<int>> successors(n);
  std::vector<int> pending(n, 0);
  for (int s = 0; s < n; ++s) {
    std::set<int> deps;
    for (ValueId in : steps[s].inputs) {
      const NodeId producer = graph_.value(in).producer;
      if (producer >= 0 && assigned_[producer] != s) deps.insert(assigned_[producer]);
    }
    for (int d : deps) successors[d].insert(s);
    pending[s] = static_cast<int>(deps.size());
  }
  std::set<std::pair<NodeId, int>> ready;  // ordered by the step's first node
  for (int s = 0; s < n; ++s) {
    if (pending[s] == 0) ready.insert({steps[s].nodes[0], s});
  }
  std::vector<exec::Step> ordered;
  while (!ready.empty()) {
    const int s = ready.begin()->second;
    ready.erase(ready.begin());
    ordered.push_back(steps[s]);
    for (int next : successors[s]) {
      if (--pending[next] == 0) ready.insert({steps[next].nodes[0], next});
    }
  }
  if (static_cast<int>(ordered.size()) != n) return absl::InternalError("step cover has a cycle");
  return ordered;
}

absl::StatusOr<std::vector<exec::Step>> Coverer::Run() {
  std::vector<exec::Step> steps;
  for (NodeId id = 0; id < static_cast<NodeId>(graph_.nodes().size()); ++id) {
    if (assigned_[id] >= 0) continue;
    const ir::Node& node = graph_.node(id);
    exec::Step step;
    if (std::optional<exec::Step> squeeze_excite = SqueezeExciteStep(id)) {
      step = *std::move(squeeze_excite);
    } else if (std::optional<AddLayerNorm> add_norm = AddNorm(id)) {
      step.kind = exec::StepKind::kKernel;
      step.nodes = {add_norm->add, add_norm->norm};
    } else if (IsAnchorOp(node.op_type)) {
      const std::string rejection = AnchorRejection(rules_, graph_, node);
      if (rejection.empty()) {
        step = FusedStep(id);
      } else if (node.op_type == "Conv") {
        step = LegacyStep(id, absl::StrCat("not a FusedGraph: ", rejection));
      } else {
        step = SingleStep(id, exec::StepKind::kKernel, absl::StrCat("not a FusedGraph: ", rejection));
      }
    } else if (IsLegacyOp(node)) {
      step = LegacyStep(id, node.op_type == "BatchNormalization"
                                ? "BatchNormalization not folded: its input is not a conv/Gemm output "
                                  "read only by it, or its parameters are not constant"
                                : "");
    } else if (IsAliasOp(node, graph_)) {
      step = SingleStep(id, exec::StepKind::kAlias, "");
    } else if (const int cast_step = CastStepToJoin(id, steps); cast_step >= 0) {
      steps[cast_step].nodes.push_back(id);
      assigned_[id] = cast_step;
      continue;
    } else {
      step = SingleStep(id, exec::StepKind::kKernel, "");
    }
    for (NodeId n : step.nodes) assigned_[n] = static_cast<int>(steps.size());
    steps.push_back(std::move(step));
    next_step_index_ = static_cast<int>(steps.size());
  }
  for (const auto& [index, stops] : stops_) {
    for (const auto& [node, reason] : stops) {
      if (steps[assigned_[node]].kind != exec::StepKind::kFusedGraph) steps[index].reasons.push_back(reason);
    }
  }
  for (exec::Step& step : steps) FillEdges(step);
  return Order(std::move(steps));
}

}  // namespace

absl::StatusOr<std::vector<exec::Step>> CoverGraph(const ir::Graph& graph, const FusionRules& rules) {
  return Coverer(graph, rules).Run();
}

}  // namespace partitioner
