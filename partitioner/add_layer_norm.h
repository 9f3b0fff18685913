// The residual Add of a post-LN transformer block, LayerNormalization(x + sublayer(x)), where only
// the norm reads the sum: the cover makes the two one Kernel step (the GPU adds and normalises in
// one pass, kernels/cuda/norm) and keeps the Add out of the producing matmul's graph, whose
// epilogue would read the residual at a higher cost (cuBLASLt and cuDNN both). Shared by the cover
// (which step) and the executor (how it runs).
#ifndef ONNXRUN_PARTITIONER_ADD_LAYER_NORM_H_
#define ONNXRUN_PARTITIONER_ADD_LAYER_NORM_H_

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "partitioner/silu_tail.h"

namespace partitioner {

struct AddLayerNorm {
  ir::NodeId add = -1, norm = -1;
};

// The Add `add` and the LayerNormalization that is the only reader of its sum, when both Add
// operands are computed (not constants), have the sum's float dtype and its dims (equal, or both
// unknown: the executor checks the real dims), and the sum is not a graph output.
std::optional<AddLayerNorm> MatchAddLayerNorm(const ir::Graph& graph, ir::NodeId add, const ValueReaders& readers);

// Whether a step of exactly these nodes is that form (the executor's question).
bool IsAddLayerNormStep(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes);

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_ADD_LAYER_NORM_H_
