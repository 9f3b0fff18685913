// The optimizer ops of domain ai.onnx.preview.training (version 1): Adagrad, Adam and Momentum, one
// update step of n tensors at once. In the IR their op types carry the domain
// ("ai.onnx.preview.training.Adam"; importer::CanonicalOpType), so a default-domain "Adam" stays
// unsupported.
//
// Inputs: R (the learning rate, a float/double scalar), T (the update count, an int64 scalar),
// then runs of n tensors: X_1..X_n, their gradients G_1..G_n, then the optimizer's state runs
// (Adagrad: H, the accumulated squared gradients; Momentum: V, the momentums; Adam: V then H).
// Outputs: X_new_1..X_new_n, then the new states in the input's order. Every tensor of one i has
// X_i's dtype (float or double) and shape; different i may differ.
#ifndef ONNXRUN_OPS_OPTIMIZER_H_
#define ONNXRUN_OPS_OPTIMIZER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "ops/op_def.h"

namespace ops {

inline constexpr std::string_view kAdagradOp = "ai.onnx.preview.training.Adagrad";
inline constexpr std::string_view kAdamOp = "ai.onnx.preview.training.Adam";
inline constexpr std::string_view kMomentumOp = "ai.onnx.preview.training.Momentum";

enum class OptimizerKind { kAdagrad, kAdam, kMomentum };

// The attributes, defaults as in the spec (Momentum's four are required). Unused fields stay 0.
struct OptimizerAttrs {
  OptimizerKind kind = OptimizerKind::kAdagrad;
  double epsilon = 0;                // Adagrad, Adam (default 1e-6)
  double decay_factor = 0;           // Adagrad: r = R / (1 + T * decay_factor)
  double norm_coefficient = 0;       // all: G_regularized = norm_coefficient * X + G
  double norm_coefficient_post = 0;  // Adam: X_final = (1 - norm_coefficient_post) * X_new
  double alpha = 0, beta = 0;        // Adam (defaults 0.9, 0.999), Momentum
  bool nesterov = false;             // Momentum's mode: "nesterov" or "standard"
};
absl::StatusOr<OptimizerAttrs> ParseOptimizerAttrs(const ir::Node& node);

// Runs of n tensors after R and T: X, G and the states (Adagrad 3, Momentum 3, Adam 4).
int OptimizerInputRuns(OptimizerKind kind);

// n, the number of optimized tensors: an error unless there are 2 + runs * n inputs (n >= 1) and
// (runs - 1) * n outputs.
absl::StatusOr<int64_t> OptimizedTensorCount(OptimizerKind kind, size_t num_inputs, size_t num_outputs);

// The scalar inputs of one step.
struct OptimizerStep {
  double rate = 0;    // R
  int64_t count = 0;  // T
};
// R and T read and checked (one value each; T int64).
absl::StatusOr<OptimizerStep> OptimizerStepOf(const ir::Tensor& rate, const ir::Tensor& count);

std::vector<OpDef> OptimizerOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_OPTIMIZER_H_
