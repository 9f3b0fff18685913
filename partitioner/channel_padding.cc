// ChannelPadding: Conv(X[N,C,H,W], W[K,C,R,S]) -> Conv(Pad(X)[N,C',H,W], W'[K,C',R,S]).
#include "partitioner/channel_padding.h"

#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/infer_graph.h"

namespace partitioner {
namespace {

// C rounded up to the alignment in elements of `dtype`; C itself when already aligned or when
// the alignment is not a whole number of elements.
int64_t AlignedChannels(int64_t channels, ir::DType dtype, int64_t alignment_bytes) {
  const int64_t elem = static_cast<int64_t>(ir::DTypeSize(dtype));
  if (elem == 0 || alignment_bytes <= 0 || alignment_bytes % elem != 0) return channels;
  const int64_t align = alignment_bytes / elem;
  return (channels + align - 1) / align * align;
}

// Padded channel count for the Conv, or 0 when it is not a padding candidate.
int64_t PaddedChannels(const ir::Graph& graph, const ir::Node& conv, int64_t alignment_bytes) {
  if (conv.op_type != "Conv" || conv.attrs.GetInt("group", 1) != 1) return 0;
  if (conv.input(0) == ir::kNoValue || conv.input(1) == ir::kNoValue) return 0;
  const ir::Value& x = graph.value(conv.input(0));
  const ir::Value& w = graph.value(conv.input(1));
  if (x.constant || x.type.rank() != 4 || !(*x.type.shape)[1].known()) return 0;
  if (!ir::IsFloatingPoint(x.type.dtype)) return 0;
  if (!w.constant || w.constant->rank() != 4 || w.constant->dtype() != x.type.dtype) return 0;
  const int64_t channels = (*x.type.shape)[1].value;
  if (w.constant->shape()[1] != channels || channels == 0) return 0;
  const int64_t aligned = AlignedChannels(channels, x.type.dtype, alignment_bytes);
  return aligned == channels ? 0 : aligned;
}

// W[K, C, R, S] -> W'[K, C', R, S], zero in the new channels.
ir::Tensor PadWeights(const ir::Tensor& w, int64_t channels) {
  std::vector<int64_t> shape = w.shape();
  const int64_t k_dim = shape[0], c_dim = shape[1];
  shape[1] = channels;
  ir::Tensor padded = *ir::Tensor::Create(w.dtype(), shape);
  const size_t block = static_cast<size_t>(shape[2] * shape[3]) * ir::DTypeSize(w.dtype());
  const auto* src = static_cast<const uint8_t*>(w.raw_data());
  auto* dst = static_cast<uint8_t*>(padded.raw_data());
  for (int64_t k = 0; k < k_dim; ++k) {
    if (block * c_dim > 0) std::memcpy(dst + k * channels * block, src + k * c_dim * block, block * c_dim);
  }
  return padded;
}

// A Pad node (not yet in the graph) writing the Conv's X zero-padded to `channels` along axis 1.
ir::Node MakePad(ir::Graph& graph, const ir::Node& conv, int64_t channels) {
  const ir::ValueId x = conv.input(0);
  const int64_t extra = channels - (*graph.value(x).type.shape)[1].value;
  const ir::ValueId pads =
      graph.AddConstant(absl::StrCat(conv.name, "__cpad_pads"), ir::Tensor::FromInt64s({0, 0, 0, 0, 0, extra, 0, 0}));
  ir::Shape shape = *graph.value(x).type.shape;
  shape[1] = ir::Dim(channels);
  const ir::TensorType type{graph.value(x).type.dtype, std::move(shape)};
  ir::Node pad;
  pad.name = absl::StrCat(conv.name, "__cpad");
  pad.op_type = "Pad";
  pad.opset = conv.opset;
  pad.inputs = {x, pads};
  pad.outputs = {graph.AddValue(absl::StrCat(conv.name, "__cpad_out"), type)};
  pad.attrs.Set("mode", std::string("constant"));
  return pad;
}

}  // namespace

absl::StatusOr<bool> ChannelPadding::Run(ir::Graph& graph) {
  padded_ = 0;
  std::map<std::pair<ir::ValueId, int64_t>, ir::ValueId> padded_inputs;  // (X, C') -> Pad output
  std::vector<ir::Node> nodes;
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(graph.nodes().size()); ++id) {
    ir::Node conv = graph.node(id);
    const int64_t channels = PaddedChannels(graph, conv, alignment_bytes_);
    if (channels == 0) {
      nodes.push_back(std::move(conv));
      continue;
    }
    auto [it, inserted] = padded_inputs.try_emplace({conv.input(0), channels}, ir::kNoValue);
    if (inserted) {
      ir::Node pad = MakePad(graph, conv, channels);
      it->second = pad.outputs[0];
      nodes.push_back(std::move(pad));
    }
    const ir::Tensor w = *graph.value(conv.input(1)).constant;
    conv.inputs[0] = it->second;
    conv.inputs[1] = graph.AddConstant(absl::StrCat(conv.name, "__cpad_w"), PadWeights(w, channels));
    nodes.push_back(std::move(conv));
    ++padded_;
  }
  if (padded_ == 0) return false;
  graph.ReplaceNodes(std::move(nodes));
  if (absl::Status s = ops::InferGraphTypes(graph); !s.ok()) return s;
  return true;
}

bool IsChannelZeroPad(const ir::Graph& graph, const ir::Node& node) {
  if (node.op_type != "Pad" || node.attrs.GetString("mode", "constant") != "constant" || node.inputs.size() < 2) {
    return false;
  }
  if (graph.value(node.inputs[0]).type.rank() != 4 || node.input(3) != ir::kNoValue) return false;
  const std::optional<ir::Tensor>& pads = graph.value(node.inputs[1]).constant;
  const ir::ValueId value = node.input(2);
  if (!pads ||
      (value != ir::kNoValue && (!graph.value(value).constant || graph.value(value).constant->GetAsDouble(0) != 0))) {
    return false;
  }
  const std::vector<int64_t> p = pads->ToInt64Vector();
  if (p.size() != 8) return false;
  for (size_t i = 0; i < p.size(); ++i) {
    if (i != 5 && p[i] != 0) return false;
  }
  return p[5] > 0;
}

}  // namespace partitioner
