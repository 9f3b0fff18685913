// An activation the CPU executor hands to a Conv to apply in its epilogue (oneDNN's post-op,
// onednn_conv.h) instead of running the activation node as a second pass over the output.
#ifndef ONNXRUN_KERNELS_CPU_FUSED_ACTIVATION_H_
#define ONNXRUN_KERNELS_CPU_FUSED_ACTIVATION_H_

#include <optional>

#include "ir/graph.h"

namespace kernels::cpu {

struct FusedActivation {
  enum class Kind { kRelu, kLeakyRelu, kClip, kSwish };  // kSwish: x * sigmoid(x) (SiLU)
  Kind kind = Kind::kRelu;
  float alpha = 0;  // LeakyRelu's slope, Clip's lower bound
  float beta = 0;   // Clip's upper bound
};

// The activation `node` computes on float32 data, when it is one a Conv can apply in its epilogue:
// Relu, LeakyRelu, and Clip whose bounds are constants (or absent) with min <= max. (kSwish is the
// pair Sigmoid + Mul, found by the executor's planner: runtime/cpu_fusion.h.)
std::optional<FusedActivation> FusableActivation(const ir::Graph& graph, const ir::Node& node);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_FUSED_ACTIVATION_H_
