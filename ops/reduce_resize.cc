// The reduce_resize op family's definitions and inference: the Reduce* ops (Mean, Sum, Max, Min,
// Prod, L1, L2, LogSum, LogSumExp, SumSquare), ArgMax, ArgMin, Softmax, LogSoftmax (here) and
// Resize (ops/reduce_resize_resize.cc).
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
#include "ops/reduce_attrs.h"
#include "ops/reduce_resize_resize.h"

namespace ops {
namespace {

using ir::DType;

// The reduced axes as given by the (optional) axes input: nullopt when the input is present but its
// value is unknown; an empty vector when absent or empty.
absl::StatusOr<std::optional<std::vector<int64_t>>> ReadAxes(const InferContext& ctx) {
  if (!ctx.has_input(1)) return std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
  const DType dtype = ctx.type(1).dtype;
  if (dtype != DType::kInt64 && dtype != DType::kInt32) {
    return absl::InvalidArgumentError(absl::StrCat("axes must be int64, got ", ir::DTypeName(dtype)));
  }
  if (ctx.type(1).rank() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("axes must be 1-D, got rank ", ctx.type(1).rank()));
  }
  const ir::Tensor* value = ctx.value(1);
  if (value == nullptr) {
    // A known empty shape still tells us the axes are empty.
    if (ctx.type(1).shape && ctx.type(1).rank() == 1 && (*ctx.type(1).shape)[0].known() &&
        (*ctx.type(1).shape)[0].value == 0) {
      return std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
    }
    return std::optional<std::vector<int64_t>>();
  }
  return std::optional<std::vector<int64_t>>(value->ToInt64Vector());
}

// Axes normalised to [0, rank), checked for duplicates; a per-axis "reduced" mask.
absl::StatusOr<std::vector<bool>> ReducedMask(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<bool> mask(rank, false);
  for (int64_t axis : axes) {
    absl::StatusOr<int64_t> a = NormalizeAxis(axis, rank);
    if (!a.ok()) return a.status();
    if (mask[*a]) return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " repeated"));
    mask[*a] = true;
  }
  return mask;
}

// ReduceMax and ReduceMin take bool from opset 20 (false < true).
bool TakesBool(const ir::Node& node) {
  return node.opset >= 20 && (node.op_type == "ReduceMax" || node.op_type == "ReduceMin");
}

absl::StatusOr<std::vector<ir::TensorType>> InferReduce(const InferContext& ctx) {
  if (!(TakesBool(ctx.node) && ctx.has_input(0) && ctx.type(0).dtype == DType::kBool)) {
    absl::Status st = ExpectDType(ctx, 0,
                                  {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt32,
                                   DType::kInt64, DType::kInt8, DType::kUint8});
    if (!st.ok()) return st;
  }
  const bool keepdims = ctx.attrs().GetInt("keepdims", 1) != 0;
  const bool noop = ctx.attrs().GetInt("noop_with_empty_axes", 0) != 0;
  absl::StatusOr<std::optional<std::vector<int64_t>>> axes = ReadAxes(ctx);
  if (!axes.ok()) return axes.status();

  const ir::TensorType& in = ctx.type(0);
  ir::TensorType out{in.dtype, std::nullopt};
  if (!in.shape) return std::vector<ir::TensorType>(ctx.num_outputs(), out);
  const int64_t rank = in.rank();
  if (!axes->has_value()) {
    // Unknown axes: the rank survives only with keepdims.
    if (keepdims) out.shape = ir::Shape(rank);
    return std::vector<ir::TensorType>(ctx.num_outputs(), out);
  }
  if ((*axes)->empty() && noop) return std::vector<ir::TensorType>(ctx.num_outputs(), in);

  std::vector<bool> mask(rank, true);
  if (!(*axes)->empty()) {
    absl::StatusOr<std::vector<bool>> m = ReducedMask(**axes, rank);
    if (!m.ok()) return m.status();
    mask = *m;
  }
  out.shape = ir::Shape();
  for (int64_t i = 0; i < rank; ++i) {
    if (!mask[i]) {
      out.shape->push_back((*in.shape)[i]);
    } else if (keepdims) {
      out.shape->push_back(ir::Dim(1));
    }
  }
  return std::vector<ir::TensorType>(ctx.num_outputs(), out);
}

