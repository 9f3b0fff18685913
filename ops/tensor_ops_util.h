// Inference helpers shared by the tensor (shape and data movement) family's files.
#ifndef ONNXRUN_OPS_TENSOR_OPS_UTIL_H_
#define ONNXRUN_OPS_TENSOR_OPS_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/op_def.h"

namespace ops::tensor_ops {

absl::Status Invalid(std::string message);
// The int64 values of input i when it is a known constant; nullopt otherwise.
std::optional<std::vector<int64_t>> IntsInput(const InferContext& ctx, size_t i);
// An error unless input i (when present) holds integer indices (int32 or int64).
absl::Status ExpectIndexInput(const InferContext& ctx, size_t i);
// The element count of input i when it is a 1-D tensor of known length up to kMaxShapeLength (a
// shape or axes input: its length is a rank); -1 otherwise, so that a shape input of a billion
// elements leaves the output's rank unknown instead of allocating a billion dims.
inline constexpr int64_t kMaxShapeLength = 64;
int64_t KnownLength(const InferContext& ctx, size_t i);
// One output of `dtype` and `shape`.
std::vector<ir::TensorType> One(ir::DType dtype, std::optional<ir::Shape> shape);
// A shape of `rank` unknown dims.
ir::Shape UnknownShape(int64_t rank);
// Normalizes each axis against rank; an error on out-of-range or repeated axes.
absl::StatusOr<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank);

}  // namespace ops::tensor_ops

#endif  // ONNXRUN_OPS_TENSOR_OPS_UTIL_H_
