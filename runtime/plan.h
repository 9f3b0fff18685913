// exec::Plan: the graph plus an ordered list of steps, each covering one or more nodes, and for each
// step the values whose last reader it is (so executors free them right after it). A Plan is data:
// printable, comparable, independent of any device.
#ifndef ONNXRUN_RUNTIME_PLAN_H_
#define ONNXRUN_RUNTIME_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace exec {

enum class StepKind {
  kKernel,      // own kernel(s), one node after another
  kFusedGraph,  // conv/matmul + pointwise epilogue (one cuDNN operation graph on the GPU)
  kLegacy,      // a legacy cuDNN call
  kAlias,       // no work: output shares the input's bytes
};
const char* StepKindName(StepKind kind);

struct Step {
  StepKind kind = StepKind::kKernel;
  std::vector<ir::NodeId> nodes;     // in execution order
  std::vector<ir::ValueId> inputs;   // values read from outside the step
  std::vector<ir::ValueId> outputs;  // values written that others read
  std::vector<ir::ValueId> release_after;  // values dead once this step has run
};

struct Plan {
  ir::Graph graph;
  std::vector<Step> steps;
};

// One kKernel step per node, in graph order, with inputs, outputs and releases filled in.
absl::StatusOr<Plan> MakeNodePerStepPlan(ir::Graph graph);
// Recomputes every step's release_after from the steps' inputs: a value is released after the
// last step that reads it, unless it is a graph output or a constant.
void ComputeReleases(Plan& plan);
std::string PrintPlan(const Plan& plan);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_PLAN_H_
