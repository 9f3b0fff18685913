// Inference helpers of the tensor family (see tensor_ops_util.h).
#include "ops/tensor_ops_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/infer_util.h"

namespace ops::tensor_ops {

using ir::Shape;
using ir::TensorType;
using Types = std::vector<TensorType>;

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

std::optional<std::vector<int64_t>> IntsInput(const InferContext& ctx, size_t i) {
  const ir::Tensor* t = ctx.value(i);
  if (t == nullptr) return std::nullopt;
  return t->ToInt64Vector();
}

absl::Status ExpectIndexInput(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  return ExpectDType(ctx, i, {ir::DType::kInt64, ir::DType::kInt32});
}

int64_t KnownLength(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return -1;
  const std::optional<Shape>& s = ctx.type(i).shape;
  if (!s || s->size() != 1 || !(*s)[0].known() || (*s)[0].value > kMaxShapeLength) return -1;
  return (*s)[0].value;
}

Types One(ir::DType dtype, std::optional<Shape> shape) { return Types{TensorType{dtype, std::move(shape)}}; }

Shape UnknownShape(int64_t rank) { return Shape(static_cast<size_t>(rank)); }

absl::StatusOr<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    absl::StatusOr<int64_t> n = NormalizeAxis(a, rank);
    if (!n.ok()) return n.status();
    if (std::find(out.begin(), out.end(), *n) != out.end()) {
      return Invalid(absl::StrCat("axis ", a, " is repeated in [", absl::StrJoin(axes, ","), "]"));
    }
    out.push_back(*n);
  }
  return out;
}

}  // namespace ops::tensor_ops
