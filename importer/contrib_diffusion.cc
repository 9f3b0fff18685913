// The contrib ops ONNX Runtime's transformers optimizer writes for Stable Diffusion's UNet / VAE on
// CUDA (GroupNorm, SkipGroupNorm, BiasSplitGelu, BiasAdd, NhwcConv) and its BiasDropout, as standard
// ops computing what ORT's CUDA kernels compute: GroupNorm is ONNX's GroupNormalization (opset 21's
// per-channel scale and bias) between the NHWC <-> NCHW transposes, with SiLU where activation = 1;
// NhwcConv's weight is channels-last ([M, kH, kW, C / group], as ORT's fusion writes it) and
// transposed to Conv's layout at import. ORT registers them only on its CUDA provider; onnxrun
// runs them on either device.
#include <utility>

#include "absl/strings/str_cat.h"
#include "importer/contrib_ops.h"

namespace importer {
namespace {

using ir::Graph;
using ir::kNoValue;
using ir::Node;
using ir::Tensor;
using ir::ValueId;

// GroupNorm's and SkipGroupNorm's attributes.
struct GroupNormAttrs {
  int64_t groups = 0;
  bool silu = false;
  float epsilon = 1e-5f;
  bool channels_last = true;
};

absl::StatusOr<GroupNormAttrs> ParseGroupNormAttrs(const Node& node) {
  GroupNormAttrs attrs;
  if (!node.attrs.Has("groups")) return absl::InvalidArgumentError("attribute 'groups' is required");
  attrs.groups = node.attrs.GetInt("groups", 0);
  if (attrs.groups < 1) return absl::InvalidArgumentError(absl::StrCat("groups must be positive, got ", attrs.groups));
  const int64_t activation = node.attrs.GetInt("activation", 0);
  if (activation != 0 && activation != 1) {
    return absl::InvalidArgumentError(absl::StrCat("activation must be 0 (none) or 1 (SiLU), got ", activation));
  }
  attrs.silu = activation == 1;
  attrs.epsilon = node.attrs.GetFloat("epsilon", 1e-5f);
  attrs.channels_last = node.attrs.GetInt("channels_last", 1) != 0;
  return attrs;
}

// `param` (gamma or beta, float32 in ORT's CUDA kernel) in x's dtype, as GroupNormalization takes it.
ValueId InDTypeOf(Graph& graph, const Node& node, std::vector<Node>& prefix, ValueId param, ir::DType dtype) {
  const ir::DType own = graph.value(param).type.dtype;
  if (own == dtype || own == ir::DType::kUndefined || dtype == ir::DType::kUndefined) return param;
  return PrependCast(graph, node, prefix, param, dtype);
}

// `node` becomes the group norm of `x` (node's layout) with node's gamma / beta and attributes:
// [Transpose,] GroupNormalization, [Sigmoid, Mul,] [Transpose]; the last of them is `node`.
absl::Status BecomeGroupNorm(Graph& graph, Node& node, std::vector<Node>& prefix, ValueId x,
                             const GroupNormAttrs& attrs) {
  absl::StatusOr<int64_t> rank = attrs.channels_last ? ChannelsLastRank(graph, node) : int64_t{0};
  if (!rank.ok()) return rank.status();
  if (attrs.channels_last) x = ChannelsMoved(graph, node, prefix, x, *rank, /*to_channels_first=*/true);
  const ir::DType dtype = InputDType(graph, node, 0);
  const std::vector<ValueId> norm_inputs = {x, InDTypeOf(graph, node, prefix, node.input(1), dtype),
                                            InDTypeOf(graph, node, prefix, node.input(2), dtype)};
  ir::Attributes norm_attrs;
  norm_attrs.Set("num_groups", attrs.groups);
  norm_attrs.Set("epsilon", attrs.epsilon);
  if (!attrs.channels_last && !attrs.silu) {
    Become(node, "GroupNormalization", norm_inputs);
    node.attrs = std::move(norm_attrs);
    return absl::OkStatus();
  }
  ValueId y = Prepend(graph, node, prefix, "GroupNormalization", norm_inputs);
  prefix.back().attrs = std::move(norm_attrs);
  if (attrs.silu && !attrs.channels_last) {
    Become(node, "Mul", {y, Prepend(graph, node, prefix, "Sigmoid", {y})});
    return absl::OkStatus();
  }
  if (attrs.silu) y = Prepend(graph, node, prefix, "Mul", {y, Prepend(graph, node, prefix, "Sigmoid", {y})});
  Become(node, "Transpose", {y});
  node.attrs.Set("perm", ChannelsPerm(*rank, /*to_channels_first=*/false));
  return absl::OkStatus();
}

// GroupNorm(X, gamma, beta): X NHWC unless channels_last = 0.
absl::Status GroupNormToGroupNormalization(Graph& graph, Node& node, std::vector<Node>& prefix) {
  absl::StatusOr<GroupNormAttrs> attrs = ParseGroupNormAttrs(node);
  if (!attrs.ok()) return attrs.status();
  AtTargetOpset(node);
  node.outputs.resize(1);
  return BecomeGroupNorm(graph, node, prefix, node.input(0), *attrs);
}

// SkipGroupNorm(X, gamma, beta, skip, bias?) -> (Y, S?): S = X + bias + skip (skip of X's shape,
// [N, 1, 1, C] or [N, C], broadcast over the image), Y = GroupNorm(S).
absl::Status SkipGroupNormToGroupNormalization(Graph& graph, Node& node, std::vector<Node>& prefix) {
  absl::StatusOr<GroupNormAttrs> attrs = ParseGroupNormAttrs(node);
  if (!attrs.ok()) return attrs.status();
  AtTargetOpset(node);
  ValueId skip = node.input(3);
  const int64_t x_rank = graph.value(node.input(0)).type.rank(), skip_rank = graph.value(skip).type.rank();
  if (skip_rank == 2 && x_rank > 2) {  // [N, C] -> [N, 1, .., 1, C] (or [N, C, 1, .., 1])
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < x_rank - 2; ++d) axes.push_back(attrs->channels_last ? d + 1 : d + 2);
    skip = Prepend(graph, node, prefix, "Unsqueeze",
                   {skip, NodeConstant(graph, node, "skip_axes", Tensor::FromInt64s(axes))});
  }
  const ValueId sum_output = node.outputs.size() > 1 ? node.outputs[1] : kNoValue;
  ValueId sum = node.input(0);
  if (node.input(4) != kNoValue) sum = Prepend(graph, node, prefix, "Add", {sum, node.input(4)});
  sum = Prepend(graph, node, prefix, "Add", {sum, skip}, sum_output);
  node.outputs.resize(1);
  return BecomeGroupNorm(graph, node, prefix, sum, *attrs);
}

// BiasSplitGelu(X, bias): (X + bias) split in two halves on the last axis, left * Gelu(right)
// (erf form).
absl::Status BiasSplitGeluToMul(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  const ValueId sum = Prepend(graph, node, prefix, "Add", {node.input(0), node.input(1)});
  const std::vector<ValueId> halves = PrependWithOutputs(graph, node, prefix, "Split", {sum}, 2);
  prefix.back().attrs.Set("axis", int64_t{-1});
  prefix.back().attrs.Set("num_outputs", int64_t{2});
  Become(node, "Mul", {halves[0], Prepend(graph, node, prefix, "Gelu", {halves[1]})});
  return absl::OkStatus();
}

// BiasAdd(X, bias, skip): X + bias + skip.
absl::Status BiasAddToAdd(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  const ValueId biased = Prepend(graph, node, prefix, "Add", {node.input(0), node.input(1)});
  Become(node, "Add", {biased, node.input(2)});
  return absl::OkStatus();
}

// NhwcConv(X, W, B?): Conv's attributes on a channels-last X and Y; W constant, [M, k.., C / group].
absl::Status NhwcConvToConv(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  absl::StatusOr<int64_t> rank = ChannelsLastRank(graph, node);
  if (!rank.ok()) return rank.status();
  if (ConstantInput(graph, node, 1) == nullptr) {
    return absl::UnimplementedError("NhwcConv with a computed weight is not supported (only a constant W)");
  }
  std::vector<ValueId> conv_inputs = {ChannelsMoved(graph, node, prefix, node.input(0), *rank, true),
                                      ChannelsMoved(graph, node, prefix, node.input(1), *rank, true)};
  if (node.input(2) != kNoValue) conv_inputs.push_back(node.input(2));
  const ValueId y = Prepend(graph, node, prefix, "Conv", std::move(conv_inputs));
  prefix.back().attrs = node.attrs;
  Become(node, "Transpose", {y});
  node.attrs.Set("perm", ChannelsPerm(*rank, /*to_channels_first=*/false));
  return absl::OkStatus();
}

// BiasDropout(data, bias, residual?, ratio?, training_mode?) -> (output, mask?):
// Dropout(data + bias, ratio, training_mode) + residual; outside training Dropout passes its input
// through and the mask is all true.
absl::Status BiasDropoutToDropout(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  std::vector<ValueId> dropout_inputs = {Prepend(graph, node, prefix, "Add", {node.input(0), node.input(1)}),
                                         node.input(3), node.input(4)};
  while (dropout_inputs.back() == kNoValue) dropout_inputs.pop_back();
  const ValueId residual = node.input(2);
  if (residual == kNoValue) {
    Become(node, "Dropout", std::move(dropout_inputs));
    return absl::OkStatus();
  }
  std::vector<ValueId> outputs = PrependWithOutputs(graph, node, prefix, "Dropout", std::move(dropout_inputs), 1);
  if (node.outputs.size() > 1 && node.outputs[1] != kNoValue) prefix.back().outputs.push_back(node.outputs[1]);
  node.outputs.resize(1);
  Become(node, "Add", {outputs[0], residual});
  return absl::OkStatus();
}

}  // namespace

std::map<std::string, Rewrite> DiffusionContribRewrites() {
  return {
      {"com.microsoft.GroupNorm", NeedsInputs({0, 1, 2}, GroupNormToGroupNormalization)},
      {"com.microsoft.SkipGroupNorm", NeedsInputs({0, 1, 2, 3}, SkipGroupNormToGroupNormalization)},
      {"com.microsoft.BiasSplitGelu", NeedsInputs({0, 1}, BiasSplitGeluToMul)},
      {"com.microsoft.BiasAdd", NeedsInputs({0, 1, 2}, BiasAddToAdd)},
      {"com.microsoft.NhwcConv", NeedsInputs({0, 1}, NhwcConvToConv)},
      {"com.microsoft.BiasDropout", NeedsInputs({0, 1}, BiasDropoutToDropout)},
  };
}

}  // namespace importer
