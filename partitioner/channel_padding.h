// ChannelPadding: zero-pads the input channels C of dense 2-D convolutions up to an alignment
// cuDNN's NHWC kernels like (the partitioner asks for 4 channels: 16 bytes fp32, 8 bytes fp16). For a Conv with
// group == 1, a 4-D input whose C is known and not a multiple of the alignment, and a constant
// 4-D W, it inserts Pad(X, channel axis only, zeros) before the Conv and replaces W by a copy
// zero-padded along C. Exact: the extra channels are zero in both X and W. Grouped and depthwise
// convs are never padded (padding C would change the grouping). Convs that read the same X share
// one Pad.
#ifndef ONNXRUN_PARTITIONER_CHANNEL_PADDING_H_
#define ONNXRUN_PARTITIONER_CHANNEL_PADDING_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class ChannelPadding : public Pass {
 public:
  // `alignment_bytes`: C * element size is padded to a multiple of this (must be > 0).
  explicit ChannelPadding(int64_t alignment_bytes = 16) : alignment_bytes_(alignment_bytes) {}

  std::string_view name() const override { return "channel-padding"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  // Convs whose input channels were padded by the last Run.
  int padded() const { return padded_; }

 private:
  int64_t alignment_bytes_;
  int padded_ = 0;
};

// A constant zero Pad of a 4-D value at the end of axis 1 only (what ChannelPadding inserts).
bool IsChannelZeroPad(const ir::Graph& graph, const ir::Node& node);

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_CHANNEL_PADDING_H_
