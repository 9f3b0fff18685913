// The step cover: assigns every node of a (pass-processed) graph to exactly one plan step —
// FusedGraph (conv/matmul anchor + the pointwise epilogue region the fusion rules allow), Legacy
// (grouped/depthwise conv with its ReLU/ReLU6, BN left after folding, pools, softmax), Alias
// (reshape-like) or Kernel (everything else) — and orders the steps so each runs after the steps
// that produce its inputs. Every place fusion stops at a pointwise op gets a reason on the step.
#ifndef ONNXRUN_PARTITIONER_COVER_H_
#define ONNXRUN_PARTITIONER_COVER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "exec/plan.h"
#include "ir/graph.h"
#include "partitioner/fusion_rules.h"

namespace partitioner {

// Steps in execution order, with inputs, outputs and pattern filled (release lists are not).
absl::StatusOr<std::vector<exec::Step>> CoverGraph(const ir::Graph& graph, const FusionRules& rules);

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_COVER_H_
