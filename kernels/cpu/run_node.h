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

class KernelCache;       // kernel_cache.h
struct FusedActivation;  // fused_activation.h

struct RunNodeOptions {
  // An output whose inferred size passes this is a ResourceExhausted error before anything is
  // allocated (the session's ImportLimits::max_tensor_bytes, applied at run time).
  int64_t max_output_bytes = ir::kMaxTensorBytes;
  // Bit i: no one reads input i after this node. Output 0 then takes over the bytes of the first
  // such input that has its dtype and dims and shares them with no other tensor, when the op allows
  // it (kernel_traits.h's MayWriteOverInput).
  uint32_t reusable_inputs = 0;
  // Bit i: input i is a plan constant (KernelContext::constant_inputs); `cache` as there.
  uint32_t constant_inputs = 0;
  KernelCache* cache = nullptr;
  // KernelContext's channels-last fields; `channels_last_output`, when given, is set to whether
  // output 0 was written channels-last.
  uint32_t channels_last_inputs = 0;
  bool channels_last_output_ok = false;
  bool* channels_last_output = nullptr;
  // KernelContext's activation; `activation_applied`, when given, is set to whether it was.
  const FusedActivation* activation = nullptr;
  bool* activation_applied = nullptr;
};

// `inputs` one per node input (nullptr for an absent optional input). Outputs in node output order
// (an invalid Tensor for an absent optional output). Errors name the node.
absl::StatusOr<std::vector<ir::Tensor>> RunNode(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                                                const RunNodeOptions& options = {});

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_RUN_NODE_H_
