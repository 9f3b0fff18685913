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

 private:
  int folded_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_BATCH_NORM_FOLDING_H_
