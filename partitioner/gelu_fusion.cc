// GeluFusion: matches the erf and tanh GELU patterns from each Erf / Tanh node and rewrites them
// (see gelu_fusion.h).
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

  // A GELU match: the nodes it replaces (the last one writes the output), x, and its form.
  struct Match {
    std::vector<NodeId> nodes;
    ValueId x = kNoValue;
    bool tanh = false;
  };

  // The GELU around the Erf or Tanh node `id`.
  std::optional<Match> MatchAt(NodeId id) const {
    const ir::Node& n = g_.node(id);
    Match m;
    if (n.op_type == "Erf") {
      if (!ErfArgument(n, m)) return std::nullopt;
    } else if (n.op_type == "Tanh") {
      if (!TanhArgument(n, m)) return std::nullopt;
      m.tanh = true;
    } else {
      return std::nullopt;
    }
    m.nodes.push_back(id);
    if (!MatchTail(n.outputs[0], m)) return std::nullopt;
    return m;
  }

 private:
  // erf(x / sqrt(2)): sets x, adds the scaling node.
  bool ErfArgument(const ir::Node& erf, Match& m) const {
    const ir::Node* scaled = SoleReaderProducer(erf.inputs[0]);
    if (scaled == nullptr || !ScaledBy(*scaled, 1 / std::sqrt(2.0), m.x)) return false;
    m.nodes.push_back(Id(scaled));
    return true;
  }

  // tanh(sqrt(2/pi) * (x + 0.044715 * x^3)), x^3 as Pow(x, 3), x * (x * x) or (x * x) * x: sets x,
  // adds the nodes before the Tanh.
  bool TanhArgument(const ir::Node& tanh, Match& m) const {
    const ir::Node* scaled = SoleReaderProducer(tanh.inputs[0]);
    ValueId sum_id = kNoValue;
    if (scaled == nullptr || !ScaledBy(*scaled, std::sqrt(2.0 / M_PI), sum_id)) return false;
    const ir::Node* sum = SoleReaderProducer(sum_id);
    if (sum == nullptr || sum->op_type != "Add") return false;
    for (int side : {0, 1}) {
      const ir::Node* cubic = SoleReaderProducer(sum->inputs[side]);
      ValueId cube = kNoValue;
      if (cubic == nullptr || !ScaledBy(*cubic, 0.044715, cube)) continue;
      const ValueId x = sum->inputs[1 - side];
      std::vector<NodeId> cube_nodes;
      if (!IsCubeOf(cube, x, cube_nodes)) continue;
      m.x = x;
      m.nodes = cube_nodes;
      for (const ir::Node* n : {cubic, sum, scaled}) m.nodes.push_back(Id(n));
      return true;
    }
    return false;
  }

  // `cube` is x^3: Pow(x, 3) or a product of x and x * x (either order); adds its nodes.
  bool IsCubeOf(ValueId cube, ValueId x, std::vector<NodeId>& nodes) const {
    const ir::Node* n = SoleReaderProducer(cube);
    if (n == nullptr) return false;
    if (n->op_type == "Pow") {
      nodes.push_back(Id(n));
      return n->inputs[0] == x && IsConstant(n->inputs[1], 3.0);
    }
    if (n->op_type != "Mul") return false;
    for (int side : {0, 1}) {
      if (n->inputs[1 - side] != x) continue;
      const ir::Node* square = SoleReaderProducer(n->inputs[side]);
      if (square == nullptr || square->op_type != "Mul" || square->inputs[0] != x || square->inputs[1] != x) continue;
      nodes.push_back(Id(square));
      nodes.push_back(Id(n));
      return true;
    }
    return false;
  }

  // 0.5 * x * (1 + f), f the Erf/Tanh output: the 0.5 and the x in any of the orders exporters
  // write; adds the nodes after f.
  bool MatchTail(ValueId f, Match& m) const {
    const ValueId x = m.x;
    const ir::Node* plus = SoleReader(f);
    if (plus == nullptr || plus->op_type != "Add" || !HasConstant(*plus, 1.0)) return false;
    m.nodes.push_back(Id(plus));
    const ir::Node* m1 = SoleReader(plus->outputs[0]);
    if (m1 == nullptr || m1->op_type != "Mul") return false;
    m.nodes.push_back(Id(m1));
    const ValueId other = Other(*m1, plus->outputs[0]);
    if (other == x || IsConstant(other, 0.5)) {  // (x * s) * 0.5 or (s * 0.5) * x
      const ir::Node* m2 = SoleReader(m1->outputs[0]);
      const ValueId rest = m2 != nullptr && m2->op_type == "Mul" ? Other(*m2, m1->outputs[0]) : kNoValue;
      if (rest == kNoValue || !(other == x ? IsConstant(rest, 0.5) : rest == x)) return false;
      m.nodes.push_back(Id(m2));
      return true;
    }
    const ir::Node* half = SoleReaderProducer(other);  // (x * 0.5) * s
    if (half == nullptr || half->op_type != "Mul" || !HasConstant(*half, 0.5) || Other(*half, -1) != x) {
      return false;
    }
    m.nodes.insert(m.nodes.begin(), g_.value(other).producer);
    return true;
  }

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
      std::optional<Matcher::Match> m = matcher.MatchAt(id);
      if (!m) continue;
      const ir::Node& last = graph.node(m->nodes.back());
      if (!ir::IsFloatingPoint(graph.value(m->x).type.dtype) || !Claim(removed, m->nodes)) continue;
      ir::Node gelu{last.name + "/gelu", "Gelu", std::max(last.opset, 20), {m->x}, {last.outputs[0]}, {}};
      if (m->tanh) gelu.attrs.Set("approximate", std::string("tanh"));
      replaced[m->nodes.back()].push_back(std::move(gelu));
    }
  }
  if (replaced.empty()) return false;
  fused_ = static_cast<int>(replaced.size());
  ReplaceMatched(graph, static_cast<NodeId>(graph.nodes().size()), std::move(replaced), removed);
  return true;
}

}  // namespace partitioner
