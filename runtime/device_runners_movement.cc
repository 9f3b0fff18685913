// Device runners for data movement: Transpose, Slice, Gather, Expand, Tile, Where.
// that turns the concrete input dims and the node's attributes and constant inputs into kernel
// parameters. Output dims always come from the op's own inference.
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/gather.h"
#include "kernels/cuda/tile.h"
#include "kernels/cuda/where.h"
#include "ops/infer_concrete.h"
#include "ops/infer_util.h"
#include "ops/op_def.h"
#include "ops/tensor_ops_slice.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

using ir::DType;
using kernels::cuda::FloatType;
using kernels::cuda::kMaxRank;

// ---- Data movement: Transpose, Slice, Gather, Expand, Tile, Where ---------------------------------

bool SupportsMove(const ir::Graph& g, const ir::Node& n) { return Movable(InputDType(g, n, 0)); }

Outputs RunTranspose(const Call& c) {
  const DeviceTensor& x = c.in(0);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  absl::StatusOr<std::vector<int64_t>> perm = ops::ResolvePermutation(c.node.attrs, rank);
  if (!perm.ok()) return c.Unsupported(perm.status().message());
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  const std::vector<int64_t> s = x.strides();
  std::vector<int64_t> dims(rank), strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    dims[i] = x.dims[(*perm)[i]];
    strides[i] = s[(*perm)[i]];
  }
  if (dims != out->dims) return c.Unsupported("inferred dims differ from the permutation's");
  if (absl::Status st = CopyView(x.data(), dims, strides, *out, c.stream); !st.ok()) return st;
  return std::vector<DeviceTensor>{*std::move(out)};
}

bool SupportsSlice(const ir::Graph& g, const ir::Node& n) {
  for (size_t i = 1; i < 5; ++i) {
    if (!ConstantOrAbsent(g, n, i)) return false;
  }
  return SupportsMove(g, n) && n.input(1) != ir::kNoValue && n.input(2) != ir::kNoValue;
}

Outputs RunSlice(const Call& c) {
  const DeviceTensor& x = c.in(0);
  std::optional<std::vector<int64_t>> v[5];
  for (size_t i = 1; i < 5; ++i) {
    if (c.has(i)) v[i] = c.constant(i)->ToInt64Vector();
  }
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  absl::StatusOr<std::vector<ops::SliceAxis>> plan =
      ops::PlanSlice(rank, *v[1], *v[2], v[3] ? &*v[3] : nullptr, v[4] ? &*v[4] : nullptr);
  if (!plan.ok()) return c.Unsupported(plan.status().message());
  std::vector<int64_t> dims = x.dims, strides = x.strides();
  int64_t offset = 0;
  for (const ops::SliceAxis& a : *plan) {
    const ops::SliceRange r = ops::SliceAxisSize(a, x.dims[a.axis]);
    dims[a.axis] = r.count;
    offset += r.start * strides[a.axis];
    strides[a.axis] = r.count > 1 ? strides[a.axis] * a.step : 0;  // |step| < dim when count > 1
  }
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (dims != out->dims) return c.Unsupported("inferred dims differ from the slice's");
  if (out->num_elements() > 0) {
    const char* src = static_cast<const char*>(x.data()) + offset * ElementBytes(x.dtype);
    if (absl::Status st = CopyView(src, dims, strides, *out, c.stream); !st.ok()) return st;
  }
  return std::vector<DeviceTensor>{*std::move(out)};
}

bool SupportsSplit(const ir::Graph& g, const ir::Node& n) { return SupportsMove(g, n) && ConstantOrAbsent(g, n, 1); }

// Split: output i is the strided view of X from the end of output i-1 along the axis (the sizes
// come from the op's inference on the concrete dims).
Outputs RunSplit(const Call& c) {
  const DeviceTensor& x = c.in(0);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t axis = c.node.attrs.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return c.Unsupported("axis out of range");
  const std::vector<int64_t> strides = x.strides();
  std::vector<DeviceTensor> outs;
  int64_t start = 0;
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    if (!c.outputs[i].present) return c.Unsupported("an output of Split is not read");
    absl::StatusOr<DeviceTensor> out = c.Allocate(i);
    if (!out.ok()) return out.status();
    if (out->dims.size() == x.dims.size() && out->num_elements() > 0) {
      const char* src = static_cast<const char*>(x.data()) + start * strides[axis] * ElementBytes(x.dtype);
      if (absl::Status st = CopyView(src, out->dims, strides, *out, c.stream); !st.ok()) return st;
    }
    start += c.outputs[i].dims[axis];
    outs.push_back(*std::move(out));
  }
  if (start > x.dims[axis]) return c.Unsupported("split sizes past the input");
  return outs;
}

