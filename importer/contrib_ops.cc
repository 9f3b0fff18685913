// ONNX Runtime's float contrib ops as standard ops (see contrib_ops.h): the GELU forms,
// the skip and simplified layer norms, FusedMatMul (and its old name TransposeMatMul), ExpandDims, CDist,
// FusedConv, FusedGemm; the channel-layout helpers the contrib files share. Attention and
// EmbedLayerNormalization are in contrib_attention.cc, the quantized ops in contrib_quantized.cc.
#include "importer/contrib_ops.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"

namespace importer {
namespace {

using ir::Graph;
using ir::kNoValue;
using ir::Node;
using ir::ValueId;

// Gelu(X), BiasGelu(A, B): GELU's erf form of A (+ B). FastGelu(X, bias?): its tanh form.
absl::Status GeluFormsToGelu(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  const bool fast = node.op_type == "com.microsoft.FastGelu";
  ValueId x = node.input(0);
  if (node.input(1) != kNoValue) x = Prepend(graph, node, prefix, "Add", {x, node.input(1)});
  Become(node, "Gelu", {x});
  if (fast) node.attrs.Set("approximate", std::string("tanh"));
  return absl::OkStatus();
}

// QuickGelu(X): X * sigmoid(alpha * X).
absl::Status QuickGeluToMul(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  absl::StatusOr<ValueId> alpha = ConstantLike(graph, node, "alpha", {node.attrs.GetFloat("alpha", 1.702f)}, {});
  if (!alpha.ok()) return alpha.status();
  const ValueId x = node.input(0);
  const ValueId gate = Prepend(graph, node, prefix, "Sigmoid", {Prepend(graph, node, prefix, "Mul", {x, *alpha})});
  Become(node, "Mul", {x, gate});
  return absl::OkStatus();
}

// `outputs` without its trailing absent entries.
std::vector<ValueId> Trimmed(std::vector<ValueId> outputs) {
  while (!outputs.empty() && outputs.back() == kNoValue) outputs.pop_back();
  return outputs;
}

// SkipLayerNormalization(input, skip, gamma, beta?, bias?) and SkipSimplifiedLayerNormalization
// (input, skip, gamma, bias?): input + skip (+ bias), that sum also output 3 when asked for, then
// LayerNormalization / RMSNormalization over the last axis (outputs 0-2: Y, mean, inv_std_var).
absl::Status SkipNormToNorm(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  const bool simplified = node.op_type == "com.microsoft.SkipSimplifiedLayerNormalization";
  std::vector<ValueId> outputs = node.outputs;
  outputs.resize(4, kNoValue);
  if (simplified && (outputs[1] != kNoValue || outputs[2] != kNoValue)) {
    return absl::UnimplementedError(
        "SkipSimplifiedLayerNormalization's mean and inv_std_var outputs are not supported");
  }
  const ValueId bias = node.input(simplified ? 3 : 4);
  ValueId sum =
      Prepend(graph, node, prefix, "Add", {node.input(0), node.input(1)}, bias == kNoValue ? outputs[3] : kNoValue);
  if (bias != kNoValue) sum = Prepend(graph, node, prefix, "Add", {sum, bias}, outputs[3]);
  std::vector<ValueId> norm_inputs = {sum, node.input(2)};
  if (!simplified && node.input(3) != kNoValue) norm_inputs.push_back(node.input(3));
  const float epsilon = node.attrs.GetFloat("epsilon", 1e-12f);
  Become(node, simplified ? "RMSNormalization" : "LayerNormalization", std::move(norm_inputs));
  node.attrs.Set("axis", int64_t{-1});
  node.attrs.Set("epsilon", epsilon);
  node.outputs = Trimmed({outputs[0], outputs[1], outputs[2]});
  return absl::OkStatus();
}

// SimplifiedLayerNormalization (ORT's, default domain): RMSNormalization with the same inputs and
// attributes (axis, epsilon, stash_type).
absl::Status SimplifiedNormToRms(Graph&, Node& node, std::vector<Node>&) {
  AtTargetOpset(node);
  if (node.outputs.size() > 1 && node.outputs[1] != kNoValue) {
    return absl::UnimplementedError("SimplifiedLayerNormalization's inv_std_var output is not supported");
  }
  node.outputs.resize(1);
  node.op_type = "RMSNormalization";
  return absl::OkStatus();
}

// FusedMatMul's view of operand `x`: transBatch moves dim 0 in front of the last (the batch dims
// 1..r-2 first, then the rows, as ORT's transpose fusion folds an attention's head split into the
// matmul), trans swaps the last two after that. Returns x itself where the view is x.
absl::StatusOr<ValueId> FusedMatMulOperand(Graph& graph, const Node& node, std::vector<Node>& prefix, ValueId x,
                                           bool trans_batch, bool trans) {
  const int64_t rank = graph.value(x).type.rank();
  if ((trans || trans_batch) && rank < 2) {
    return absl::InvalidArgumentError("transposes an input of rank below 2 or unknown");
  }
  std::vector<int64_t> perm(std::max<int64_t>(rank, 0));
  std::iota(perm.begin(), perm.end(), 0);
  if (trans_batch) std::rotate(perm.begin(), perm.begin() + 1, perm.end() - 1);  // [1..r-2, 0, r-1]
  if (trans) std::swap(perm[rank - 1], perm[rank - 2]);
  if (std::is_sorted(perm.begin(), perm.end())) return x;
  const ValueId out = Prepend(graph, node, prefix, "Transpose", {x});
  prefix.back().attrs.Set("perm", perm);
  return out;
}

// FusedMatMul(A, B): alpha * op(A) @ op(B), op as FusedMatMulOperand for transBatchA / transA and
// transBatchB / transB.
absl::Status FusedMatMulToMatMul(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  ValueId operands[2] = {node.input(0), node.input(1)};
  if (node.attrs.GetInt("transBatchA", 0) != 0 || node.attrs.GetInt("transBatchB", 0) != 0) {
    const int64_t rank_a = graph.value(operands[0]).type.rank(), rank_b = graph.value(operands[1]).type.rank();
    if (rank_a < 3 || rank_a != rank_b) {  // as ORT's MatMulComputeHelper
      return absl::InvalidArgumentError(
          absl::StrCat("FusedMatMul with transBatchA or transBatchB needs inputs of one rank, 3 or more (ranks ",
                       rank_a, " and ", rank_b, ")"));
    }
  }
  const char* flags[2] = {"transA", "transB"};
  const char* batch_flags[2] = {"transBatchA", "transBatchB"};
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<ValueId> t =
        FusedMatMulOperand(graph, node, prefix, operands[i], node.attrs.GetInt(batch_flags[i], 0) != 0,
                           node.attrs.GetInt(flags[i], 0) != 0);
    if (!t.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("FusedMatMul ", flags[i], " / ", batch_flags[i], " ", t.status().message()));
    }
    operands[i] = *t;
  }
  const float alpha = node.attrs.GetFloat("alpha", 1.0f);
  if (alpha == 1.0f) {
    Become(node, "MatMul", {operands[0], operands[1]});
    return absl::OkStatus();
  }
  absl::StatusOr<ValueId> scale = ConstantLike(graph, node, "alpha", {alpha}, {});
  if (!scale.ok()) return scale.status();
  Become(node, "Mul", {Prepend(graph, node, prefix, "MatMul", {operands[0], operands[1]}), *scale});
  return absl::OkStatus();
}

