// A graph pass: a small object with a name and one Run that rewrites an ir::Graph in place and says
// whether it changed anything. Passes keep the graph valid (Graph::Validate) and every value typed;
// a pass that cannot apply somewhere leaves that part alone (never an error for "not applicable").
#ifndef ONNXRUN_PARTITIONER_PASS_H_
#define ONNXRUN_PARTITIONER_PASS_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace partitioner {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  // Returns true when the graph changed.
  virtual absl::StatusOr<bool> Run(ir::Graph& graph) = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_PASS_H_
