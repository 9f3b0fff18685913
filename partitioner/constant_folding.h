// ConstantFolding: evaluates, with the CPU reference kernels, every node whose inputs are all
// constants (and every Shape whose requested dims are statically known), turns its outputs into
// constants and removes the node. Nodes are visited in order, so whole chains fold in one Run
// (e.g. Shape -> Gather -> Unsqueeze -> Concat -> Reshape's shape input once shapes are known).
// Types are re-inferred afterwards, so readers of a folded value see it as a known constant.
#ifndef ONNXRUN_PARTITIONER_CONSTANT_FOLDING_H_
#define ONNXRUN_PARTITIONER_CONSTANT_FOLDING_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class ConstantFolding : public Pass {
 public:
  // A node is left alone when any of its outputs would have more than `max_output_elements`
  // elements (folding it would bloat the constants) or when its kernel fails on the constants
  // (the failure then surfaces, with the node's name, when the graph runs), and a node that draws
  // fresh random values on every run (a training-mode Dropout without a seed) is never folded.
  explicit ConstantFolding(int64_t max_output_elements = int64_t{1} << 20)
      : max_output_elements_(max_output_elements) {}

  std::string_view name() const override { return "constant-folding"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  // Nodes folded by the last Run.
  int folded() const { return folded_; }

 private:
  int64_t max_output_elements_;
  int folded_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_CONSTANT_FOLDING_H_