// ExpandDims(X, axis): Unsqueeze at the constant scalar `axis` (int32; negative counts from the
// output's end, as ORT inserts at rank + axis + 1).
absl::Status ExpandDimsToUnsqueeze(Graph& graph, Node& node, std::vector<Node>&) {
  AtTargetOpset(node);
  const ir::Tensor* axis = ConstantInput(graph, node, 1);
  if (axis == nullptr || axis->num_elements() != 1) {
    return absl::UnimplementedError("ExpandDims needs a constant scalar axis");
  }
  Become(node, "Unsqueeze",
         {node.input(0), NodeConstant(graph, node, "axes", ir::Tensor::FromInt64s({axis->GetAsInt64(0)}))});
  return absl::OkStatus();
}

// CDist(A [M, K], B [P, K]), metric sqeuclidean (default) or euclidean, as ORT's CPU kernel computes
// it: |-2 A B^T + |a|^2 + |b|^2| (then its square root).
absl::Status CDistToMatMul(Graph& graph, Node& node, std::vector<Node>& prefix) {
  const std::string metric = node.attrs.GetString("metric", "sqeuclidean");
  if (metric != "sqeuclidean" && metric != "euclidean") {
    return absl::UnimplementedError(
        absl::StrCat("CDist metric '", metric, "' is not supported (sqeuclidean, euclidean)"));
  }
  AtTargetOpset(node);
  const ValueId a = node.input(0), b = node.input(1);
  const ValueId b_t = Prepend(graph, node, prefix, "Transpose", {b});
  prefix.back().attrs.Set("perm", std::vector<int64_t>{1, 0});
  absl::StatusOr<ValueId> minus_two = ConstantLike(graph, node, "minus_two", {-2.0f}, {});
  if (!minus_two.ok()) return minus_two.status();
  const ValueId cross =
      Prepend(graph, node, prefix, "Mul", {Prepend(graph, node, prefix, "MatMul", {a, b_t}), *minus_two});
  const ValueId rows = NodeConstant(graph, node, "rows", ir::Tensor::FromInt64s({1}));
  const ValueId a_norms = Prepend(graph, node, prefix, "ReduceSumSquare", {a, rows});  // [M, 1]
  const ValueId b_norms = Prepend(graph, node, prefix, "ReduceSumSquare",
                                  {b_t, NodeConstant(graph, node, "cols", ir::Tensor::FromInt64s({0}))});  // [1, P]
  const ValueId sum =
      Prepend(graph, node, prefix, "Add", {Prepend(graph, node, prefix, "Add", {cross, a_norms}), b_norms});
  if (metric == "sqeuclidean") {
    Become(node, "Abs", {sum});
  } else {
    Become(node, "Sqrt", {Prepend(graph, node, prefix, "Abs", {sum})});
  }
  return absl::OkStatus();
}

