// BatchNormFolding: folds an inference BatchNormalization into the Conv or Gemm that feeds it,
// exactly (computed in float64, stored in the weight's dtype):
//   s = scale / sqrt(var + epsilon)
//   Conv: W'[k] = W[k] * s[k]; B' = (B - mean) * s + bias          (any group; B optional)
//   Gemm: column n of op(B) scaled by s[n] (respecting transB); C' = s * beta * C + bias - mean *
//   s,
//         beta' = 1                                                  (C optional)
// It applies when the BN's X is the Conv/Gemm's only output, read by nothing else and not a graph
// output, and the weights (Conv W, B; Gemm B, C) and BN's scale, B, mean and var are constants.
// The BN node disappears and the Conv/Gemm writes the BN's output value; new weights are new
// constant values (weights shared with other nodes are never modified). Any other BN stays.
// The same for a Mul / Add by a constant, a Sub / Div of one, that maps each output channel of a
// Conv on its own (the constant's dims 1 but the channel axis: [K, 1, 1], [1, K, 1, 1], a scalar):
// W'[k] = W[k] * s[k], B' = B * s + t. tf2onnx writes Keras' BatchNormalization after a depthwise
// conv as such a Mul (and Add); old exports add a conv's bias as a separate Add.
#ifndef ONNXRUN_PARTITIONER_BATCH_NORM_FOLDING_H_
#define ONNXRUN_PARTITIONER_BATCH_NORM_FOLDING_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class BatchNormFolding : public Pass {
 public:
  BatchNormFolding() = default;

  std::string_view name() const override { return "batch-norm-folding"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  // BatchNormalization nodes folded by the last Run.
  int folded() const { return folded_; }
  // Per-channel Mul / Add / Sub / Div nodes folded into Convs by the last Run.
  int pointwise_folded() const { return pointwise_folded_; }

 private:
  int folded_ = 0;
  int pointwise_folded_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_BATCH_NORM_FOLDING_H_
