// AttentionFusion: matches the exported attention pattern and rewrites it to one Attention node
// (see attention_fusion.h).
#include "partitioner/attention_fusion.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/infer_graph.h"
#include "partitioner/match_rewrite.h"

namespace partitioner {
namespace {

using ir::kNoValue;
using ir::NodeId;
using ir::ValueId;

// Dims that may be equal: equal, or either unknown (dynamic exports often leave the head dims
// unknown until run time; Attention checks them then).
bool MayEqual(const ir::Dim& a, const ir::Dim& b) {
  return a == b || (!a.known() && a.symbol.empty()) || (!b.known() && b.symbol.empty());
}

// A mask constant this negative (or -inf) excludes a key exactly as a boolean mask does.
constexpr double kMaskedOut = -1e30;

// What one match found: the values the Attention node reads and the nodes it replaces.
struct Match {
  NodeId output_matmul = -1;     // MatMul(P, V): the Attention node takes its place
  std::vector<NodeId> absorbed;  // every node replaced, output_matmul included
  ValueId q = kNoValue, kt = kNoValue, v = kNoValue, mask = kNoValue;
  bool negate_mask = false;     // the boolean mask is Where's condition negated
  NodeId kt_transpose = -1;     // the Transpose that made Kt (absorbed), or -1
  std::vector<int64_t> k_perm;  // K = Transpose(k_source, k_perm); empty: K = k_source
  ValueId k_source = kNoValue;
  ValueId k_scale = kNoValue;  // a scalar computed at run time that scaled Kt: K is scaled by it
  double scale = 1;
};

class Matcher {
 public:
  explicit Matcher(const ir::Graph& graph) : g_(graph), readers_(graph) {}

  std::optional<Match> MatchAt(NodeId pv_id) const {
    const ir::Node& pv = g_.node(pv_id);
    if (pv.op_type != "MatMul") return std::nullopt;
    Match m;
    m.output_matmul = pv_id;
    m.absorbed.push_back(pv_id);
    m.v = pv.inputs[1];
    const ir::Node* softmax = SoleReaderProducer(pv.inputs[0]);
    if (softmax == nullptr || softmax->op_type != "Softmax" || !LastAxis(*softmax)) return std::nullopt;
    m.absorbed.push_back(g_.value(pv.inputs[0]).producer);
    if (!MatchScores(softmax->inputs[0], m)) return std::nullopt;
    if (!ShapesFit(m) || !MatchKeys(m)) return std::nullopt;
    return m;
  }

 private:
  const ir::Node* SoleReaderProducer(ValueId id) const { return readers_.SoleReaderProducer(id); }

  std::optional<double> ScalarConstant(ValueId id) const {
    if (id == kNoValue || !g_.value(id).constant || g_.value(id).constant->num_elements() != 1) return std::nullopt;
    return g_.value(id).constant->GetAsDouble(0);
  }

  bool LastAxis(const ir::Node& softmax) const {
    const int64_t rank = g_.value(softmax.inputs[0]).type.rank();
    const int64_t axis = softmax.attrs.GetInt("axis", softmax.opset < 13 ? 1 : -1);
    return rank >= 2 && (axis == -1 || axis == rank - 1);
  }

  // Mul by / Div by a scalar constant: the factor, and the other operand in `x`.
  std::optional<double> ScaleOf(const ir::Node& node, ValueId& x) const {
    if (node.op_type == "Mul") {
      for (int i : {0, 1}) {
        std::optional<double> c = ScalarConstant(node.inputs[i]);
        if (c && !g_.value(node.inputs[1 - i]).constant) {
          x = node.inputs[1 - i];
          return *c;
        }
      }
    }
    if (node.op_type == "Div") {
      std::optional<double> c = ScalarConstant(node.inputs[1]);
      if (c && *c != 0 && !g_.value(node.inputs[0]).constant) {
        x = node.inputs[0];
        return 1.0 / *c;
      }
    }
    return std::nullopt;
  }

  // Follows scalar Mul/Div producers of `id` back, multiplying `scale`.
  void PeelScales(ValueId& id, double& scale, std::vector<NodeId>& absorbed) const {
    while (const ir::Node* node = SoleReaderProducer(id)) {
      ValueId x = kNoValue;
      std::optional<double> factor = ScaleOf(*node, x);
      if (!factor) return;
      absorbed.push_back(g_.value(id).producer);
      scale *= *factor;
      id = x;
    }
  }

  // `scores` (after peeling scales) is MatMul(Q', Kt'): fills q, kt and the scale.
  bool MatchQk(ValueId scores, Match& m) const {
    std::vector<NodeId> absorbed = m.absorbed;
    double scale = m.scale;
    PeelScales(scores, scale, absorbed);
    const ir::Node* qk = SoleReaderProducer(scores);
    if (qk == nullptr || qk->op_type != "MatMul") return false;
    absorbed.push_back(g_.value(scores).producer);
    ValueId q = qk->inputs[0], kt = qk->inputs[1];
    PeelScales(q, scale, absorbed);
    PeelScales(kt, scale, absorbed);
    m.absorbed = std::move(absorbed);
    m.scale = scale;
    m.q = q;
    m.kt = kt;
    return true;
  }

