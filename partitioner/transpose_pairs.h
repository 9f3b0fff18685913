// TransposePairs: a Transpose of a Transpose becomes one Transpose of the first one's input (the
// perms composed), and a Transpose whose perm is the identity goes: its readers read its input
// (an Identity stays where it writes a graph output). Exporters and the importer's channel-layout
// rewrites leave such pairs between ops that work channels-last (ORT's NHWC contrib ops, tf2onnx's
// NHWC <-> NCHW wrapping): each was a full pass over the activations. The first Transpose of a
// merged pair stays while something else reads it (dead-node removal drops it otherwise).
#ifndef ONNXRUN_PARTITIONER_TRANSPOSE_PAIRS_H_
#define ONNXRUN_PARTITIONER_TRANSPOSE_PAIRS_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class TransposePairs : public Pass {
 public:
  std::string_view name() const override { return "transpose-pairs"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  int merged() const { return merged_; }    // Transposes that read a Transpose's input instead, last Run
  int removed() const { return removed_; }  // identity Transposes bypassed (or made Identity), last Run

 private:
  int merged_ = 0;
  int removed_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_TRANSPOSE_PAIRS_H_
