// Det, LpNormalization and MeanVarianceNormalization: attribute parsers shared by inference
// (ops/math_norm.cc) and the CPU kernels (kernels/cpu/math_norm.cc).
#ifndef ONNXRUN_OPS_MATH_NORM_H_
#define ONNXRUN_OPS_MATH_NORM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace ops {

// LpNormalization: x / ||x||_p along `axis` (default -1, normalised), p 1 or 2 (default 2).
struct LpNormalizationAttrs {
  int64_t axis = 0;
  int64_t p = 2;
};
absl::StatusOr<LpNormalizationAttrs> ParseLpNormalizationAttrs(const ir::Node& node, int64_t rank);

// MeanVarianceNormalization: the per-axis mask of `axes` (default [0, 2, 3]) for an input of
// `rank`; an error on an axis out of range or repeated.
absl::StatusOr<std::vector<bool>> MvnAxesMask(const ir::Node& node, int64_t rank);

std::vector<OpDef> MathNormOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_MATH_NORM_H_
