// Dropout: its `seed` attribute and its ratio and training_mode inputs, read once for inference, the
// partitioner and the CPU kernel, and its type/shape inference.
//
// Inference form (training_mode absent or false, or ratio 0): output = data, mask all true.
// Training form (opset 12+, training_mode true and ratio > 0): per element a uniform draw u in
// [0, 1), mask = u >= ratio, output = data * mask / (1 - ratio). The draws are numpy's, as in ONNX's
// reference (np.random.seed(seed); np.random.uniform(0, 1, data.shape)), so a node with `seed`
// gives the same mask on every run; without it every run draws a fresh mask.
#ifndef ONNXRUN_OPS_DROPOUT_H_
#define ONNXRUN_OPS_DROPOUT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "ops/op_def.h"

namespace ops {

struct DropoutAttrs {
  // numpy's seed (np.random.seed takes 0 to 2^32-1; a seed outside that range keeps its low 32
  // bits); nullopt when the node has none (the kernel then seeds from std::random_device).
  std::optional<uint32_t> seed;
};
absl::StatusOr<DropoutAttrs> ParseDropoutAttrs(const ir::Node& node);

// The drop probability: the ratio input's one value, 0.5 when it is absent; an error unless it
// is in [0, 1).
absl::StatusOr<double> DropoutRatio(const ir::Tensor* ratio);

// Whether a run with these inputs (nullptr when absent) drops elements: training_mode true and
// ratio > 0. An error for a training_mode or ratio that is not one value, or a ratio outside [0, 1)
// in training mode.
absl::StatusOr<bool> DropoutTrains(const ir::Tensor* ratio, const ir::Tensor* training_mode);

// Decided before running, from the graph's constants: true when the node is certainly the
// identity on data (training_mode absent or a constant false, or ratio a constant 0). A
// training_mode computed at run time or fed by the caller gives false: the node must run.
bool DropoutIsIdentity(const ir::Graph& graph, const ir::Node& node);

// True when the node may draw a mask no run can reproduce: not certainly the identity, and no
// `seed`. Such a node is never evaluated ahead of time (constant folding).
bool DropoutDrawsUnseeded(const ir::Graph& graph, const ir::Node& node);

std::vector<OpDef> DropoutOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_DROPOUT_H_
