// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12 and 13): their attributes, parsed
// once for inference and the CPU kernel, and the loss's layout. Both are pure functions of their
// inputs (ONNX files them under training, but evaluating a loss is inference): for input [N, C, d...]
// and target [N, d...], loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]] (0 where the
// target is ignore_index), then reduced by `reduction`; SoftmaxCrossEntropyLoss applies LogSoftmax
// over C first and can return it as a second output.
#ifndef ONNXRUN_OPS_LOSS_H_
#define ONNXRUN_OPS_LOSS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace ops {

enum class LossReduction { kNone, kSum, kMean };

struct LossAttrs {
  LossReduction reduction = LossReduction::kMean;
  std::optional<int64_t> ignore_index;
};

// The attributes; an error for a reduction other than "none", "sum" or "mean".
absl::StatusOr<LossAttrs> ParseLossAttrs(const ir::Node& node);

// Input dims [N, C, d1..dk] as N × C × D (D = d1·…·dk, 1 for rank 2).
struct LossExtents {
  int64_t batch = 1, classes = 1, spatial = 1;
};
// An error unless the input has rank ≥ 2 and the target's dims are the input's without C.
absl::StatusOr<LossExtents> LossExtentsOf(const std::vector<int64_t>& input_dims,
                                          const std::vector<int64_t>& target_dims);

std::vector<OpDef> LossOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_LOSS_H_