  // The Softmax input: an optional mask over the (scaled) QK^T product.
  bool MatchScores(ValueId s, Match& m) const {
    const ir::Node* node = SoleReaderProducer(s);
    if (node == nullptr) return false;
    if (node->op_type == "Add") {
      for (int i : {0, 1}) {
        Match trial = m;
        trial.absorbed.push_back(g_.value(s).producer);
        if (MatchQk(node->inputs[i], trial)) {
          trial.mask = node->inputs[1 - i];
          m = std::move(trial);
          return true;
        }
      }
    }
    if (node->op_type == "Where" && g_.value(node->inputs[0]).type.dtype == ir::DType::kBool) {
      for (int i : {1, 2}) {
        std::optional<double> c = ScalarConstant(node->inputs[3 - i]);
        if (!c || *c > kMaskedOut) continue;
        Match trial = m;
        trial.absorbed.push_back(g_.value(s).producer);
        if (MatchQk(node->inputs[i], trial)) {
          trial.mask = node->inputs[0];
          trial.negate_mask = i == 2;  // Where(C, c, s): C true masks out
          m = std::move(trial);
          return true;
        }
      }
    }
    return MatchQk(s, m);
  }

  // Q [..., S, D], Kt [..., D, L], V [..., L, Dv], all 3-D or all 4-D with equal leading dims; a
  // mask broadcasting to [..., S, L] with its full last dim.
  bool ShapesFit(const Match& m) const {
    const ir::TensorType &q = g_.value(m.q).type, &kt = g_.value(m.kt).type, &v = g_.value(m.v).type;
    const ir::DType dtype = q.dtype;
    if (dtype != ir::DType::kFloat32 && dtype != ir::DType::kFloat16 && dtype != ir::DType::kBFloat16) return false;
    if (kt.dtype != dtype || v.dtype != dtype || !q.shape || !kt.shape || !v.shape) return false;
    const int64_t rank = q.rank();
    if ((rank != 3 && rank != 4) || kt.rank() != rank || v.rank() != rank) return false;
    const ir::Shape &qs = *q.shape, &ks = *kt.shape, &vs = *v.shape;
    for (int64_t i = 0; i + 2 < rank; ++i) {
      if (!MayEqual(qs[i], ks[i]) || !MayEqual(qs[i], vs[i])) return false;
    }
    if (!MayEqual(qs[rank - 1], ks[rank - 2]) || !MayEqual(ks[rank - 1], vs[rank - 2])) return false;
    if (m.mask == kNoValue) return true;
    const ir::TensorType& mask = g_.value(m.mask).type;
    if (!mask.shape || mask.rank() > rank || mask.rank() < 1) return false;
    if (mask.dtype != ir::DType::kBool && mask.dtype != dtype) return false;
    const ir::Shape scores = [&] {
      ir::Shape s(qs.begin(), qs.end() - 1);
      s.push_back(ks[rank - 1]);
      return s;
    }();
    const int64_t offset = rank - mask.rank();
    for (int64_t i = 0; i < mask.rank(); ++i) {
      const ir::Dim& d = (*mask.shape)[i];
      const bool last = i == mask.rank() - 1;
      if (!MayEqual(d, scores[i + offset]) && (last || !(d.known() && d.value == 1))) return false;
    }
    return true;
  }

  // A value of one element whose value is known only at run time (torch's exported scale
  // 1/sqrt(head size) computed from the query's shape).
  bool RuntimeScalar(ValueId id) const {
    const ir::TensorType& t = g_.value(id).type;
    if (g_.value(id).constant || !t.shape) return false;
    for (const ir::Dim& d : *t.shape) {
      if (!d.known() || d.value != 1) return false;
    }
    return true;
  }

  // K from Kt: through the Transpose that made Kt (under a Mul by a run-time scalar, which then
  // scales K), or a new Transpose of Kt.
  bool MatchKeys(Match& m) const {
    const int64_t rank = g_.value(m.kt).type.rank();
    const ir::Node* t = SoleReaderProducer(m.kt);
    if (t != nullptr && t->op_type == "Mul") {
      for (int i : {0, 1}) {
        const ir::Node* under = SoleReaderProducer(t->inputs[1 - i]);
        if (RuntimeScalar(t->inputs[i]) && under != nullptr && under->op_type == "Transpose") {
          m.absorbed.push_back(g_.value(m.kt).producer);
          m.k_scale = t->inputs[i];
          m.kt = t->inputs[1 - i];
          t = under;
          break;
        }
      }
    }
    if (t != nullptr && t->op_type == "Transpose") {
      std::vector<int64_t> perm = t->attrs.GetInts("perm");
      if (perm.empty()) {
        for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
      }
      if (static_cast<int64_t>(perm.size()) != rank) return false;
      std::swap(perm[rank - 2], perm[rank - 1]);
      bool identity = true;
      for (int64_t i = 0; i < rank; ++i) identity = identity && perm[i] == i;
      m.kt_transpose = g_.value(m.kt).producer;
      m.absorbed.push_back(m.kt_transpose);
      m.k_source = t->inputs[0];
      if (!identity) m.k_perm = std::move(perm);
      return true;
    }
    m.k_source = m.kt;
    for (int64_t i = 0; i < rank; ++i) m.k_perm.push_back(i);
    std::swap(m.k_perm[rank - 2], m.k_perm[rank - 1]);
    return true;
  }

