// BatchNormFolding: BN(Conv(x)) -> Conv'(x) and BN(Gemm(a)) -> Gemm'(a), folded in float64; so
// are per-channel constant Mul / Add / Sub / Div of a Conv's output.
#include "partitioner/batch_norm_folding.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/half.h"
#include "ops/infer_graph.h"

namespace partitioner {
namespace {

// Per-channel affine map of an inference BN: y = x * scale + shift.
struct Affine {
  std::vector<double> scale;
  std::vector<double> shift;
};

const ir::Tensor* ConstantInput(const ir::Graph& graph, const ir::Node& node, size_t i) {
  const ir::ValueId id = node.input(i);
  if (id == ir::kNoValue || !graph.value(id).constant) return nullptr;
  return &*graph.value(id).constant;
}

// The BN's affine map over `channels` channels, when its four parameters are constants.
std::optional<Affine> ConstantBatchNorm(const ir::Graph& graph, const ir::Node& bn, int64_t channels) {
  const ir::Tensor* params[4];
  for (size_t i = 0; i < 4; ++i) {
    params[i] = ConstantInput(graph, bn, i + 1);
    if (params[i] == nullptr || params[i]->num_elements() != channels) return std::nullopt;
  }
  const double epsilon = bn.attrs.GetFloat("epsilon", 1e-5f);
  Affine affine;
  for (int64_t k = 0; k < channels; ++k) {
    const double s = params[0]->GetAsDouble(k) / std::sqrt(params[3]->GetAsDouble(k) + epsilon);
    affine.scale.push_back(s);
    affine.shift.push_back(params[1]->GetAsDouble(k) - params[2]->GetAsDouble(k) * s);
  }
  return affine;
}

// The constant operand of a per-channel Mul / Add / Sub / Div of a rank-`rank` conv output with
// `channels` channels: dims right-aligned, each 1 except the channel axis (1 or channels). Sub and
// Div only as x - c and x / c. `x` is set to the other operand.
const ir::Tensor* PerChannelOperand(const ir::Graph& graph, const ir::Node& node, ir::ValueId& x) {
  if (node.inputs.size() != 2 || node.input(0) == ir::kNoValue || node.input(1) == ir::kNoValue) return nullptr;
  const bool commutes = node.op_type == "Mul" || node.op_type == "Add";
  if (!commutes && node.op_type != "Sub" && node.op_type != "Div") return nullptr;
  for (size_t c = commutes ? 0 : 1; c < 2; ++c) {
    const ir::Tensor* constant = ConstantInput(graph, node, c);
    if (constant == nullptr || ConstantInput(graph, node, 1 - c) != nullptr) continue;
    x = node.input(1 - c);
    return constant;
  }
  return nullptr;
}

// The pointwise node's map over `channels` channels of a rank-`rank` output (see
// PerChannelOperand), or nullopt when its constant broadcasts along another axis.
std::optional<Affine> ConstantPointwise(const ir::Graph& graph, const ir::Node& node, int64_t channels, int64_t rank) {
  ir::ValueId x = ir::kNoValue;
  const ir::Tensor* c = PerChannelOperand(graph, node, x);
  if (c == nullptr || !ir::IsFloatingPoint(c->dtype()) || c->rank() > rank) return std::nullopt;
  const std::vector<int64_t>& dims = c->shape();
  for (int64_t i = 0; i < c->rank(); ++i) {
    const int64_t axis = rank - c->rank() + i;
    if (dims[i] != 1 && !(axis == 1 && dims[i] == channels)) return std::nullopt;
  }
  const bool per_channel = c->num_elements() == channels && channels > 1;
  Affine affine{std::vector<double>(channels, 1.0), std::vector<double>(channels, 0.0)};
  for (int64_t k = 0; k < channels; ++k) {
    const double v = c->GetAsDouble(per_channel ? k : 0);
    if (node.op_type == "Mul") affine.scale[k] = v;
    if (node.op_type == "Div") affine.scale[k] = 1.0 / v;
    if (node.op_type == "Add") affine.shift[k] = v;
    if (node.op_type == "Sub") affine.shift[k] = -v;
  }
  return affine;
}

// The map a BN or a per-channel pointwise node applies to the `channels` channels of a rank-`rank`
// output it reads.
std::optional<Affine> NodeAffine(const ir::Graph& graph, const ir::Node& node, int64_t channels, int64_t rank) {
  if (node.op_type == "BatchNormalization") return ConstantBatchNorm(graph, node, channels);
  return ConstantPointwise(graph, node, channels, rank);
}

void SetFromDouble(ir::Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case ir::DType::kFloat16: t.data<ir::Half>()[i] = ir::Half(v); break;
    case ir::DType::kBFloat16: t.data<ir::BFloat16>()[i] = ir::BFloat16(v); break;
    case ir::DType::kFloat64: t.data<double>()[i] = v; break;
    default: t.data<float>()[i] = static_cast<float>(v); break;
  }
}

// Sets input i of `node` to a new constant named after the BN.
void SetConstantInput(ir::Graph& graph, ir::NodeId node_id, size_t i, const std::string& name, ir::Tensor tensor) {
  const ir::ValueId id = graph.AddConstant(name, std::move(tensor));
  ir::Node& node = graph.node(node_id);
  if (node.inputs.size() <= i) node.inputs.resize(i + 1, ir::kNoValue);
  node.inputs[i] = id;
}

// Conv(X, W, B?): W is [K, C/group, ...]; channel k of the output scales with row k of W.
bool FoldIntoConv(ir::Graph& graph, ir::NodeId conv_id, const ir::Node& bn) {
  const ir::Node& conv = graph.node(conv_id);
  const ir::Tensor* w = ConstantInput(graph, conv, 1);
  if (w == nullptr || w->rank() < 1 || !ir::IsFloatingPoint(w->dtype())) return false;
  const int64_t k_dim = w->shape()[0];
  const bool has_bias = conv.input(2) != ir::kNoValue;
  const ir::Tensor* b = ConstantInput(graph, conv, 2);
  if (has_bias && (b == nullptr || b->num_elements() != k_dim)) return false;
  std::optional<Affine> affine = NodeAffine(graph, bn, k_dim, w->rank());
  if (!affine || k_dim == 0) return false;

  ir::Tensor new_w = *ir::Tensor::Create(w->dtype(), w->shape());
  const int64_t per_k = w->num_elements() / k_dim;
  if (w->dtype() == ir::DType::kFloat32) {  // the common case, without per-element dispatch
    const float* src = w->data<float>();
    float* dst = new_w.data<float>();
    for (int64_t k = 0; k < k_dim; ++k) {
      const double scale = affine->scale[k];
      for (int64_t i = k * per_k; i < (k + 1) * per_k; ++i) dst[i] = static_cast<float>(src[i] * scale);
    }
  } else {
    for (int64_t i = 0; i < w->num_elements(); ++i) {
      SetFromDouble(new_w, i, w->GetAsDouble(i) * affine->scale[i / per_k]);
    }
  }
  ir::Tensor new_b = *ir::Tensor::Create(has_bias ? b->dtype() : w->dtype(), {k_dim});
  for (int64_t k = 0; k < k_dim; ++k) {
    const double bias = has_bias ? b->GetAsDouble(k) : 0.0;
    SetFromDouble(new_b, k, bias * affine->scale[k] + affine->shift[k]);
  }
  SetConstantInput(graph, conv_id, 1, absl::StrCat(bn.name, "__folded_w"), std::move(new_w));
  SetConstantInput(graph, conv_id, 2, absl::StrCat(bn.name, "__folded_b"), std::move(new_b));
  return true;
}

// C broadcast to [rows, n] read at (m, j): C may be absent, scalar, [1]/[N], [1|M, 1|N].
double BroadcastC(const ir::Tensor* c, int64_t m, int64_t j) {
  if (c == nullptr) return 0.0;
  if (c->rank() == 0) return c->GetAsDouble(0);
  const int64_t cols = c->shape().back();
  const int64_t col = cols > 1 ? j : 0;
  if (c->rank() == 1) return c->GetAsDouble(col);
  const int64_t row = c->shape()[0] > 1 ? m : 0;
  return c->GetAsDouble(row * cols + col);
}

// Gemm(A, B, C?) = alpha * op(A) * op(B) + beta * C; output column n scales with column n of
// op(B) (row n of B when transB).
bool FoldIntoGemm(ir::Graph& graph, ir::NodeId gemm_id, const ir::Node& bn) {
  const ir::Node& gemm = graph.node(gemm_id);
  const ir::Tensor* b = ConstantInput(graph, gemm, 1);
  if (b == nullptr || b->rank() != 2 || !ir::IsFloatingPoint(b->dtype())) return false;
  const bool trans_b = gemm.attrs.GetInt("transB", 0) != 0;
  const int64_t n_dim = trans_b ? b->shape()[0] : b->shape()[1];
  const bool has_c = gemm.input(2) != ir::kNoValue;
  const ir::Tensor* c = ConstantInput(graph, gemm, 2);
  if (has_c && (c == nullptr || c->rank() > 2)) return false;
  std::optional<Affine> affine = ConstantBatchNorm(graph, bn, n_dim);
  if (!affine || n_dim == 0) return false;

  ir::Tensor new_b = *ir::Tensor::Create(b->dtype(), b->shape());
  for (int64_t i = 0; i < b->num_elements(); ++i) {
    const int64_t n = trans_b ? i / b->shape()[1] : i % n_dim;
    SetFromDouble(new_b, i, b->GetAsDouble(i) * affine->scale[n]);
  }
  const double beta = gemm.attrs.GetFloat("beta", 1.0f);
  const int64_t rows = (c != nullptr && c->rank() == 2) ? c->shape()[0] : 1;
  std::vector<int64_t> c_shape = rows > 1 ? std::vector<int64_t>{rows, n_dim} : std::vector<int64_t>{n_dim};
  ir::Tensor new_c = *ir::Tensor::Create(has_c ? c->dtype() : b->dtype(), c_shape);
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t n = 0; n < n_dim; ++n) {
      const double v = affine->scale[n] * beta * BroadcastC(c, m, n) + affine->shift[n];
      SetFromDouble(new_c, m * n_dim + n, v);
    }
  }
  SetConstantInput(graph, gemm_id, 1, absl::StrCat(bn.name, "__folded_b"), std::move(new_b));
  SetConstantInput(graph, gemm_id, 2, absl::StrCat(bn.name, "__folded_c"), std::move(new_c));
  graph.node(gemm_id).attrs.Set("beta", 1.0f);
  return true;
}

