// Runs one node with its reference kernel: output shapes from the op's inference on the concrete
// inputs (ops::InferConcrete), outputs allocated, the kernel run. The one-node CPU path shared by
// the CPU executor, the GPU backend's host steps and the control-flow interpreter (bodies).
#ifndef ONNXRUN_KERNELS_CPU_RUN_NODE_H_
#define ONNXRUN_KERNELS_CPU_RUN_NODE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace kernels::cpu {

// `inputs` one per node input (nullptr for an absent optional input). Outputs in node output order
// (an invalid Tensor for an absent optional output). Errors name the node. An output whose
// inferred size passes `max_output_bytes` is a ResourceExhausted error before anything is
// allocated (the session's ImportLimits::max_tensor_bytes, applied at run time).
absl::StatusOr<std::vector<ir::Tensor>> RunNode(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                                                int64_t max_output_bytes = ir::kMaxTensorBytes);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_RUN_NODE_H_
