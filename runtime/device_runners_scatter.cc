// Device runners for the index-tuple and element scatter ops: GatherND, ScatterND and
// ScatterElements (reduction none, or add of float32 / float16 / int32 / int64), on
// kernels/cuda/scatter.h over dense copies of their inputs. Semantics follow
// kernels/cpu/tensor_scatter.cc; a form the CPU kernel reports as an error (a constant index out of
// range, mismatched shapes) is left to the host so that it reports it.
#include <optional>
#include <vector>

#include "kernels/cuda/scatter.h"
#include "ops/tensor_scatter_attrs.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

using ir::DType;
using kernels::cuda::ScatterAdd;

// The kernels' add for the node's reduction over `data`, or nullopt for a form left to the host.
std::optional<ScatterAdd> AddOf(const ir::Node& n, DType data) {
  absl::StatusOr<ops::ScatterReduction> r = ops::ParseScatterReduction(n.attrs);
  if (!r.ok()) return std::nullopt;
  if (*r == ops::ScatterReduction::kNone) return ScatterAdd::kNone;
  if (*r != ops::ScatterReduction::kAdd) return std::nullopt;
  switch (data) {
    case DType::kFloat32: return ScatterAdd::kFloat32;
    case DType::kFloat16: return ScatterAdd::kFloat16;
    case DType::kInt32: return ScatterAdd::kInt32;
    case DType::kInt64: return ScatterAdd::kInt64;
    default: return std::nullopt;
  }
}

// Dense (row-major) copies of every present input.
absl::StatusOr<std::vector<DeviceTensor>> DenseInputs(const Call& c) {
  std::vector<DeviceTensor> dense;
  for (const DeviceTensor& t : c.inputs) {
    absl::StatusOr<DeviceTensor> d = ToLayout(t, false, c.stream);
    if (!d.ok()) return d.status();
    dense.push_back(*std::move(d));
  }
  return dense;
}

// Whether every constant index tuple of input 1 lies in [-dims[t], dims[t]) (no constant: true).
bool ConstantTuplesInRange(const Call& c, const kernels::cuda::TupleShape& shape) {
  const ir::Tensor* constant = c.constant(1);
  if (constant == nullptr || shape.tuple_len == 0) return true;
  const std::vector<int64_t> values = constant->ToInt64Vector();
  for (size_t v = 0; v < values.size(); ++v) {
    const int64_t dim = shape.dims[v % shape.tuple_len];
    if (values[v] < -dim || values[v] >= dim) return false;
  }
  return true;
}

// Index tuples (the last dim of `indices`) into `data` after `batch` batch dims; nullopt for a
// form the host reports.
std::optional<kernels::cuda::TupleShape> TuplesOf(const DeviceTensor& data, const DeviceTensor& indices,
                                                  int64_t batch) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  if (indices.dims.empty()) return std::nullopt;
  const int64_t m = indices.dims.back();
  if (m < 0 || batch + m > rank) return std::nullopt;
  for (int64_t d = 0; d < batch; ++d) {
    if (data.dims[d] != indices.dims[d]) return std::nullopt;
  }
  const std::vector<int64_t> strides = DenseStrides(data.dims);
  kernels::cuda::TupleShape s;
  s.tuples = Product(indices.dims, 0, indices.dims.size() - 1);
  s.tuple_len = static_cast<int>(m);
  const int64_t batches = Product(data.dims, 0, batch);
  s.tuples_per_batch = batches > 0 && s.tuples / batches > 0 ? s.tuples / batches : 1;
  s.batch_stride = Product(data.dims, batch, rank);
  s.slice = Product(data.dims, batch + m, rank);
  for (int64_t t = 0; t < m; ++t) {
    s.dims[t] = data.dims[batch + t];
    s.strides[t] = strides[batch + t];
  }
  return s;
}

// ---- GatherND ----

bool SupportsGatherND(const ir::Graph& g, const ir::Node& n) {
  return Movable(InputDType(g, n, 0)) && InputDType(g, n, 1) == DType::kInt64;
}

