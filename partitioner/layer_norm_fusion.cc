// LayerNormFusion: matches the decomposed layer normalisation from each Sqrt node and rewrites it
// (see layer_norm_fusion.h).
#include "partitioner/layer_norm_fusion.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/half.h"
#include "partitioner/match_rewrite.h"

namespace partitioner {
namespace {

using ir::kNoValue;
using ir::NodeId;
using ir::ValueId;

struct Match {
  std::vector<NodeId> nodes;  // replaced; the last one writes the output
  ValueId x = kNoValue, gamma = kNoValue, beta = kNoValue;
  int64_t axis = -1;
  double epsilon = 0;
};

class Matcher {
 public:
  explicit Matcher(const ir::Graph& graph) : g_(graph), readers_(graph) {}

  std::optional<Match> MatchAt(NodeId sqrt_id) const {
    const ir::Node& sqrt = g_.node(sqrt_id);
    if (sqrt.op_type != "Sqrt") return std::nullopt;
    Match m;
    // Sqrt(Add(ReduceMean(d^2), eps))
    const ir::Node* add = SoleReaderProducer(sqrt.inputs[0]);
    std::optional<double> eps = add != nullptr && add->op_type == "Add" ? ScalarOperand(*add) : std::nullopt;
    if (!eps) return std::nullopt;
    const ir::Node* var = SoleReaderProducer(NonConstant(*add));
    if (var == nullptr || var->op_type != "ReduceMean") return std::nullopt;
    const ir::Node* square = SoleReaderProducer(var->inputs[0]);
    if (square == nullptr || !IsSquare(*square)) return std::nullopt;
    const ValueId d = square->inputs[0];
    // d = Sub(x, ReduceMean(x)), read by the square and the Div only.
    const ir::Node* sub = g_.value(d).producer >= 0 ? &g_.node(g_.value(d).producer) : nullptr;
    if (sub == nullptr || sub->op_type != "Sub" || g_.IsGraphOutput(d)) return std::nullopt;
    const ir::Node* mean = SoleReaderProducer(sub->inputs[1]);
    if (mean == nullptr || mean->op_type != "ReduceMean" || mean->inputs[0] != sub->inputs[0]) return std::nullopt;
    m.x = sub->inputs[0];
    const std::optional<int64_t> axis = TrailingAxis(*mean, m.x);
    if (!axis || TrailingAxis(*var, m.x) != axis) return std::nullopt;
    const ir::Node* div = SoleReader(sqrt.outputs[0]);
    if (div == nullptr || div->op_type != "Div" || div->inputs[0] != d || div->inputs[1] != sqrt.outputs[0]) {
      return std::nullopt;
    }
    const std::set<NodeId> readers(readers_.of(d).begin(), readers_.of(d).end());
    if (readers != std::set<NodeId>{Id(square), Id(div)}) return std::nullopt;
    m.nodes = {Id(mean), Id(sub), Id(square), Id(var), Id(add), sqrt_id, Id(div)};
    m.axis = *axis;
    m.epsilon = *eps;
    AffineTail(div->outputs[0], m);
    return m;
  }

 private:
  NodeId Id(const ir::Node* n) const { return readers_.IdOf(n); }
  const ir::Node* SoleReaderProducer(ValueId id) const { return readers_.SoleReaderProducer(id); }
  const ir::Node* SoleReader(ValueId id) const { return readers_.SoleReader(id); }
  const ir::Tensor* Constant(ValueId id) const {
    return id != kNoValue && g_.value(id).constant ? &*g_.value(id).constant : nullptr;
  }
  std::optional<double> ScalarOperand(const ir::Node& n) const {
    for (ValueId in : n.inputs) {
      if (const ir::Tensor* c = Constant(in); c != nullptr && c->num_elements() == 1) return c->GetAsDouble(0);
    }
    return std::nullopt;
  }
  ValueId NonConstant(const ir::Node& n) const { return Constant(n.inputs[0]) ? n.inputs[1] : n.inputs[0]; }
  bool IsSquare(const ir::Node& n) const {
    if (n.op_type == "Mul") return n.inputs[0] == n.inputs[1];
    const ir::Tensor* p = n.op_type == "Pow" ? Constant(n.inputs[1]) : nullptr;
    return p != nullptr && p->num_elements() == 1 && p->GetAsDouble(0) == 2.0;
  }
  // The first axis of a keepdims ReduceMean of `x` over its trailing axes (negative, from the end).
  std::optional<int64_t> TrailingAxis(const ir::Node& reduce, ValueId x) const {
    const int64_t rank = g_.value(x).type.rank();
    const ir::Tensor* axes = Constant(reduce.input(1));
    if (rank < 1 || axes == nullptr || reduce.attrs.GetInt("keepdims", 1) != 1) return std::nullopt;
    std::vector<int64_t> a = axes->ToInt64Vector();
    for (int64_t& v : a) v = v < 0 ? v + rank : v;
    std::sort(a.begin(), a.end());
    if (a.empty() || a.back() != rank - 1) return std::nullopt;
    for (size_t i = 1; i < a.size(); ++i) {
      if (a[i] != a[i - 1] + 1) return std::nullopt;
    }
    return a.front() - rank;
  }
  // An optional Mul by a constant gamma, then an optional Add of a constant beta, each shaped like
  // the normalised dims.
  void AffineTail(ValueId y, Match& m) const {
    const ir::Node* mul = SoleReader(y);
    if (mul != nullptr && mul->op_type == "Mul" && AffineOperand(*mul, y, m.axis, m.gamma)) {
      m.nodes.push_back(Id(mul));
      y = mul->outputs[0];
    }
    const ir::Node* add = SoleReader(y);
    if (add != nullptr && add->op_type == "Add" && AffineOperand(*add, y, m.axis, m.beta)) {
      m.nodes.push_back(Id(add));
    }
  }
  // The other operand of `n` (besides `y`) when it is a constant of the normalised dims' shape.
  bool AffineOperand(const ir::Node& n, ValueId y, int64_t axis, ValueId& out) const {
    const ValueId other = n.inputs[0] == y ? n.inputs[1] : n.inputs[0];
    const ir::Tensor* c = Constant(other);
    const ir::TensorType& t = g_.value(y).type;
    if (c == nullptr || !t.shape || c->rank() != -axis) return false;
    for (int64_t i = 0; i < -axis; ++i) {
      const ir::Dim& d = (*t.shape)[t.shape->size() + axis + i];
      if (!d.known() || d.value != c->shape()[i]) return false;
    }
    out = other;
    return true;
  }