// ArgMax, ArgMin: int64 indices along `axis`, kept as a dim of 1 with keepdims.
absl::StatusOr<std::vector<ir::TensorType>> InferArgReduce(const InferContext& ctx) {
  absl::Status st = ExpectDType(ctx, 0,
                                {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt32,
                                 DType::kInt64, DType::kInt8, DType::kUint8});
  if (!st.ok()) return st;
  const ir::TensorType& in = ctx.type(0);
  ir::TensorType out{DType::kInt64, std::nullopt};
  if (!in.shape) return std::vector<ir::TensorType>{out};
  absl::StatusOr<ArgReduceAttrs> attrs = ParseArgReduceAttrs(ctx.node, in.rank());
  if (!attrs.ok()) return attrs.status();
  out.shape = ir::Shape();
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (i != attrs->axis) {
      out.shape->push_back((*in.shape)[i]);
    } else if (attrs->keepdims) {
      out.shape->push_back(ir::Dim(1));
    }
  }
  return std::vector<ir::TensorType>{out};
}

absl::StatusOr<std::vector<ir::TensorType>> InferSoftmax(const InferContext& ctx) {
  absl::Status st = ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
  if (!st.ok()) return st;
  const ir::TensorType& in = ctx.type(0);
  if (in.shape) {
    const int64_t rank = in.rank();
    if (ctx.node.opset < 13) {
      // Coerced to 2-D at axis: axis == rank is allowed (the trailing block is empty).
      const int64_t axis = ctx.attrs().GetInt("axis", 1);
      if (axis < -rank || axis > rank) {
        return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " out of range for rank ", rank));
      }
    } else {
      absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", -1), rank);
      if (!axis.ok()) return axis.status();
    }
  }
  return SameAsInput0(ctx);
}

}  // namespace

absl::StatusOr<ArgReduceAttrs> ParseArgReduceAttrs(const ir::Node& node, int64_t rank) {
  ArgReduceAttrs attrs;
  absl::StatusOr<int64_t> axis = NormalizeAxis(node.attrs.GetInt("axis", 0), rank);
  if (!axis.ok()) return axis.status();
  attrs.axis = *axis;
  const int64_t keepdims = node.attrs.GetInt("keepdims", 1);
  const int64_t last = node.attrs.GetInt("select_last_index", 0);
  if ((keepdims != 0 && keepdims != 1) || (last != 0 && last != 1)) {
    return absl::InvalidArgumentError("keepdims and select_last_index must be 0 or 1");
  }
  attrs.keepdims = keepdims == 1;
  attrs.select_last_index = last == 1;
  return attrs;
}

std::vector<OpDef> ReduceResizeOpDefs() {
  return {
      {"ReduceMean", 1, 2, InferReduce},      {"ReduceSum", 1, 2, InferReduce},
      {"ReduceMax", 1, 2, InferReduce},       {"ReduceMin", 1, 2, InferReduce},
      {"ReduceProd", 1, 2, InferReduce},      {"ReduceL1", 1, 2, InferReduce},
      {"ReduceL2", 1, 2, InferReduce},        {"ReduceLogSum", 1, 2, InferReduce},
      {"ReduceLogSumExp", 1, 2, InferReduce}, {"ReduceSumSquare", 1, 2, InferReduce},
      {"ArgMax", 1, 1, InferArgReduce},       {"ArgMin", 1, 1, InferArgReduce},
      {"Softmax", 1, 1, InferSoftmax},        {"LogSoftmax", 1, 1, InferSoftmax},
      {"Resize", 1, 4, InferResize},
  };
}

}  // namespace ops