Outputs RunGatherND(const Call& c) {
  absl::StatusOr<std::vector<DeviceTensor>> in = DenseInputs(c);
  if (!in.ok()) return in.status();
  const DeviceTensor &data = (*in)[0], &indices = (*in)[1];
  absl::StatusOr<int64_t> batch = ops::ParseGatherNDBatchDims(c.node.attrs, static_cast<int64_t>(data.dims.size()),
                                                              static_cast<int64_t>(indices.dims.size()));
  if (!batch.ok()) return c.Unsupported(batch.status().message());
  std::optional<kernels::cuda::TupleShape> shape = TuplesOf(data, indices, *batch);
  if (!shape || !ConstantTuplesInRange(c, *shape)) return c.Unsupported("a form the host reports");
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->num_elements() != shape->tuples * shape->slice) return c.Unsupported("inferred output size differs");
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::GatherND(data.data(), static_cast<const int64_t*>(indices.data()),
                                                       out->data(), *shape, ElementBytes(data.dtype), c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

// ---- ScatterND / ScatterElements ----

bool SupportsScatter(const ir::Graph& g, const ir::Node& n, bool int32_indices) {
  const DType data = InputDType(g, n, 0), index = InputDType(g, n, 1);
  return Movable(data) && InputDType(g, n, 2) == data && AddOf(n, data).has_value() &&
         (index == DType::kInt64 || (int32_indices && index == DType::kInt32));
}
bool SupportsScatterND(const ir::Graph& g, const ir::Node& n) { return SupportsScatter(g, n, false); }
bool SupportsScatterElements(const ir::Graph& g, const ir::Node& n) { return SupportsScatter(g, n, true); }

// Output 0 allocated as a copy of `data` (the scatters write into it).
absl::StatusOr<DeviceTensor> CopyOfData(const Call& c, const DeviceTensor& data) {
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dims != data.dims) return c.Unsupported("inferred dims differ from data's");
  if (out->bytes() > 0) {
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(out->data(), data.data(), out->bytes(), cudaMemcpyDeviceToDevice, c.stream));
  }
  return out;
}

Outputs RunScatterND(const Call& c) {
  absl::StatusOr<std::vector<DeviceTensor>> in = DenseInputs(c);
  if (!in.ok()) return in.status();
  const DeviceTensor &data = (*in)[0], &indices = (*in)[1], &updates = (*in)[2];
  std::optional<kernels::cuda::TupleShape> shape = TuplesOf(data, indices, 0);
  if (!shape || !ConstantTuplesInRange(c, *shape)) return c.Unsupported("a form the host reports");
  std::vector<int64_t> expected(indices.dims.begin(), indices.dims.end() - 1);
  expected.insert(expected.end(), data.dims.begin() + shape->tuple_len, data.dims.end());
  if (updates.dims != expected) return c.Unsupported("updates' dims differ from the indices' (the host reports it)");
  absl::StatusOr<DeviceTensor> out = CopyOfData(c, data);
  if (!out.ok()) return out.status();
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::ScatterND(static_cast<const int64_t*>(indices.data()), updates.data(),
                                                        out->data(), *shape, ElementBytes(data.dtype),
                                                        *AddOf(c.node, data.dtype), c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

Outputs RunScatterElements(const Call& c) {
  absl::StatusOr<std::vector<DeviceTensor>> in = DenseInputs(c);
  if (!in.ok()) return in.status();
  const DeviceTensor &data = (*in)[0], &indices = (*in)[1], &updates = (*in)[2];
  if (updates.dims != indices.dims)
    return c.Unsupported("updates' dims differ from the indices' (the host reports it)");
  absl::StatusOr<kernels::cuda::GatherElementsShape> shape = ElementsShapeOf(c, data, indices);
  if (!shape.ok()) return shape.status();
  absl::StatusOr<DeviceTensor> out = CopyOfData(c, data);
  if (!out.ok()) return out.status();
  ONNXRUN_CUDA_RETURN_IF_ERROR(
      kernels::cuda::ScatterElements(indices.data(), indices.dtype == DType::kInt64, updates.data(), out->data(),
                                     *shape, ElementBytes(data.dtype), *AddOf(c.node, data.dtype), c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

}  // namespace

std::vector<DeviceRunnerDef> ScatterRunners() {
  return {
      {"GatherND", SupportsGatherND, RunGatherND},
      {"ScatterND", SupportsScatterND, RunScatterND},
      {"ScatterElements", SupportsScatterElements, RunScatterElements},
  };
}

}  // namespace exec
