// PatchConv (patch_conv.h): finds patch convolutions and writes each as Reshape / Transpose /
// MatMul / Add / Transpose / Reshape nodes with the conv's output value.
#include "partitioner/patch_conv.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/infer_graph.h"
#include "partitioner/match_rewrite.h"

namespace partitioner {
namespace {

using ir::kNoValue;
using ir::NodeId;
using ir::ValueId;

constexpr int64_t kMinPatch = 8;  // p and q; 1x1 .. 4x4 stride-k convs of CNNs stay convs

struct Patch {
  int64_t c = 0, h = 0, w = 0, k = 0, p = 0, q = 0;
};

// The geometry of a patch conv, or nullopt when `node` is not one.
std::optional<Patch> PatchOf(const ir::Graph& g, const ir::Node& node) {
  if (node.op_type != "Conv" || node.inputs.size() < 2 || node.outputs.size() != 1) return std::nullopt;
  const ir::TensorType& x = g.value(node.inputs[0]).type;
  const ir::Value& w = g.value(node.inputs[1]);
  if (!w.constant || w.constant->shape().size() != 4 || !x.shape || x.rank() != 4) return std::nullopt;
  if (node.input(2) != kNoValue && !g.value(node.input(2)).constant) return std::nullopt;
  const std::vector<int64_t>& wd = w.constant->shape();
  Patch p{(*x.shape)[1].value, (*x.shape)[2].value, (*x.shape)[3].value, wd[0], wd[2], wd[3]};
  if (p.c <= 0 || p.h <= 0 || p.w <= 0 || p.p <= 0 || p.q <= 0 || wd[1] != p.c) return std::nullopt;
  const ir::Attributes& a = node.attrs;
  const std::string auto_pad = a.GetString("auto_pad", "NOTSET");
  if (a.GetInt("group", 1) != 1 || (auto_pad != "NOTSET" && auto_pad != "VALID")) return std::nullopt;
  if (a.GetInts("kernel_shape", {p.p, p.q}) != std::vector<int64_t>{p.p, p.q}) return std::nullopt;
  if (a.GetInts("strides", {1, 1}) != std::vector<int64_t>{p.p, p.q}) return std::nullopt;
  if (a.GetInts("pads", {0, 0, 0, 0}) != std::vector<int64_t>(4, 0)) return std::nullopt;
  if (a.GetInts("dilations", {1, 1}) != std::vector<int64_t>{1, 1}) return std::nullopt;
  if (p.h % p.p != 0 || p.w % p.q != 0 || p.p < kMinPatch || p.q < kMinPatch) return std::nullopt;
  if (!ir::IsFloatingPoint(w.constant->dtype()) || w.constant->dtype() != x.dtype) return std::nullopt;
  return p;
}

// What torchvision, timm and Hugging Face ViTs do with the patch conv's output: Reshape to
// [N, K, H/p*W/q] then Transpose(perm 0,2,1) to the [N, tokens, K] the matmul already writes.
struct TokenTail {
  NodeId reshape = -1, transpose = -1;
  ValueId tokens = kNoValue;  // the Transpose's output
};

std::optional<TokenTail> TokenTailOf(const ir::Graph& g, const Readers& readers, const ir::Node& conv, const Patch& p) {
  const ir::Node* reshape = readers.SoleReader(conv.outputs[0]);
  if (reshape == nullptr || reshape->op_type != "Reshape" || reshape->inputs[0] != conv.outputs[0]) {
    return std::nullopt;
  }
  // Dims 1 and 2 known as K and the token count: dim 0 is then N (Reshape keeps the element count).
  const ir::TensorType& r = g.value(reshape->outputs[0]).type;
  if (!r.shape || r.rank() != 3 || (*r.shape)[1].value != p.k || (*r.shape)[2].value != (p.h / p.p) * (p.w / p.q)) {
    return std::nullopt;
  }
  const ir::Node* transpose = readers.SoleReader(reshape->outputs[0]);
  if (transpose == nullptr || transpose->op_type != "Transpose" ||
      transpose->attrs.GetInts("perm") != std::vector<int64_t>{0, 2, 1}) {
    return std::nullopt;
  }
  return TokenTail{readers.IdOf(reshape), readers.IdOf(transpose), transpose->outputs[0]};
}

class Rewriter {
 public:
  Rewriter(ir::Graph& g, const ir::Node& conv, const Patch& p) : g_(g), conv_(conv), p_(p) {}

