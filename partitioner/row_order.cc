// RowOrder (row_order.h).
#include "partitioner/row_order.h"

#include <map>
#include <optional>
#include <set>
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

// The chain, first node to last: Transpose -> Reshape -> Gemm/MatMul -> Reshape -> Transpose.
struct Chain {
  NodeId first_transpose = -1, rows = -1, projection = -1, unrows = -1, last_transpose = -1;
  int64_t k = 0, n = 0;
  ir::Tensor weight;        // [K, N]
  ValueId bias = kNoValue;  // a constant [N] or [1, N], or none
};

const ir::Node* SoleProducer(const ir::Graph& g, const Readers& readers, ValueId id, const char* op) {
  const ir::Node* node = readers.SoleReaderProducer(id);
  return node != nullptr && node->op_type == op ? node : nullptr;
}

// The projection's weight as [K, N] and its bias, when it is row-wise with constant parameters.
std::optional<std::pair<ir::Tensor, ValueId>> Parameters(const ir::Graph& g, const ir::Node& p) {
  if (p.inputs.size() < 2 || !g.value(p.inputs[1]).constant) return std::nullopt;
  const ir::Tensor& b = *g.value(p.inputs[1]).constant;
  if (b.shape().size() != 2 || !ir::IsFloatingPoint(b.dtype())) return std::nullopt;
  if (p.op_type == "MatMul") return std::make_pair(b, kNoValue);
  if (p.op_type != "Gemm" || p.attrs.GetInt("transA", 0) != 0 || p.attrs.GetFloat("alpha", 1.f) != 1.f ||
      p.attrs.GetFloat("beta", 1.f) != 1.f) {
    return std::nullopt;
  }
  const ValueId c = p.input(2);
  if (c != kNoValue) {
    const ir::Value& bias = g.value(c);
    const int64_t n = b.shape()[p.attrs.GetInt("transB", 0) != 0 ? 0 : 1];
    if (!bias.constant || bias.constant->num_elements() != n || bias.constant->shape().empty() ||
        bias.constant->shape().back() != n || bias.constant->shape().size() > 2) {
      return std::nullopt;
    }
  }
  return std::make_pair(p.attrs.GetInt("transB", 0) != 0 ? TransposedMatrix(b) : b, c);
}

// Known dims of `type` from `from` on, multiplied; 0 when one is unknown.
int64_t KnownProduct(const ir::TensorType& type, size_t from) {
  int64_t product = 1;
  for (size_t d = from; d < type.shape->size(); ++d) {
    if (!(*type.shape)[d].known()) return 0;
    product *= (*type.shape)[d].value;
  }
  return product;
}

std::optional<Chain> MatchAt(const ir::Graph& g, const Readers& readers, NodeId id) {
  const ir::Node& last = g.node(id);
  if (last.op_type != "Transpose" || last.attrs.GetInts("perm", {}) != std::vector<int64_t>{1, 0, 2}) {
    return std::nullopt;
  }
  const ir::Node* unrows = SoleProducer(g, readers, last.inputs[0], "Reshape");
  if (unrows == nullptr) return std::nullopt;
  const ir::Node* projection = readers.SoleReaderProducer(unrows->inputs[0]);
  if (projection == nullptr || (projection->op_type != "Gemm" && projection->op_type != "MatMul")) return std::nullopt;
  const ir::Node* rows = SoleProducer(g, readers, projection->inputs[0], "Reshape");
  if (rows == nullptr) return std::nullopt;
  const ir::Node* first = SoleProducer(g, readers, rows->inputs[0], "Transpose");
  if (first == nullptr) return std::nullopt;
  const ir::TensorType& split = g.value(unrows->outputs[0]).type;   // [d0, d1, N]
  const ir::TensorType& ordered = g.value(first->outputs[0]).type;  // [d0, d1, rest...]
  const ir::TensorType& flat = g.value(rows->outputs[0]).type;      // [d0 * d1, K]
  if (split.rank() != 3 || ordered.rank() < 3 || flat.rank() != 2) return std::nullopt;
  if ((*split.shape)[0] != (*ordered.shape)[0] || (*split.shape)[1] != (*ordered.shape)[1]) return std::nullopt;
  std::optional<std::pair<ir::Tensor, ValueId>> params = Parameters(g, *projection);
  if (!params) return std::nullopt;
  Chain c{readers.IdOf(first), readers.IdOf(rows), readers.IdOf(projection), readers.IdOf(unrows), id};
  c.k = KnownProduct(ordered, 2);
  c.n = KnownProduct(split, 2);
  if (c.k <= 0 || c.n <= 0 || params->first.shape() != std::vector<int64_t>{c.k, c.n}) return std::nullopt;
  if (KnownProduct(flat, 1) != c.k) return std::nullopt;
  c.weight = std::move(params->first);
  c.bias = params->second;
  return c;
}

// Transpose (first two output axes swapped) -> Reshape [d1, d0, K] -> MatMul [-> Add bias] into
// the last Transpose's output.
std::vector<ir::Node> Rewrite(ir::Graph& g, const Chain& c) {
  const ir::Node first = g.node(c.first_transpose), proj = g.node(c.projection);
  const ValueId out = g.node(c.last_transpose).outputs[0];
  std::vector<int64_t> perm = first.attrs.GetInts("perm", {});
  if (perm.empty()) {  // the default: reversed axes
    for (int64_t d = g.value(first.inputs[0]).type.rank() - 1; d >= 0; --d) perm.push_back(d);
  }
  std::swap(perm[0], perm[1]);
  std::vector<ir::Node> made;
  const auto add = [&](const char* op, std::vector<ValueId> in, const std::string& suffix, ValueId to = kNoValue) {
    if (to == kNoValue) to = g.AddValue(absl::StrCat(proj.name, "/row_order_", suffix));
    made.push_back(ir::Node{absl::StrCat(proj.name, "/row_order_", suffix), op, proj.opset, std::move(in), {to}, {}});
    return to;
  };
  ValueId v = add("Transpose", {first.inputs[0]}, "transpose");
  made.back().attrs.Set("perm", perm);
  const ValueId shape = g.AddConstant(absl::StrCat(proj.name, "/row_order_shape"), ir::Tensor::FromInt64s({0, 0, c.k}));
  v = add("Reshape", {v, shape}, "rows");
  const ValueId weight = g.AddConstant(absl::StrCat(proj.name, "/row_order_weight"), c.weight);
  v = add("MatMul", {v, weight}, "matmul", c.bias == kNoValue ? out : kNoValue);
  if (c.bias != kNoValue) add("Add", {v, c.bias}, "bias", out);
  return made;
}

}  // namespace

absl::StatusOr<bool> RowOrder::Run(ir::Graph& graph) {
  rewritten_ = 0;
  std::vector<Chain> chains;
  std::set<NodeId> removed;
  {
    const Readers readers(graph);
    for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
      std::optional<Chain> c = MatchAt(graph, readers, id);
      if (c && Claim(removed, {c->first_transpose, c->rows, c->projection, c->unrows, c->last_transpose})) {
        chains.push_back(*std::move(c));
      }
    }
  }
  if (chains.empty()) return false;
  std::map<NodeId, std::vector<ir::Node>> made;
  const NodeId original_count = static_cast<NodeId>(graph.nodes().size());
  for (const Chain& c : chains) made[c.last_transpose] = Rewrite(graph, c);
  rewritten_ = static_cast<int>(chains.size());
  ReplaceMatched(graph, original_count, std::move(made), removed);
  if (absl::Status s = ops::InferGraphTypes(graph); !s.ok()) return s;
  return true;
}

}  // namespace partitioner
