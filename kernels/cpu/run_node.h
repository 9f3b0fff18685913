// Runs one node with its reference kernel: output shapes from the op's inference on the concrete
// inputs (ops::InferConcrete), outputs allocated, the kernel run. The one-node CPU path shared by
// the CPU executor, the GPU backend's host steps and the control-flow interpreter (bodies).
#ifndef ONNXRUN_KERNELS_CPU_RUN_NODE_H_
#define ONNXRUN_KERNELS_CPU_RUN_NODE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace kernels::cpu {

// `inputs` one per node input (nullptr for an absent optional input). Outputs in node output order
// (an invalid Tensor for an absent optional output). Errors name the node. An output whose
// inferred size passes `max_output_bytes` is a ResourceExhausted error before anything is
// allocated (the session's ImportLimits::max_tensor_bytes, applied at run time).
// Bit i of `reusable_inputs` says no one reads input i after this node: output 0 then takes over
// the bytes of the first such input that has its dtype and dims and shares them with no other
// tensor, when the op allows it (kernel_traits.h's MayWriteOverInput).
absl::StatusOr<std::vector<ir::Tensor>> RunNode(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                                                int64_t max_output_bytes = ir::kMaxTensorBytes,
                                                uint32_t reusable_inputs = 0);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_RUN_NODE_H_
