// Which activation nodes the CPU executor folds into the Conv before them: oneDNN applies the
// activation in the convolution's epilogue (kernels/cpu/fused_activation.h), saving a pass over
// the output (mobilenet_v2's 35 Clips, resnet50's 33 Relus). A pair qualifies when the activation
// follows the Conv within one plan step and is the only reader of the Conv's output, which is
// neither a graph output nor a step output (so no one observes it). SiLU as exporters write it —
// Sigmoid(c) then Mul(c, that), the two nodes after the Conv, the Conv's only readers, the Sigmoid's
// output read by the Mul alone — folds as oneDNN's swish (EfficientNet's 49 of them).
#ifndef ONNXRUN_RUNTIME_CPU_FUSION_H_
#define ONNXRUN_RUNTIME_CPU_FUSION_H_

#include <optional>
#include <vector>

#include "exec/plan.h"
#include "kernels/cpu/fused_activation.h"

namespace exec {

struct ConvActivation {
  ir::NodeId node = -1;  // the activation node (SiLU: the Mul), whose output the Conv then writes
  int nodes = 1;         // the step's nodes after the Conv the activation covers (SiLU: 2)
  kernels::cpu::FusedActivation activation;
};

// Indexed by NodeId: set on each Conv whose next node it may apply.
std::vector<std::optional<ConvActivation>> PlanConvActivations(const Plan& plan);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CPU_FUSION_H_
