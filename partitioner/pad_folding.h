// PadFolding: a zero constant Pad of the spatial axes only, read by nothing but a Conv's X, becomes
// that Conv's own padding (added to its pads). tf2onnx writes Keras' ZeroPadding2D before each
// strided conv (MobileNetV2's "block_N_pad" with asymmetric pads) as such a Pad: a full copy of the
// activations, and on the CPU a channels-last value read through an NCHW copy. Not folded: other
// modes or a non-zero value, pads on the batch or channel axis, negative pads, a Conv with SAME
// auto_pad, a Pad read by anything else or written as a graph output.
#ifndef ONNXRUN_PARTITIONER_PAD_FOLDING_H_
#define ONNXRUN_PARTITIONER_PAD_FOLDING_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class PadFolding : public Pass {
 public:
  std::string_view name() const override { return "pad-folding"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  int folded() const { return folded_; }  // Pads folded into Convs, last Run

 private:
  int folded_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_PAD_FOLDING_H_
