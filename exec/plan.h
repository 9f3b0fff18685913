// exec::Plan: the graph plus an ordered list of steps, each covering one or more nodes, and for each
// step the values whose last reader it is (so executors free them right after it). A Plan is data:
// printable, comparable, independent of any device.
#ifndef ONNXRUN_EXEC_PLAN_H_
#define ONNXRUN_EXEC_PLAN_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"

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
  std::vector<ir::NodeId> nodes;           // in execution order
  std::vector<ir::ValueId> inputs;         // values read from outside the step
  std::vector<ir::ValueId> outputs;        // values written that others read
  std::vector<ir::ValueId> release_after;  // values dead once this step has run
  std::string pattern;                     // e.g. "Conv+Add+Relu": the op types it covers, for people
  std::vector<std::string> reasons;        // why it is not (more) fused: "rule: detail", one per stop
};

// Counters the passes report, shown by --explain.
struct PassStats {
  int bns_folded = 0;
  int constants_folded = 0;
  int nodes_removed = 0;
  int channels_padded = 0;     // convs whose input channels were zero-padded for alignment
  int attention_fused = 0;     // attention patterns rewritten to one Attention node
  int patch_convs = 0;         // patch-embedding convs rewritten as matmuls (partitioner/patch_conv.h)
  int einsums_lowered = 0;     // Einsums rewritten as MatMul chains (partitioner/einsum_lowering.h)
  int pointwise_folded = 0;    // per-channel constant Mul/Add/Sub/Div folded into convs (batch_norm_folding.h)
  int pads_folded = 0;         // zero Pads folded into the pads of the conv reading them (pad_folding.h)
  int transposes_merged = 0;   // Transposes of Transposes merged or identity ones dropped (transpose_pairs.h)
  std::string precision_note;  // why a requested fp16 left the graph in float32 ("" when it did not)
  std::vector<std::pair<std::string, double>> pass_seconds;  // each pass's run time, in order (+ "cover")
};

struct Plan {
  ir::Graph graph;
  std::vector<Step> steps;
  std::string precision = "fp32";  // fp32 | tf32 | fp16
  PassStats stats;
};

// Called by executors that support it after each step, for each value the step produced, with the
// value in logical order on the host (for --check: the first step where two backends diverge).
using ValueObserver = std::function<void(size_t step_index, ir::ValueId value, const ir::Tensor& tensor)>;

// One kKernel step per node, in graph order, with inputs, outputs and releases filled in.
absl::StatusOr<Plan> MakeNodePerStepPlan(ir::Graph graph);
// Recomputes every step's release_after from the steps' inputs: a value is released after the
// last step that reads it, unless it is a graph output or a constant.
void ComputeReleases(Plan& plan);
// Per value id, the steps that read it (Step::inputs), in step order.
std::vector<std::vector<size_t>> StepReaders(const Plan& plan);
std::string PrintPlan(const Plan& plan);

}  // namespace exec

#endif  // ONNXRUN_EXEC_PLAN_H_