// The node that produces the BN's X when the BN may fold into it, else -1.
ir::NodeId FoldTarget(const ir::Graph& graph, const ir::Node& bn,
                      const std::vector<std::vector<ir::NodeId>>& consumers) {
  if (bn.outputs.empty() || bn.outputs[0] == ir::kNoValue) return -1;
  for (size_t i = 1; i < bn.outputs.size(); ++i) {
    if (bn.outputs[i] != ir::kNoValue) return -1;
  }
  const bool is_bn = bn.op_type == "BatchNormalization";
  ir::ValueId x = bn.input(0);
  if (!is_bn && PerChannelOperand(graph, bn, x) == nullptr) return -1;
  if (x == ir::kNoValue || consumers[x].size() != 1 || graph.IsGraphOutput(x)) return -1;
  const ir::NodeId producer = graph.value(x).producer;
  if (producer < 0) return -1;
  const ir::Node& node = graph.node(producer);
  if (node.op_type != "Conv" && (node.op_type != "Gemm" || !is_bn)) return -1;
  if (node.outputs.size() != 1 || node.outputs[0] != x) return -1;
  return producer;
}

}  // namespace

absl::StatusOr<bool> BatchNormFolding::Run(ir::Graph& graph) {
  folded_ = 0;
  pointwise_folded_ = 0;
  const std::vector<std::vector<ir::NodeId>> consumers = graph.ComputeConsumers();
  std::vector<bool> removed(graph.nodes().size(), false);
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(graph.nodes().size()); ++id) {
    const ir::Node bn = graph.node(id);
    const bool is_bn = bn.op_type == "BatchNormalization";
    if (!is_bn && bn.op_type != "Mul" && bn.op_type != "Add" && bn.op_type != "Sub" && bn.op_type != "Div") continue;
    const ir::NodeId target = FoldTarget(graph, bn, consumers);
    if (target < 0) continue;
    const bool folded =
        graph.node(target).op_type == "Conv" ? FoldIntoConv(graph, target, bn) : FoldIntoGemm(graph, target, bn);
    if (!folded) continue;
    // The Conv/Gemm now writes the BN's output (a following BN may fold into it as well).
    graph.node(target).outputs[0] = bn.outputs[0];
    graph.value(bn.outputs[0]).producer = target;
    removed[id] = true;
    ++(is_bn ? folded_ : pointwise_folded_);
  }
  if (folded_ + pointwise_folded_ == 0) return false;
  std::vector<ir::Node> kept;
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(graph.nodes().size()); ++id) {
    if (!removed[id]) kept.push_back(graph.node(id));
  }
  graph.ReplaceNodes(std::move(kept));
  if (absl::Status s = ops::InferGraphTypes(graph); !s.ok()) return s;
  return true;
}

}  // namespace partitioner
