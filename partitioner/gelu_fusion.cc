// GeluFusion: matches the erf GELU pattern from each Erf node and rewrites it (see gelu_fusion.h).
#include "partitioner/gelu_fusion.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "partitioner/match_rewrite.h"

namespace partitioner {
namespace {

using ir::kNoValue;
using ir::NodeId;
using ir::ValueId;

bool Near(double a, double b) { return std::abs(a - b) <= 1e-4 * std::abs(b); }

class Matcher {
 public:
  explicit Matcher(const ir::Graph& graph) : g_(graph), readers_(graph) {}

  // The GELU around Erf node `erf`: the nodes it replaces (the last one writes the output) and x.
  std::optional<std::pair<std::vector<NodeId>, ValueId>> MatchAt(NodeId erf) const {
    const ir::Node& e = g_.node(erf);
    if (e.op_type != "Erf") return std::nullopt;
    const ir::Node* scaled = SoleReaderProducer(e.inputs[0]);
    ValueId x = kNoValue;
    if (scaled == nullptr || !ScaledBy(*scaled, 1 / std::sqrt(2.0), x)) return std::nullopt;
    std::vector<NodeId> nodes = {g_.value(e.inputs[0]).producer, erf};
    // 1 + erf(...)
    const ir::Node* plus = SoleReader(e.outputs[0]);
    if (plus == nullptr || plus->op_type != "Add" || !HasConstant(*plus, 1.0)) return std::nullopt;
    nodes.push_back(Id(plus));
    // The 0.5 and the x, in any of the orders exporters write.
    const ir::Node* m1 = SoleReader(plus->outputs[0]);
    if (m1 == nullptr || m1->op_type != "Mul") return std::nullopt;
    nodes.push_back(Id(m1));
    const ValueId other = Other(*m1, plus->outputs[0]);
    if (other == x || IsConstant(other, 0.5)) {  // (x * s) * 0.5 or (s * 0.5) * x
      const ir::Node* m2 = SoleReader(m1->outputs[0]);
      const ValueId rest = m2 != nullptr && m2->op_type == "Mul" ? Other(*m2, m1->outputs[0]) : kNoValue;
      if (rest == kNoValue || !(other == x ? IsConstant(rest, 0.5) : rest == x)) return std::nullopt;
      nodes.push_back(Id(m2));
      return std::make_pair(nodes, x);
    }
    const ir::Node* half = SoleReaderProducer(other);  // (x * 0.5) * s
    if (half == nullptr || half->op_type != "Mul" || !HasConstant(*half, 0.5) || Other(*half, -1) != x) {
      return std::nullopt;
    }
    nodes.insert(nodes.begin(), g_.value(other).producer);
    return std::make_pair(nodes, x);
  }

 private:
  NodeId Id(const ir::Node* n) const { return readers_.IdOf(n); }
  const ir::Node* SoleReaderProducer(ValueId id) const { return readers_.SoleReaderProducer(id); }
  const ir::Node* SoleReader(ValueId id) const { return readers_.SoleReader(id); }
  bool IsConstant(ValueId id, double value) const {
    const ir::Value& v = g_.value(id);
    return v.constant && v.constant->num_elements() == 1 && Near(v.constant->GetAsDouble(0), value);
  }
  bool HasConstant(const ir::Node& n, double value) const {
    return IsConstant(n.inputs[0], value) || IsConstant(n.inputs[1], value);
  }
  // The operand of binary `n` that is not `id` (with id -1: the non-constant one).
  ValueId Other(const ir::Node& n, ValueId id) const {
    if (id < 0) return g_.value(n.inputs[0]).constant ? n.inputs[1] : n.inputs[0];
    return n.inputs[0] == id ? n.inputs[1] : n.inputs[0];
  }
  // `n` is x * factor (Mul by a constant, or Div by 1 / factor): sets x.
  bool ScaledBy(const ir::Node& n, double factor, ValueId& x) const {
    if (n.op_type == "Mul" && HasConstant(n, factor)) {
      x = Other(n, -1);
      return !g_.value(x).constant;
    }
    if (n.op_type == "Div" && IsConstant(n.inputs[1], 1 / factor)) {
      x = n.inputs[0];
      return !g_.value(x).constant;
    }
    return false;
  }

  const ir::Graph& g_;
  Readers readers_;
};

}  // namespace

absl::StatusOr<bool> GeluFusion::Run(ir::Graph& graph) {
  fused_ = 0;
  std::set<NodeId> removed;
  std::map<NodeId, std::vector<ir::Node>> replaced;  // last node of a match -> its Gelu
  {
    const Matcher matcher(graph);
    for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
      auto m = matcher.MatchAt(id);
      if (!m) continue;
      const ir::Node& last = graph.node(m->first.back());
      if (!ir::IsFloatingPoint(graph.value(m->second).type.dtype) || !Claim(removed, m->first)) continue;
      ir::Node gelu{last.name + "/gelu", "Gelu", std::max(last.opset, 20), {m->second}, {last.outputs[0]}, {}};
      replaced[m->first.back()].push_back(std::move(gelu));
    }
  }
  if (replaced.empty()) return false;
  fused_ = static_cast<int>(replaced.size());
  ReplaceMatched(graph, static_cast<NodeId>(graph.nodes().size()), std::move(replaced), removed);
  return true;
}

}  // namespace partitioner