bool SupportsGather(const ir::Graph& g, const ir::Node& n) {
  const DType i = InputDType(g, n, 1);
  return SupportsMove(g, n) && (i == DType::kInt32 || i == DType::kInt64);
}

Outputs RunGather(const Call& c) {
  absl::StatusOr<DeviceTensor> data = ToLayout(c.in(0), false, c.stream);
  if (!data.ok()) return data.status();
  absl::StatusOr<DeviceTensor> indices = ToLayout(c.in(1), false, c.stream);
  if (!indices.ok()) return indices.status();
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  absl::StatusOr<int64_t> axis = ops::NormalizeAxis(c.node.attrs.GetInt("axis", 0), rank);
  if (!axis.ok()) return c.Unsupported(axis.status().message());
  const int64_t dim = data->dims[*axis];
  if (const ir::Tensor* constant = c.constant(1)) {  // checked here, so the host reports bad ones
    for (int64_t i : constant->ToInt64Vector()) {
      if (i < -dim || i >= dim) return c.Unsupported("constant index out of range");
    }
  }
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Gather(
      data->data(), indices->data(), indices->dtype == DType::kInt64, out->data(), Product(data->dims, 0, *axis), dim,
      Product(data->dims, *axis + 1, rank), indices->num_elements(), ElementBytes(data->dtype), c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

bool SupportsExpand(const ir::Graph& g, const ir::Node& n) { return SupportsMove(g, n) && ConstantOrAbsent(g, n, 1); }

Outputs RunExpand(const Call& c) {
  const DeviceTensor& x = c.in(0);
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dims.size() < x.dims.size()) return c.Unsupported("output rank below the input's");
  if (absl::Status st = CopyView(x.data(), out->dims, x.BroadcastStrides(out->dims), *out, c.stream); !st.ok()) {
    return st;
  }
  return std::vector<DeviceTensor>{*std::move(out)};
}

bool SupportsTile(const ir::Graph& g, const ir::Node& n) { return SupportsMove(g, n) && ConstantOrAbsent(g, n, 1); }

Outputs RunTile(const Call& c) {
  const DeviceTensor& x = c.in(0);
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dims.size() != x.dims.size()) return c.Unsupported("output rank differs from the input's");
  kernels::cuda::TileShape shape;
  shape.rank = static_cast<int>(x.dims.size());
  const std::vector<int64_t> s = x.strides();
  for (int d = 0; d < shape.rank; ++d) {
    shape.out_dims[d] = out->dims[d];
    shape.in_dims[d] = x.dims[d];
    shape.in_strides[d] = s[d];
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Tile(x.data(), out->data(), shape, ElementBytes(x.dtype), c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

bool SupportsWhere(const ir::Graph& g, const ir::Node& n) {
  return InputDType(g, n, 0) == DType::kBool && Movable(InputDType(g, n, 1)) &&
         InputDType(g, n, 2) == InputDType(g, n, 1);
}

Outputs RunWhere(const Call& c) {
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  kernels::cuda::WhereShape shape;
  shape.rank = static_cast<int>(out->dims.size());
  for (size_t i = 0; i < 3; ++i) {
    if (c.in(i).dims.size() > out->dims.size()) return c.Unsupported("operand rank above the output's");
  }
  const std::vector<int64_t> sc = c.in(0).BroadcastStrides(out->dims), sx = c.in(1).BroadcastStrides(out->dims),
                             sy = c.in(2).BroadcastStrides(out->dims);
  for (int d = 0; d < shape.rank; ++d) {
    shape.dims[d] = out->dims[d];
    shape.cond_strides[d] = sc[d];
    shape.x_strides[d] = sx[d];
    shape.y_strides[d] = sy[d];
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Where(c.in(0).data(), c.in(1).data(), c.in(2).data(), out->data(), shape,
                                                    ElementBytes(out->dtype), c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

}  // namespace

std::vector<DeviceRunnerDef> MovementRunners() {
  return {
      {"Transpose", SupportsMove, RunTranspose}, {"Slice", SupportsSlice, RunSlice},
      {"Gather", SupportsGather, RunGather},     {"Expand", SupportsExpand, RunExpand},
      {"Tile", SupportsTile, RunTile},           {"Where", SupportsWhere, RunWhere},
      {"Split", SupportsSplit, RunSplit},
  };
}

}  // namespace exec
