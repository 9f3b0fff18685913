// EinsumLowering (see einsum_lowering.h): per pair of operands (left to right), classifies every
// label as batch, kept by one side (M / N), contracted (K) or summed away by one side, and writes
// the ReduceSum / Transpose / Reshape / MatMul chain that computes the Einsum.
#include "partitioner/einsum_lowering.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/einsum.h"
#include "partitioner/match_rewrite.h"

namespace partitioner {
namespace {

using ir::Dim;
using ir::kNoValue;
using ir::Shape;
using ir::ValueId;

// A tensor of the chain: its value, the label and the dim of each axis.
struct Operand {
  ValueId value = kNoValue;
  std::vector<int> labels;
  Shape shape;
};

// The nodes replacing one Einsum, each writing a new typed value.
class Chain {
 public:
  Chain(ir::Graph& graph, const ir::Node& einsum) : graph_(graph), einsum_(einsum) {}

  ValueId Add(const std::string& op, std::vector<ValueId> inputs, const Shape& shape, ir::Attributes attrs = {}) {
    const std::string name = absl::StrCat(einsum_.name, "/lowered_", nodes_.size(), "_", op);
    const ValueId out = graph_.AddValue(name, ir::TensorType{graph_.value(einsum_.inputs[0]).type.dtype, shape});
    nodes_.push_back(ir::Node{name, op, einsum_.opset, std::move(inputs), {out}, std::move(attrs)});
    return out;
  }

  ValueId Int64s(const std::vector<int64_t>& values) {
    ir::Tensor t = *ir::Tensor::Create(ir::DType::kInt64, {static_cast<int64_t>(values.size())});
    std::copy(values.begin(), values.end(), t.data<int64_t>());
    return graph_.AddConstant(absl::StrCat(einsum_.name, "/lowered_", nodes_.size(), "_shape"), std::move(t));
  }

  // The nodes, the last one writing the Einsum's output.
  std::vector<ir::Node> Finish() {
    nodes_.back().outputs[0] = einsum_.outputs[0];
    return std::move(nodes_);
  }

 private:
  ir::Graph& graph_;
  const ir::Node& einsum_;
  std::vector<ir::Node> nodes_;
};

int IndexOf(const std::vector<int>& labels, int label) {
  return static_cast<int>(std::find(labels.begin(), labels.end(), label) - labels.begin());
}

// x summed over the axes whose label `keep` rejects.
Operand SumAway(Chain& chain, const Operand& x, const std::vector<bool>& keep) {
  Operand out;
  std::vector<int64_t> axes;
  for (size_t a = 0; a < x.labels.size(); ++a) {
    if (keep[x.labels[a]]) {
      out.labels.push_back(x.labels[a]);
      out.shape.push_back(x.shape[a]);
    } else {
      axes.push_back(static_cast<int64_t>(a));
    }
  }
  if (axes.empty()) return x;
  ir::Attributes attrs;
  attrs.Set("keepdims", int64_t{0});
  out.value = chain.Add("ReduceSum", {x.value, chain.Int64s(axes)}, out.shape, attrs);
  return out;
}

// x with its axes in the order of `labels` (a permutation of x's).
Operand Permute(Chain& chain, const Operand& x, const std::vector<int>& labels) {
  std::vector<int64_t> perm;
  Operand out{x.value, labels, {}};
  for (int label : labels) {
    perm.push_back(IndexOf(x.labels, label));
    out.shape.push_back(x.shape[perm.back()]);
  }
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity) return x;
  ir::Attributes attrs;
  attrs.Set("perm", perm);
  out.value = chain.Add("Transpose", {x.value}, out.shape, attrs);
  return out;
}

// Reshape's shape input for `from` -> `to`: known dims as they are, a dim equal to `from`'s at the
// same index as 0 (copied), one other as -1; nullopt when two dims are unknown or a known dim is 0.
std::optional<std::vector<int64_t>> ReshapeSpec(const Shape& from, const Shape& to) {
  std::vector<int64_t> spec;
  bool inferred = false;
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i].known() && to[i].value > 0) {
      spec.push_back(to[i].value);
    } else if (to[i].known()) {
      return std::nullopt;
    } else if (i < from.size() && from[i] == to[i]) {
      spec.push_back(0);
    } else if (!inferred) {
      spec.push_back(-1);
      inferred = true;
    } else {
      return std::nullopt;
    }
  }
  return spec;
}