// `node` becomes the activation ORT fused into a Conv / Gemm, applied to `x`; `params` are its
// alpha / beta (LeakyRelu, HardSigmoid) or min / max (Clip).
absl::Status BecomeActivation(Graph& graph, Node& node, ValueId x, const std::string& activation,
                              const std::vector<float>& params) {
  auto param = [&params](size_t i, float default_value) { return i < params.size() ? params[i] : default_value; };
  if (activation.empty()) {
    Become(node, "Identity", {x});
  } else if (activation == "Relu" || activation == "Tanh" || activation == "Sigmoid") {
    Become(node, activation, {x});
  } else if (activation == "LeakyRelu") {
    Become(node, activation, {x});
    node.attrs.Set("alpha", param(0, 0.01f));
  } else if (activation == "HardSigmoid") {
    Become(node, activation, {x});
    node.attrs.Set("alpha", param(0, 0.2f));
    node.attrs.Set("beta", param(1, 0.5f));
  } else if (activation == "Clip") {
    const ir::DType dtype = InputDType(graph, node, 0);  // the Conv / Gemm input's, as x has no type yet
    absl::StatusOr<ir::Tensor> low = ScalarOfType(dtype, param(0, -3.4e38f));
    absl::StatusOr<ir::Tensor> high = ScalarOfType(dtype, param(1, 3.4e38f));
    if (!low.ok()) return low.status();
    if (!high.ok()) return high.status();
    const ValueId min = NodeConstant(graph, node, "min", *std::move(low));
    const ValueId max = NodeConstant(graph, node, "max", *std::move(high));
    Become(node, activation, {x, min, max});
  } else {
    return absl::UnimplementedError(absl::StrCat("fused activation '", activation, "' is not supported"));
  }
  return absl::OkStatus();
}

// FusedConv(X, W, B?, Z?): activation(Conv(X, W, B) + Z), activation_params as the activation's.
absl::Status FusedConvToConv(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  const std::string activation = node.attrs.GetString("activation", "");
  const std::vector<float> params = node.attrs.GetFloats("activation_params");
  ir::Attributes conv_attrs = node.attrs;
  conv_attrs.Erase("activation");
  conv_attrs.Erase("activation_params");
  std::vector<ValueId> conv_inputs = {node.input(0), node.input(1)};
  if (node.input(2) != kNoValue) conv_inputs.push_back(node.input(2));
  ValueId y = Prepend(graph, node, prefix, "Conv", std::move(conv_inputs));
  prefix.back().attrs = std::move(conv_attrs);
  if (node.input(3) != kNoValue) y = Prepend(graph, node, prefix, "Add", {y, node.input(3)});
  return BecomeActivation(graph, node, y, activation, params);
}

