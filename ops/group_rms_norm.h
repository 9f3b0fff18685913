// GroupNormalization (opsets 18 and 21) and RMSNormalization (opset 23): attributes read once for
// inference and the CPU kernels (kernels/cpu/group_rms_norm.cc), and their type/shape inference.
//
// GroupNormalization(X [N, C, ...], scale, bias): the C channels split into num_groups groups; per
// sample and group, y = (x - mean) / sqrt(var + epsilon) * scale + bias. scale and bias hold one
// value per group at opset 18 and one per channel from opset 21.
// RMSNormalization(X, scale): over the dims from `axis` on, y = x / sqrt(mean(x^2) + epsilon) *
// scale, scale broadcast to those dims; the output has scale's dtype.
#ifndef ONNXRUN_OPS_GROUP_RMS_NORM_H_
#define ONNXRUN_OPS_GROUP_RMS_NORM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace ops {

struct GroupNormAttrs {
  int64_t num_groups = 1;
  double epsilon = 1e-5;
  bool per_channel_affine = true;  // opset 21+: scale/bias of [C]; opset 18-20: [num_groups]
};
// Checks num_groups against `channels` when it is known (> 0).
absl::StatusOr<GroupNormAttrs> ParseGroupNormAttrs(const ir::Node& node, int64_t channels);

struct RmsNormAttrs {
  int64_t axis = 0;  // normalised against the rank
  double epsilon = 1e-5;
};
absl::StatusOr<RmsNormAttrs> ParseRmsNormAttrs(const ir::Node& node, int64_t rank);

std::vector<OpDef> GroupRmsNormOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_GROUP_RMS_NORM_H_
