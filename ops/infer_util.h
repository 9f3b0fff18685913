// Helpers shared by the inference functions: broadcasting, axis normalisation, common shapes.
#ifndef ONNXRUN_OPS_INFER_UTIL_H_
#define ONNXRUN_OPS_INFER_UTIL_H_

#include <vector>

#include "absl/status/statusor.h"
#include "ops/op_def.h"

namespace ops {

// Numpy (multidirectional) broadcasting of two shapes; an error when known dims differ and neither is 1.
absl::StatusOr<ir::Shape> BroadcastShapes(const ir::Shape& a, const ir::Shape& b);
// Broadcast of every present input; nullopt shape when any rank is unknown.
absl::StatusOr<std::optional<ir::Shape>> BroadcastInputs(const InferContext& ctx);
// axis in [-rank, rank) -> [0, rank); an error otherwise.
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank);
// Transpose's permutation: the `perm` attribute, or reversed dims when absent; an error unless it
// is a permutation of [0, rank).
absl::StatusOr<std::vector<int64_t>> ResolvePermutation(const ir::Attributes& attrs, int64_t rank);
// Output 0 has input 0's type (for unary ops and activations).
absl::StatusOr<std::vector<ir::TensorType>> SameAsInput0(const InferContext& ctx);
// An error unless `t` (when its shape is known) has rank expected.size() and the known dims of
// `expected`; `name` names the operand in the message.
absl::Status ExpectDims(const ir::TensorType& t, const ir::Shape& expected, const char* name);
// A 0/1 attribute as a bool (`default_value` when absent); an error for any other value.
absl::StatusOr<bool> ParseFlagAttribute(const ir::Node& node, const char* name, bool default_value);
// The value of a Shape node (dims [start, end) as int64, the attributes clamped as the spec says)
// or a Size node (the element count, an int64 scalar) whose input has `dims`.
ir::Tensor ShapeOrSizeOf(const ir::Node& node, const std::vector<int64_t>& dims);
// An error unless the (present) input i holds exactly one element where its shape is known; `what`
// names it in the message.
absl::Status ExpectScalarLike(const InferContext& ctx, size_t i, const char* what);
// An error unless input i is present with one of the given dtypes.
absl::Status ExpectDType(const InferContext& ctx, size_t i, std::initializer_list<ir::DType> allowed);

}  // namespace ops

#endif  // ONNXRUN_OPS_INFER_UTIL_H_
