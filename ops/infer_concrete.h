// Inference on concrete inputs: the one place that builds an InferContext from known dims (and the
// input values that are known) and turns the op's inferred output types into concrete dims. Used
// by the executors (CPU run, device steps) and the GPU plan lowering alike.
#ifndef ONNXRUN_OPS_INFER_CONCRETE_H_
#define ONNXRUN_OPS_INFER_CONCRETE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace ops {

// One input of a node: absent (an omitted optional input), or its dtype and concrete dims, with
// its value when known (a constant, or a host tensor being run).
struct ConcreteInput {
  bool present = false;
  ir::DType dtype = ir::DType::kUndefined;
  std::vector<int64_t> dims;
  const ir::Tensor* value = nullptr;
  ir::ValueKind kind = ir::ValueKind::kTensor;  // a sequence, or
  bool optional = false;                        // an empty optional (a present one is its element)
  ir::DType map_key = ir::DType::kUndefined;    // a map's (or a sequence of maps') key dtype

  static ConcreteInput Absent() { return {}; }
  static ConcreteInput Of(ir::DType dtype, std::vector<int64_t> dims, const ir::Tensor* value = nullptr) {
    return {true, dtype, std::move(dims), value};
  }
  // The tensor's dtype, dims and value; Absent() for nullptr.
  static ConcreteInput OfTensor(const ir::Tensor* tensor);
};

// One output: its dtype and dims; dims is nullopt when the output is absent from the node or its
// shape depends on data inference does not evaluate (NonZero of a non-constant input, ...).
struct ConcreteOutput {
  ir::DType dtype = ir::DType::kUndefined;
  std::optional<std::vector<int64_t>> dims;
};

// Runs the op's inference function on `inputs` (one per node input). Errors: the op has no
// inference function (NotFound), or what inference reports (without the node's name).
absl::StatusOr<std::vector<ConcreteOutput>> InferConcrete(const ir::Node& node,
                                                          const std::vector<ConcreteInput>& inputs);

}  // namespace ops

#endif  // ONNXRUN_OPS_INFER_CONCRETE_H_
