// runtime/capture_branches.h: lets the independent steps of a captured run overlap.
//
// A capture on one stream gives a chain: every kernel waits for the one before it, even where two
// steps share no data (resnet50's downsample 1x1 conv and the block's first two convs; the branches
// of an inception block). At batch 1 such steps each fill a few SMs of 132, so running them side by
// side takes their time off the critical path. StepAccessLog watches the capture step by step:
// which graph nodes each step added, and which bytes of the activation arena it read (its inputs'
// blocks) and wrote (its outputs' blocks and every block it allocated: workspaces, temporaries).
// LetIndependentStepsOverlap then replaces the chain's edges between steps by the edges those
// accesses need: a step waits for an earlier one when one writes bytes the other reads or writes
// (read after write, write after read — the arena hands freed bytes to later buffers — and write
// after write). Only steps whose every access the log sees may overlap (self-contained steps: a
// cuDNN graph or its split form reading its inputs and writing its outputs); any other step is a
// barrier: it waits for every step before it, and every step after it waits for it.
//
// Use: StepAccessLog log(&arena_allocator); install it as the allocation hook; per step BeginStep,
//      run it, EndStep; after the last step's capture (output copies included) EndSteps; end the
//      capture; LetIndependentStepsOverlap(graph, log) (before the graph is instantiated).
#ifndef ONNXRUN_RUNTIME_CAPTURE_BRANCHES_H_
#define ONNXRUN_RUNTIME_CAPTURE_BRANCHES_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/capture_order.h"
#include "runtime/device_tensor.h"

namespace exec {

// [begin, end) of device addresses.
struct ByteRange {
  uintptr_t begin = 0, end = 0;
  bool Overlaps(const ByteRange& other) const { return begin < other.end && other.begin < end; }
};

// What one step of the capture did, as the log saw it.
struct StepAccesses {
  bool self_contained = false;  // false: a barrier
  std::vector<ByteRange> reads, writes;
};

class StepAccessLog : public AllocationHook {
 public:
  explicit StepAccessLog(AllocationHook* inner);
  // The inner hook's block, recorded as written by the current step.
  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes, cudaStream_t stream) override;
  // Step `step` is about to be captured; `reads` are its inputs' device pointers (constants left
  // out: nothing in a capture writes them). A step that is not self-contained is a barrier.
  void BeginStep(size_t step, bool self_contained, const std::vector<const void*>& reads);
  // The current step has been captured on `stream`; `writes` are its outputs' device pointers. The
  // nodes the capture gained since the last call belong to it. An output outside the arena's live
  // blocks makes it a barrier (the log cannot see what else it may alias).
  void EndStep(cudaStream_t stream, const std::vector<const void*>& writes);
  // What the capture gained after the last step (the copies into the run's output buffers): one
  // more step, a barrier.
  void EndSteps(cudaStream_t stream);

  // Per step index (the extra last one included), what it accessed; and per node its step.
  const std::vector<StepAccesses>& steps() const { return steps_; }
  const std::unordered_map<cudaGraphNode_t, size_t>& step_of_node() const { return step_of_node_; }
  // False when the capture's nodes could not be listed at some step: nothing may overlap then.
  bool complete() const { return complete_; }

 private:
  struct Live;                               // the live blocks, shared with their deleters
  ByteRange BlockAt(const void* ptr) const;  // the live block holding ptr, or an empty range
  void MarkNodes(cudaStream_t stream, size_t step);

  AllocationHook* inner_;
  std::shared_ptr<Live> live_;
  std::vector<StepAccesses> steps_;
  size_t current_ = 0;
  std::unordered_map<cudaGraphNode_t, size_t> step_of_node_;
  size_t nodes_seen_ = 0;
  bool complete_ = true;
};

// What LetIndependentStepsOverlap did.
struct OverlapSummary {
  int steps = 0;        // steps with nodes
  int overlapping = 0;  // of them, steps that no longer wait for the step captured just before
};

// Rewires `graph` (the capture `log` watched) as the header comment says. Changes nothing and says
// overlapping = 0 when no step may start before the one captured before it ends.
absl::StatusOr<OverlapSummary> LetIndependentStepsOverlap(cudaGraph_t graph, const StepAccessLog& log);

// Instantiates `graph` (the capture `log` watched) as captured and, where some step may overlap,
// rewires it (LetIndependentStepsOverlap) and instantiates it again. The overlapping graph is kept
// only when its replay writes the chain's outputs bit for bit (both replayed from the capture's
// fixed `inputs`, float ones filled with one small value, into its fixed `outputs`) and takes under
// 97% of the chain's time (two rounds of replays in turn on `stream`, the best of each).
// `description` gets the kept graph's nodes and edges and what was found; the chain alone where no
// step may overlap or anything fails (the description says why).
absl::StatusOr<cudaGraphExec_t> InstantiateFaster(cudaGraph_t graph, const StepAccessLog& log,
                                                  const std::vector<DeviceTensor>& inputs,
                                                  const std::vector<DeviceTensor>& outputs, cudaStream_t stream,
                                                  std::string* description);

// Which steps each step must wait for (indices into `steps`, each dependency earlier than its
// step), given what they accessed: the rule above, on steps that all have nodes. Exposed for tests.
std::vector<std::vector<size_t>> StepDependencies(const std::vector<StepAccesses>& steps);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CAPTURE_BRANCHES_H_
