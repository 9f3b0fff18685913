// The squeeze-excite gate folded into the next 1x1 convolution: a Kernel step that is one Mul of a
// map x [N, C, H, W] by a gate s [N, C, 1, 1], read only by the FusedGraph step right after it
// whose conv (1x1 kernel, strides 1, no pads, group 1, constant weights and bias) reads the product,
// optionally followed by a residual Add. Since conv(x * s)[n] = x[n] * (W * s[n])^T, the GPU runs
// such a pair as per-sample scaled weights and one batched matmul (cuda_steps_scaled_conv.cc) and
// skips the full pass over x for the product. No GPU needed to match.
//
// Usage:
//   std::vector<std::optional<ScaledConvForm>> forms = MatchScaledConvs(plan);  // one per step
//   if (forms[s]) ... step s is the conv step; forms[s]->mul_step is the gate's step
#ifndef ONNXRUN_RUNTIME_SCALED_CONV_FORM_H_
#define ONNXRUN_RUNTIME_SCALED_CONV_FORM_H_

#include <optional>
#include <vector>

#include "exec/plan.h"

namespace exec {

struct ScaledConvForm {
  size_t mul_step = 0;                                      // the Kernel step of the Mul
  ir::ValueId x = ir::kNoValue, gate = ir::kNoValue;        // the Mul's operands
  ir::ValueId weights = ir::kNoValue, bias = ir::kNoValue;  // constants; bias may be kNoValue
  ir::ValueId residual = ir::kNoValue;                      // the Add's other operand, or kNoValue
  int64_t channels = 0, out_channels = 0;                   // C and Cout
};

// Per step of `plan`: the form when the step is such a conv step, else nullopt.
std::vector<std::optional<ScaledConvForm>> MatchScaledConvs(const Plan& plan);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_SCALED_CONV_FORM_H_
