// AttentionFusion: the scaled-dot-product attention pattern exporters write, rewritten to one ONNX
// Attention node (opset 23 semantics, ops/attention.h), so that it runs as one step: cuDNN's fused
// attention (SDPA) graph or an own kernel on the GPU, the reference kernel on the CPU.
//
// The pattern, read backwards from the second MatMul:
//   MatMul(Softmax(mask(scale(MatMul(scale(Q), scale(Kt))))), V)
// where
//   - Softmax is over the last axis, and every intermediate value has that one reader;
//   - scale(x) is zero or more Mul/Div by a scalar constant (on Q, on Kt or on the scores; their
//     product becomes Attention's `scale`);
//   - mask(s) is optional: Add(s, M) with a float M (either operand order), or Where(C, s, c) /
//     Where(C, c, s) with a boolean C and a constant c <= -1e30 (e.g. -inf), which becomes the boolean
//     mask C or Not(C); M or C must broadcast to the scores' shape with their full last dim;
//   - Kt is [..., D, L]: K is read back through the Transpose that made Kt (with its last two axes
//     swapped back; none when that is the identity), else Kt gets a new Transpose;
//   - Q, Kt, V are all 4-D [B, H, S, D] or all 3-D [N, S, D] (3-D is viewed as [N, 1, S, D] through
//     Unsqueeze/Squeeze, which are aliases), with equal leading dims (no broadcasting).
// Anything else is left alone.
#ifndef ONNXRUN_PARTITIONER_ATTENTION_FUSION_H_
#define ONNXRUN_PARTITIONER_ATTENTION_FUSION_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class AttentionFusion : public Pass {
 public:
  std::string_view name() const override { return "attention-fusion"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  // Attention nodes made by the last Run.
  int fused() const { return fused_; }

 private:
  int fused_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_ATTENTION_FUSION_H_