// FusedGemm(A, B, C?): activation(Gemm(A, B, C)), activation_alpha / activation_beta as its params.
absl::Status FusedGemmToGemm(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  const std::string activation = node.attrs.GetString("activation", "");
  std::vector<float> params;
  if (node.attrs.Has("activation_alpha")) params.push_back(node.attrs.GetFloat("activation_alpha", 0));
  if (node.attrs.Has("activation_beta")) params.push_back(node.attrs.GetFloat("activation_beta", 0));
  ir::Attributes gemm_attrs;
  for (const char* attr : {"alpha", "beta", "transA", "transB"}) {
    auto it = node.attrs.all().find(attr);
    if (it != node.attrs.all().end()) gemm_attrs.Set(attr, it->second);
  }
  std::vector<ValueId> gemm_inputs = {node.input(0), node.input(1)};
  if (node.input(2) != kNoValue) gemm_inputs.push_back(node.input(2));
  const ValueId y = Prepend(graph, node, prefix, "Gemm", std::move(gemm_inputs));
  prefix.back().attrs = std::move(gemm_attrs);
  return BecomeActivation(graph, node, y, activation, params);
}

}  // namespace

std::vector<int64_t> ChannelsPerm(int64_t rank, bool to_channels_first) {
  std::vector<int64_t> perm = {0};
  if (to_channels_first) perm.push_back(rank - 1);
  for (int64_t d = 1; d < rank - 1; ++d) perm.push_back(to_channels_first ? d : d + 1);
  if (!to_channels_first) perm.push_back(1);
  return perm;
}

absl::StatusOr<int64_t> ChannelsLastRank(const Graph& graph, const Node& node) {
  const int64_t rank = graph.value(node.input(0)).type.rank();
  if (rank < 3) return absl::InvalidArgumentError("channels_last needs an input of known rank 3 or more");
  return rank;
}

ValueId ChannelsMoved(Graph& graph, const Node& node, std::vector<Node>& prefix, ValueId x, int64_t rank,
                      bool to_channels_first) {
  const ValueId out = Prepend(graph, node, prefix, "Transpose", {x});
  prefix.back().attrs.Set("perm", ChannelsPerm(rank, to_channels_first));
  return out;
}

Rewrite NeedsInputs(std::vector<size_t> slots, Rewrite rewrite) {
  return [slots = std::move(slots), rewrite = std::move(rewrite)](Graph& graph, Node& node, std::vector<Node>& prefix) {
    for (size_t slot : slots) {
      if (node.input(slot) == kNoValue) {
        return absl::InvalidArgumentError(absl::StrCat("input ", slot, " is required"));
      }
    }
    return rewrite(graph, node, prefix);
  };
}

const std::map<std::string, Rewrite>& ContribRewrites() {
  static const auto* table = [] {
    auto* rewrites = new std::map<std::string, Rewrite>{
        {"com.microsoft.Gelu", NeedsInputs({0}, GeluFormsToGelu)},
        {"com.microsoft.BiasGelu", NeedsInputs({0, 1}, GeluFormsToGelu)},
        {"com.microsoft.FastGelu", NeedsInputs({0}, GeluFormsToGelu)},
        {"com.microsoft.QuickGelu", NeedsInputs({0}, QuickGeluToMul)},
        {"com.microsoft.SkipLayerNormalization", NeedsInputs({0, 1, 2}, SkipNormToNorm)},
        {"com.microsoft.SkipSimplifiedLayerNormalization", NeedsInputs({0, 1, 2}, SkipNormToNorm)},
        {"SimplifiedLayerNormalization", NeedsInputs({0, 1}, SimplifiedNormToRms)},
        {"com.microsoft.FusedMatMul", NeedsInputs({0, 1}, FusedMatMulToMatMul)},
        {"com.microsoft.TransposeMatMul", NeedsInputs({0, 1}, FusedMatMulToMatMul)},  // FusedMatMul's old name
        {"com.microsoft.ExpandDims", NeedsInputs({0, 1}, ExpandDimsToUnsqueeze)},
        {"com.microsoft.CDist", NeedsInputs({0, 1}, CDistToMatMul)},
        {"com.microsoft.FusedConv", NeedsInputs({0, 1}, FusedConvToConv)},
        {"com.microsoft.FusedGemm", NeedsInputs({0, 1}, FusedGemmToGemm)},
    };
    for (auto& entry : QuantizedContribRewrites()) rewrites->insert(std::move(entry));
    for (auto& entry : AttentionContribRewrites()) rewrites->insert(std::move(entry));
    for (auto& entry : NBitsContribRewrites()) rewrites->insert(std::move(entry));
    for (auto& entry : GatherQuantizedContribRewrites()) rewrites->insert(std::move(entry));
    for (auto& entry : DiffusionContribRewrites()) rewrites->insert(std::move(entry));
    return rewrites;
  }();
  return *table;
}

}  // namespace importer