  // The conv's nodes; with `tokens`, the matmul (+ bias) writes that [N, tokens, K] value and
  // nothing turns it back into the conv's layout.
  std::vector<ir::Node> Nodes(ValueId tokens = kNoValue) {
    const int64_t hp = p_.h / p_.p, wp = p_.w / p_.q;
    ValueId v = Add("Reshape", {conv_.inputs[0], Shape("split_shape", {0, p_.c, hp, p_.p, wp, p_.q})}, "split");
    v = Add("Transpose", {v}, "patches", {{"perm", std::vector<int64_t>{0, 2, 4, 1, 3, 5}}});
    v = Add("Reshape", {v, Shape("rows_shape", {0, hp * wp, p_.c * p_.p * p_.q})}, "rows");
    // W[K, C, p, q] as the matmul's [C*p*q, K] (row (c, i, j), column k).
    const ir::Tensor weights = TransposedMatrix(*g_.value(conv_.inputs[1]).constant);
    const bool bias = conv_.input(2) != kNoValue;
    v = Add("MatMul", {v, g_.AddConstant(conv_.name + "/patch_weights", weights)}, "matmul", {},
            bias ? kNoValue : tokens);
    if (bias) v = Add("Add", {v, conv_.inputs[2]}, "bias", {}, tokens);
    if (tokens != kNoValue) return std::move(nodes_);
    v = Add("Transpose", {v}, "channels", {{"perm", std::vector<int64_t>{0, 2, 1}}});
    Add("Reshape", {v, Shape("out_shape", {0, p_.k, hp, wp})}, "out", {}, conv_.outputs[0]);
    return std::move(nodes_);
  }

 private:
  ValueId Shape(const std::string& name, std::vector<int64_t> dims) {
    return g_.AddConstant(absl::StrCat(conv_.name, "/", name), ir::Tensor::FromInt64s(std::move(dims)));
  }

  // A node of `op` named after the conv; writes `out`, or a new value.
  ValueId Add(const std::string& op, std::vector<ValueId> inputs, const std::string& suffix,
              std::map<std::string, std::vector<int64_t>> ints = {}, ValueId out = kNoValue) {
    if (out == kNoValue) out = g_.AddValue(absl::StrCat(conv_.name, "/", suffix));
    ir::Node node{absl::StrCat(conv_.name, "/", suffix), op, conv_.opset, std::move(inputs), {out}, {}};
    for (auto& [name, values] : ints) node.attrs.Set(name, values);
    nodes_.push_back(std::move(node));
    return out;
  }

  ir::Graph& g_;
  const ir::Node conv_;
  const Patch p_;
  std::vector<ir::Node> nodes_;
};

}  // namespace

absl::StatusOr<bool> PatchConv::Run(ir::Graph& graph) {
  rewritten_ = 0;
  std::map<NodeId, std::pair<Patch, TokenTail>> patches;
  {
    const Readers readers(graph);
    for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
      const std::optional<Patch> p = PatchOf(graph, graph.node(id));
      if (!p) continue;
      patches[id] = {*p, TokenTailOf(graph, readers, graph.node(id), *p).value_or(TokenTail{})};
    }
  }
  if (patches.empty()) return false;
  std::map<NodeId, std::vector<ir::Node>> made;
  std::set<NodeId> removed;
  const NodeId original_count = static_cast<NodeId>(graph.nodes().size());
  for (const auto& [id, match] : patches) {
    const auto& [p, tail] = match;
    removed.insert(id);
    if (tail.tokens != kNoValue) removed.insert({tail.reshape, tail.transpose});
    made[id] = Rewriter(graph, graph.node(id), p).Nodes(tail.tokens);
  }
  rewritten_ = static_cast<int>(patches.size());
  ReplaceMatched(graph, original_count, std::move(made), removed);
  if (absl::Status s = ops::InferGraphTypes(graph); !s.ok()) return s;
  return true;
}

}  // namespace partitioner