// The product of the dims of `labels` (a label's dim from `dims`): one dim when there is one.
Dim Merged(const std::vector<int>& labels, const std::vector<Dim>& dims) {
  if (labels.size() == 1) return dims[labels[0]];
  Dim product(1);
  for (int label : labels)
    product = product.known() && dims[label].known() ? Dim(product.value * dims[label].value) : Dim();
  return product;
}

// x reshaped to `to` (nothing when the shape is already `to`); false when not expressible.
bool ReshapeTo(Chain& chain, Operand& x, const Shape& to) {
  if (x.shape.size() == to.size() && std::equal(to.begin(), to.end(), x.shape.begin())) return true;
  std::optional<std::vector<int64_t>> spec = ReshapeSpec(x.shape, to);
  if (!spec) return false;
  x.value = chain.Add("Reshape", {x.value, chain.Int64s(*spec)}, to);
  x.shape = to;
  return true;
}

// Labels of `order` that `pick` accepts, in that order.
template <typename Pick>
std::vector<int> Select(const std::vector<int>& order, Pick pick) {
  std::vector<int> out;
  for (int label : order) {
    if (pick(label)) out.push_back(label);
  }
  return out;
}

std::vector<Dim> Dims(const std::vector<int>& labels, const std::vector<Dim>& dims) {
  std::vector<Dim> out;
  for (int label : labels) out.push_back(dims[label]);
  return out;
}