  const ir::Graph& g_;
  Readers readers_;
};

// Appends nodes to the graph (typed as they are added); Rewrite later puts them in place.
class NodeMaker {
 public:
  NodeMaker(ir::Graph& graph, const ir::Node& anchor) : g_(graph), anchor_(anchor) {}

  absl::StatusOr<ValueId> Add(const std::string& op_type, std::vector<ValueId> inputs, ir::Attributes attrs = {},
                              ValueId output = kNoValue, int opset = 0) {
    const std::string name = absl::StrCat(anchor_.name, "/attention/", op_type, "_", made_.size());
    if (output == kNoValue) output = g_.AddValue(name);
    ir::Node node{name, op_type, std::max(opset, anchor_.opset), std::move(inputs), {output}, std::move(attrs)};
    const NodeId id = g_.AddNode(std::move(node));
    made_.push_back(id);
    if (absl::Status s = ops::InferNodeTypes(g_, id); !s.ok()) return s;
    return output;
  }
  ValueId Axes(int64_t axis) {
    return g_.AddConstant(absl::StrCat(anchor_.name, "/attention/axes_", made_.size()), ir::Tensor::FromInt64s({axis}));
  }
  const std::vector<NodeId>& made() const { return made_; }

 private:
  ir::Graph& g_;
  const ir::Node anchor_;
  std::vector<NodeId> made_;
};

// Adds the Attention node (and its Transpose / Not / Unsqueeze / Squeeze helpers) for `m`; returns
// the new nodes in order.
absl::StatusOr<std::vector<NodeId>> MakeAttention(ir::Graph& graph, const Match& m) {
  const ir::Node anchor = graph.node(m.output_matmul);
  const ValueId output = anchor.outputs[0];
  const bool three_d = graph.value(m.q).type.rank() == 3;
  NodeMaker make(graph, anchor);
  auto unsqueeze = [&](ValueId x) -> absl::StatusOr<ValueId> {
    return three_d ? make.Add("Unsqueeze", {x, make.Axes(1)}) : absl::StatusOr<ValueId>(x);
  };
  ValueId k = m.k_source;
  if (!m.k_perm.empty()) {
    ir::Attributes perm;
    perm.Set("perm", m.k_perm);
    absl::StatusOr<ValueId> t = make.Add("Transpose", {k}, perm);
    if (!t.ok()) return t.status();
    k = *t;
  }
  if (m.k_scale != kNoValue) {
    absl::StatusOr<ValueId> scaled = make.Add("Mul", {k, m.k_scale});
    if (!scaled.ok()) return scaled.status();
    k = *scaled;
  }
  std::vector<ValueId> inputs;
  for (ValueId x : {m.q, k, m.v}) {
    absl::StatusOr<ValueId> x4 = unsqueeze(x);
    if (!x4.ok()) return x4.status();
    inputs.push_back(*x4);
  }
  if (m.mask != kNoValue) {
    absl::StatusOr<ValueId> mask = m.negate_mask ? make.Add("Not", {m.mask}) : absl::StatusOr<ValueId>(m.mask);
    if (mask.ok() && three_d && graph.value(*mask).type.rank() == 3) mask = unsqueeze(*mask);
    if (!mask.ok()) return mask.status();
    inputs.push_back(*mask);
  }
  ir::Attributes attrs;
  attrs.Set("scale", static_cast<float>(m.scale));
  absl::StatusOr<ValueId> y = make.Add("Attention", inputs, attrs, three_d ? kNoValue : output, /*opset=*/23);
  if (y.ok() && three_d) y = make.Add("Squeeze", {*y, make.Axes(1)}, {}, output);
  if (!y.ok()) return y.status();
  return make.made();
}

}  // namespace

absl::StatusOr<bool> AttentionFusion::Run(ir::Graph& graph) {
  fused_ = 0;
  std::vector<Match> matches;
  std::set<NodeId> taken;
  {
    const Matcher matcher(graph);
    for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
      std::optional<Match> m = matcher.MatchAt(id);
      if (m && Claim(taken, m->absorbed)) matches.push_back(*std::move(m));
    }
  }
  if (matches.empty()) return false;
  const NodeId original_count = static_cast<NodeId>(graph.nodes().size());
  std::map<NodeId, std::vector<ir::Node>> replacement;  // output MatMul -> the nodes made for it
  for (const Match& m : matches) {
    absl::StatusOr<std::vector<NodeId>> made = MakeAttention(graph, m);
    if (!made.ok()) return made.status();
    for (NodeId id : *made) replacement[m.output_matmul].push_back(graph.node(id));
  }
  ReplaceMatched(graph, original_count, std::move(replacement), taken);
  fused_ = static_cast<int>(matches.size());
  return true;
}

}  // namespace partitioner
