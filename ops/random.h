// The random generator ops: RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike,
// Bernoulli and Multinomial — their attributes, read once for inference and the CPU kernel, their
// type/shape inference, and the rule that keeps an unseeded draw from being evaluated ahead of time.
//
// Draws are numpy's legacy RandomState (kernels/cpu/mt19937.h), as ONNX's reference evaluator makes
// them: with a `seed` every run of the node gives the same values (RandomState(int(seed))), without
// one every run draws afresh. ONNX's spec does not ask implementations to agree on the values, so its
// stored test outputs (one unseeded numpy draw) are compared by shape, dtype and range only
// (tests/conformance/expected_failures.txt).
#ifndef ONNXRUN_OPS_RANDOM_H_
#define ONNXRUN_OPS_RANDOM_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace ops {

struct RandomAttrs {
  // The output dtype: `dtype` when set; else float32 for RandomUniform/RandomNormal, the input's
  // dtype for the *Like ops and Bernoulli, int32 for Multinomial.
  ir::DType dtype = ir::DType::kFloat32;
  double low = 0, high = 1;      // RandomUniform*
  double mean = 0, scale = 1;    // RandomNormal*
  int64_t sample_size = 1;       // Multinomial
  std::vector<int64_t> shape;    // RandomUniform, RandomNormal
  std::optional<uint32_t> seed;  // int(seed) as numpy takes it; nullopt without one
};

// `input_dtype` is the first input's dtype (ignored by the ops without inputs).
absl::StatusOr<RandomAttrs> ParseRandomAttrs(const ir::Node& node, ir::DType input_dtype);

// True for a node that draws fresh random values on every run — a random op without `seed`, or a
// Dropout that may train without one (ops/dropout.h) — so no earlier evaluation can stand for its
// output: constant folding and plan-time shape folding leave such a node to run.
bool DrawsUnseeded(const ir::Graph& graph, const ir::Node& node);

std::vector<OpDef> RandomOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_RANDOM_H_
