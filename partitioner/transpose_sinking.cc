// TransposeSinking (transpose_sinking.h).
#include "partitioner/transpose_sinking.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "ops/infer_graph.h"
#include "partitioner/match_rewrite.h"

namespace partitioner {
namespace {

using ir::kNoValue;
using ir::NodeId;
using ir::ValueId;

// A Transpose -> MatMul(W) [-> Add(b)] chain; `last` writes the value the moved Transpose will.
struct Match {
  NodeId transpose = -1, matmul = -1, add = -1;
  ValueId bias = kNoValue;
  NodeId last() const { return add >= 0 ? add : matmul; }
};

bool KeepsLastAxis(const ir::Graph& g, const ir::Node& transpose) {
  const ir::TensorType& in = g.value(transpose.inputs[0]).type;
  if (!in.shape || in.rank() < 3) return false;
  const std::vector<int64_t> perm = transpose.attrs.GetInts("perm", {});
  return static_cast<int64_t>(perm.size()) == in.rank() && perm.back() == in.rank() - 1;
}

// A constant that only varies along the last axis (a bias row), of rank <= that of `of`.
bool IsBiasRow(const ir::Graph& g, ValueId id, int64_t rank) {
  const ir::Value& v = g.value(id);
  if (!v.constant || v.type.rank() > rank) return false;
  const std::vector<int64_t>& dims = v.constant->shape();
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    if (dims[i] != 1) return false;
  }
  return true;
}

std::optional<Match> MatchAt(const ir::Graph& g, const Readers& readers, NodeId id) {
  const ir::Node& t = g.node(id);
  if (t.op_type != "Transpose" || t.inputs.empty() || !KeepsLastAxis(g, t)) return std::nullopt;
  const ir::Node* mm = readers.SoleReader(t.outputs[0]);
  if (mm == nullptr || mm->op_type != "MatMul" || mm->inputs[0] != t.outputs[0]) return std::nullopt;
  const ir::Value& w = g.value(mm->inputs[1]);
  if (!w.constant || w.type.rank() != 2) return std::nullopt;
  Match m;
  m.transpose = id;
  m.matmul = readers.IdOf(mm);
  const ir::Node* add = readers.SoleReader(mm->outputs[0]);
  if (add != nullptr && add->op_type == "Add" && add->inputs.size() == 2) {
    const ValueId other = add->inputs[0] == mm->outputs[0] ? add->inputs[1] : add->inputs[0];
    if (IsBiasRow(g, other, g.value(t.inputs[0]).type.rank())) {
      m.add = readers.IdOf(add);
      m.bias = other;
    }
  }
  return m;
}

// MatMul(x, W) [+ b] into new values, then the Transpose into the chain's old output.
std::vector<ir::Node> Rewrite(ir::Graph& g, const Match& m) {
  const ir::Node t = g.node(m.transpose), mm = g.node(m.matmul);
  const ValueId out = g.node(m.last()).outputs[0];
  std::vector<ir::Node> made;
  const ValueId product = g.AddValue(g.value(mm.outputs[0]).name + "/before_transpose");
  made.push_back(ir::Node{mm.name, "MatMul", mm.opset, {t.inputs[0], mm.inputs[1]}, {product}, mm.attrs});
  ValueId moved = product;
  if (m.add >= 0) {
    const ir::Node& add = g.node(m.add);
    moved = g.AddValue(g.value(add.outputs[0]).name + "/before_transpose");
    made.push_back(ir::Node{add.name, "Add", add.opset, {product, m.bias}, {moved}, add.attrs});
  }
  made.push_back(ir::Node{t.name, "Transpose", t.opset, {moved}, {out}, t.attrs});
  return made;
}

}  // namespace

absl::StatusOr<bool> TransposeSinking::Run(ir::Graph& graph) {
  moved_ = 0;
  std::vector<Match> matches;
  std::set<NodeId> removed;
  {
    const Readers readers(graph);
    for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
      std::optional<Match> m = MatchAt(graph, readers, id);
      if (!m) continue;
      std::vector<NodeId> nodes = {m->transpose, m->matmul};
      if (m->add >= 0) nodes.push_back(m->add);
      if (Claim(removed, nodes)) matches.push_back(*m);
    }
  }
  if (matches.empty()) return false;
  std::map<NodeId, std::vector<ir::Node>> made;
  const NodeId original_count = static_cast<NodeId>(graph.nodes().size());
  for (const Match& m : matches) made[m.last()] = Rewrite(graph, m);
  moved_ = static_cast<int>(matches.size());
  ReplaceMatched(graph, original_count, std::move(made), removed);
  if (absl::Status s = ops::InferGraphTypes(graph); !s.ok()) return s;
  return true;
}

}  // namespace partitioner
