// The math family (unary trigonometric/rounding/activation ops, variadic Mean, Hardmax): the
// helpers shared by inference and the CPU kernels (kernels/cpu/math.cc). CastLike never reaches
// the graph: the importer rewrites it into Cast.
#ifndef ONNXRUN_OPS_MATH_H_
#define ONNXRUN_OPS_MATH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace ops {

// Hardmax's rows: `outer` blocks of `n` candidates each, `inner` elements apart. Opset < 13
// coerces the input to 2-D at `axis` (default 1, in [-rank, rank]); later opsets take the max along
// `axis` (default -1, in [-rank, rank)).
struct HardmaxExtents {
  int64_t outer = 1, n = 1, inner = 1;
};
// `axis` normalised against `rank` per the node's opset; an error when out of range.
absl::StatusOr<int64_t> HardmaxAxis(const ir::Node& node, int64_t rank);
absl::StatusOr<HardmaxExtents> HardmaxExtentsOf(const ir::Node& node, const std::vector<int64_t>& dims);

std::vector<OpDef> MathOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_MATH_H_
