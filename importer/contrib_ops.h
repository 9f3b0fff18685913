// ONNX Runtime's contrib ops (domain com.microsoft, and the few it registers in the default domain)
// that real models carry — the transformer fusions ORT's optimizer writes (SkipLayerNormalization,
// FastGelu, Attention, ...) and the QLinear ops of its quantizer (the ONNX model zoo's int8 models) —
// rewritten at import into standard ops that compute what ORT computes. --list-ops lists them.
#ifndef ONNXRUN_IMPORTER_CONTRIB_OPS_H_
#define ONNXRUN_IMPORTER_CONTRIB_OPS_H_

#include <map>
#include <string>
#include <vector>

#include "importer/rewrite_util.h"

namespace importer {

// The opset the standard ops written for a contrib op are read at (every canonical form holds there).
inline constexpr int kContribTargetOpset = 23;

// A contrib node's own opset is its domain's; the standard ops it becomes are read at the target.
inline void AtTargetOpset(ir::Node& node) { node.opset = kContribTargetOpset; }

// The permutation from NHWC to NCHW (`to_channels_first`) or back, for a tensor of `rank`.
std::vector<int64_t> ChannelsPerm(int64_t rank, bool to_channels_first);

// The rank of a channels_last node's input 0, which must be known and 3 or more.
absl::StatusOr<int64_t> ChannelsLastRank(const ir::Graph& graph, const ir::Node& node);

// `x` (of `rank`) moved to channels first or back (a Transpose prepended), for ORT's channels-last ops.
ir::ValueId ChannelsMoved(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& prefix, ir::ValueId x,
                          int64_t rank, bool to_channels_first);

// `rewrite`, after checking that the node has the inputs at `slots` (a missing one is an error,
// not a read of an absent value).
Rewrite NeedsInputs(std::vector<size_t> slots, Rewrite rewrite);

// Keyed by canonical op type ("com.microsoft.FastGelu"; "SimplifiedLayerNormalization").
const std::map<std::string, Rewrite>& ContribRewrites();

// The quantized ones (contrib_quantized.cc) and Attention / EmbedLayerNormalization
// (contrib_attention.cc), merged into ContribRewrites().
std::map<std::string, Rewrite> QuantizedContribRewrites();
std::map<std::string, Rewrite> AttentionContribRewrites();
std::map<std::string, Rewrite> NBitsContribRewrites();  // contrib_nbits.cc: MatMulNBits
// contrib_gather_quantized.cc: GatherBlockQuantized
std::map<std::string, Rewrite> GatherQuantizedContribRewrites();
// contrib_diffusion.cc: the fusions ORT's optimizer writes for Stable Diffusion on CUDA (GroupNorm,
// SkipGroupNorm, BiasSplitGelu, BiasAdd, NhwcConv) and BiasDropout
std::map<std::string, Rewrite> DiffusionContribRewrites();

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_CONTRIB_OPS_H_