template <typename T>
std::vector<T> Concat(std::initializer_list<std::vector<T>> parts) {
  std::vector<T> out;
  for (const std::vector<T>& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// The broadcast of two batch dims, as MatMul computes it.
Dim Broadcast(const Dim& a, const Dim& b) {
  if (a == b || (b.known() && b.value == 1)) return a;
  return a.known() && a.value == 1 ? b : Dim();
}

// a and b contracted by one MatMul into the labels `out` (those a later input or the output needs),
// ordered [batch, a's, b's]; nullopt when a reshape is not expressible.
std::optional<Operand> LowerPair(Chain& chain, const ops::EinsumSpec& spec, Operand a, Operand b,
                                 const std::vector<int>& out, const std::vector<Dim>& dims) {
  std::vector<bool> in_a(spec.num_labels), in_b(spec.num_labels), in_out(spec.num_labels);
  for (int l : a.labels) in_a[l] = true;
  for (int l : b.labels) in_b[l] = true;
  for (int l : out) in_out[l] = true;
  std::vector<bool> keep_a(spec.num_labels), keep_b(spec.num_labels);
  for (int l = 0; l < spec.num_labels; ++l) {
    keep_a[l] = in_b[l] || in_out[l];
    keep_b[l] = in_a[l] || in_out[l];
  }
  const std::vector<int> batch = Select(out, [&](int l) { return in_a[l] && in_b[l]; });
  const std::vector<int> m = Select(out, [&](int l) { return in_a[l] && !in_b[l]; });
  const std::vector<int> n = Select(out, [&](int l) { return in_b[l] && !in_a[l]; });
  const std::vector<int> k = Select(a.labels, [&](int l) { return in_b[l] && !in_out[l]; });
  for (int l : k) {  // a contracted ellipsis dim must not broadcast
    if (spec.is_ellipsis[l] && a.shape[IndexOf(a.labels, l)] != b.shape[IndexOf(b.labels, l)]) return std::nullopt;
  }
  a = Permute(chain, SumAway(chain, a, keep_a), Concat<int>({batch, m, k}));
  b = Permute(chain, SumAway(chain, b, keep_b), Concat<int>({batch, k, n}));
  const std::vector<Dim> batch_a(a.shape.begin(), a.shape.begin() + batch.size());
  const std::vector<Dim> batch_b(b.shape.begin(), b.shape.begin() + batch.size());
  // a: [batch, M..., K] (a 1 for an empty M); b: [batch, 1 per extra M, K, N].
  const std::vector<Dim> m_dims = m.empty() ? std::vector<Dim>{Dim(1)} : Dims(m, dims);
  const std::vector<Dim> ones(batch.empty() ? 0 : m_dims.size() - 1, Dim(1));
  if (!ReshapeTo(chain, a, Concat<Dim>({batch_a, m_dims, {Merged(k, dims)}})) ||
      !ReshapeTo(chain, b, Concat<Dim>({batch_b, ones, {Merged(k, dims), Merged(n, dims)}}))) {
    return std::nullopt;
  }
  std::vector<Dim> batch_c;
  for (size_t i = 0; i < batch.size(); ++i) batch_c.push_back(Broadcast(batch_a[i], batch_b[i]));
  Operand c;
  c.shape = Concat<Dim>({batch_c, m_dims, {Merged(n, dims)}});
  c.value = chain.Add("MatMul", {a.value, b.value}, c.shape);
  if (!ReshapeTo(chain, c, Concat<Dim>({batch_c, Dims(m, dims), Dims(n, dims)}))) return std::nullopt;
  for (const std::vector<int>& group : {batch, m, n}) c.labels.insert(c.labels.end(), group.begin(), group.end());
  return c;
}

bool HasRepeats(const std::vector<int>& labels) {
  return std::set<int>(labels.begin(), labels.end()).size() != labels.size();
}

// The labels of a and b (in that order, once each) that `needed` holds.
std::vector<int> NeededLabels(const Operand& a, const Operand& b, const std::vector<bool>& needed) {
  std::vector<int> out;
  for (const std::vector<int>* labels : {&a.labels, &b.labels}) {
    for (int l : *labels) {
      if (needed[l] && std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
    }
  }
  return out;
}

// The replacement of Einsum `node`, or nullopt when it stays: inputs contracted left to right, one
// MatMul each, then the sums and the transpose to the output's order.
std::optional<std::vector<ir::Node>> Lower(ir::Graph& graph, const ir::Node& node) {
  if (node.inputs.empty() || node.outputs.size() != 1) return std::nullopt;
  std::vector<Operand> operands;
  std::vector<ir::Shape> shapes;
  std::vector<int64_t> ranks;
  for (ValueId id : node.inputs) {
    if (id == kNoValue) return std::nullopt;
    const ir::TensorType& t = graph.value(id).type;
    if (!t.shape || !ir::IsFloatingPoint(t.dtype) || t.dtype != graph.value(node.inputs[0]).type.dtype) {
      return std::nullopt;
    }
    shapes.push_back(*t.shape);
    ranks.push_back(t.rank());
  }
  absl::StatusOr<ops::EinsumSpec> spec = ops::ParseEinsum(node.attrs.GetString("equation", ""), ranks);
  if (!spec.ok()) return std::nullopt;
  absl::StatusOr<std::vector<Dim>> dims = ops::EinsumLabelDims(*spec, shapes);
  if (!dims.ok()) return std::nullopt;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (HasRepeats(spec->inputs[i])) return std::nullopt;
    operands.push_back(Operand{node.inputs[i], spec->inputs[i], shapes[i]});
  }
  Chain chain(graph, node);
  Operand result = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) {
    std::vector<bool> needed(spec->num_labels);
    for (int l : spec->output) needed[l] = true;
    for (size_t j = i + 1; j < operands.size(); ++j) {
      for (int l : operands[j].labels) needed[l] = true;
    }
    std::optional<Operand> pair =
        LowerPair(chain, *spec, result, operands[i], NeededLabels(result, operands[i], needed), *dims);
    if (!pair) return std::nullopt;
    result = *std::move(pair);
  }
  std::vector<bool> keep(spec->num_labels);
  for (int l : spec->output) keep[l] = true;
  const Operand out = Permute(chain, SumAway(chain, result, keep), spec->output);
  if (out.value == node.inputs[0]) chain.Add("Identity", {out.value}, out.shape);
  return chain.Finish();
}

}  // namespace

absl::StatusOr<bool> EinsumLowering::Run(ir::Graph& graph) {
  lowered_ = 0;
  std::map<ir::NodeId, std::vector<ir::Node>> made;
  std::set<ir::NodeId> removed;
  const ir::NodeId count = static_cast<ir::NodeId>(graph.nodes().size());
  for (ir::NodeId id = 0; id < count; ++id) {
    if (graph.node(id).op_type != "Einsum") continue;
    const ir::Node node = graph.node(id);  // a copy: Lower adds values to the graph
    std::optional<std::vector<ir::Node>> nodes = Lower(graph, node);
    if (!nodes) continue;
    made[id] = *std::move(nodes);
    removed.insert(id);
    ++lowered_;
  }
  if (made.empty()) return false;
  ReplaceMatched(graph, count, std::move(made), removed);
  return true;
}

}  // namespace partitioner
