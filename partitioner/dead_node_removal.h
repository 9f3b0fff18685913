// DeadNodeRemoval: removes every node none of whose outputs reaches a graph output (directly or
// through other nodes). Values stay in the graph (ids are stable); removed nodes' outputs simply
// have no producer and no reader any more.
#ifndef ONNXRUN_PARTITIONER_DEAD_NODE_REMOVAL_H_
#define ONNXRUN_PARTITIONER_DEAD_NODE_REMOVAL_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class DeadNodeRemoval : public Pass {
 public:
  DeadNodeRemoval() = default;

  std::string_view name() const override { return "dead-node-removal"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  // Nodes removed by the last Run.
  int removed() const { return removed_; }

 private:
  int removed_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_DEAD_NODE_REMOVAL_H_