  const ir::Graph& g_;
  Readers readers_;
};

// The LayerNormalization node for `m` (a constant of ones as the scale when there is no gamma), or
// nullopt when the normalised dims are not known.
std::optional<ir::Node> MakeLayerNorm(ir::Graph& graph, const Match& m) {
  const ir::Node& last = graph.node(m.nodes.back());
  ValueId scale = m.gamma;
  if (scale == kNoValue) {
    const ir::TensorType& t = graph.value(m.x).type;
    std::vector<int64_t> dims;
    for (int64_t i = t.rank() + m.axis; i < t.rank(); ++i) {
      if (!(*t.shape)[i].known()) return std::nullopt;
      dims.push_back((*t.shape)[i].value);
    }
    if (t.dtype != ir::DType::kFloat32 && t.dtype != ir::DType::kFloat16 && t.dtype != ir::DType::kBFloat16) {
      return std::nullopt;
    }
    absl::StatusOr<ir::Tensor> ones = ir::Tensor::Create(t.dtype, dims);
    if (!ones.ok()) return std::nullopt;
    if (t.dtype == ir::DType::kFloat32) {
      std::fill_n(ones->data<float>(), ones->num_elements(), 1.0f);
    } else {  // 1.0 in fp16 or bf16
      const uint16_t one = t.dtype == ir::DType::kFloat16 ? ir::FloatToHalfBits(1.0f) : ir::FloatToBFloat16Bits(1.0f);
      std::fill_n(ones->data<uint16_t>(), ones->num_elements(), one);
    }
    scale = graph.AddConstant(last.name + "/layer_norm_scale", *std::move(ones));
  }
  ir::Attributes attrs;
  attrs.Set("axis", m.axis);
  attrs.Set("epsilon", static_cast<float>(m.epsilon));
  std::vector<ValueId> inputs = {m.x, scale};
  if (m.beta != kNoValue) inputs.push_back(m.beta);
  return ir::Node{
      last.name + "/layer_norm", "LayerNormalization", std::max(last.opset, 17), inputs, {last.outputs[0]}, attrs};
}

}  // namespace

absl::StatusOr<bool> LayerNormFusion::Run(ir::Graph& graph) {
  fused_ = 0;
  std::vector<Match> matches;
  {
    const Matcher matcher(graph);
    std::set<NodeId> taken;
    for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
      std::optional<Match> m = matcher.MatchAt(id);
      if (m && ir::IsFloatingPoint(graph.value(m->x).type.dtype) && Claim(taken, m->nodes)) {
        matches.push_back(*std::move(m));
      }
    }
  }
  std::map<NodeId, std::vector<ir::Node>> replaced;  // last node of a match -> its LayerNormalization
  std::set<NodeId> removed;
  for (const Match& m : matches) {
    std::optional<ir::Node> node = MakeLayerNorm(graph, m);
    if (!node) continue;
    replaced[m.nodes.back()].push_back(*std::move(node));
    removed.insert(m.nodes.begin(), m.nodes.end());
  }
  if (replaced.empty()) return false;
  fused_ = static_cast<int>(replaced.size());
  ReplaceMatched(graph, static_cast<NodeId>(graph.nodes().size()), std::move(replaced), removed);
  return true;
}

}  // namespace partitioner
