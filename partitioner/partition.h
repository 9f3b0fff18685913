// The partitioner's entry point: runs the passes on an imported graph, covers it with steps and
// returns the Plan every backend executes. Pass order: constant folding, dead-node removal, BN
// folding, dead-node removal, precision, channel padding (aligned for the final dtype), layout;
// then the cover. A model never
// fails because a fusion is unsupported: if the cover cannot be built, the plan is one Kernel step
// per node and says why.
#ifndef ONNXRUN_PARTITIONER_PARTITION_H_
#define ONNXRUN_PARTITIONER_PARTITION_H_

#include <string>

#include "absl/status/statusor.h"
#include "exec/plan.h"
#include "ir/graph.h"
#include "partitioner/fusion_rules.h"

namespace partitioner {

struct PartitionOptions {
  std::string precision = "fp32";      // fp32 (strict) | tf32 | fp16 (fp16 tensors, fp32 accumulation)
  bool fuse = true;                    // false: passes off, one Kernel step per node (the reference plan)
  bool half_inputs = false;            // fp16 / bf16: float32 inputs become 16-bit (precision.h)
  const FusionRules* rules = nullptr;  // nullptr: Sm90Rules()
};

absl::StatusOr<exec::Plan> Partition(ir::Graph graph, const PartitionOptions& options);

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_PARTITION_H_
