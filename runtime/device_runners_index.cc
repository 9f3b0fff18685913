// Device runners for index-driven ops and block rearrangements: ArgMax / ArgMin, GatherElements,
// Trilu (kernels/cuda/indexing.h), TopK with a constant K (kernels/cuda/topk.h), and DepthToSpace / SpaceToDepth (one
// strided copy each, the view the CPU kernels copy through, over the input's stored layout). Semantics follow
// kernels/cpu.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/indexing.h"
#include "kernels/cuda/topk.h"
#include "ops/infer_util.h"
#include "ops/reduce_attrs.h"
#include "ops/tensor_scatter_attrs.h"
#include "ops/tensor_select_attrs.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

using ir::DType;

// ---- ArgMax / ArgMin ----

std::optional<kernels::cuda::ArgElement> ArgElementOf(DType d) {
  using kernels::cuda::ArgElement;
  switch (d) {
    case DType::kFloat32: return ArgElement::kFloat32;
    case DType::kFloat16: return ArgElement::kFloat16;
    case DType::kBFloat16: return ArgElement::kBFloat16;
    case DType::kInt8: return ArgElement::kInt8;
    case DType::kUint8: return ArgElement::kUint8;
    case DType::kInt32: return ArgElement::kInt32;
    case DType::kInt64: return ArgElement::kInt64;
    default: return std::nullopt;
  }
}

bool SupportsArg(const ir::Graph& g, const ir::Node& n) { return ArgElementOf(InputDType(g, n, 0)).has_value(); }

Outputs RunArg(const Call& c) {
  absl::StatusOr<DeviceTensor> x = ToLayout(c.in(0), false, c.stream);
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  absl::StatusOr<ops::ArgReduceAttrs> attrs = ops::ParseArgReduceAttrs(c.node, rank);
  if (!attrs.ok()) return c.Unsupported(attrs.status().message());
  const int64_t n = x->dims[attrs->axis];
  if (n == 0) return c.Unsupported("an empty axis (the host reports it)");
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  const int64_t outer = Product(x->dims, 0, attrs->axis), inner = Product(x->dims, attrs->axis + 1, rank);
  if (out->dtype != DType::kInt64 || out->num_elements() != outer * inner) {
    return c.Unsupported("inferred output differs from the reduced shape");
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(
      kernels::cuda::ArgExtreme(*ArgElementOf(x->dtype), x->data(), static_cast<int64_t*>(out->data()), outer, n, inner,
                                c.node.op_type == "ArgMax", attrs->select_last_index, c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

// ---- TopK ----

bool SupportsTopK(const ir::Graph& g, const ir::Node& n) {
  return ArgElementOf(InputDType(g, n, 0)).has_value() && ConstantInput(g, n, 1) != nullptr;
}

// Output i allocated with `dims`, or a scratch tensor when the node drops it.
absl::StatusOr<DeviceTensor> OutputOrScratch(const Call& c, size_t i, DType dtype, const std::vector<int64_t>& dims) {
  if (c.outputs[i].present && (c.outputs[i].dtype != dtype || c.outputs[i].dims != dims)) {
    return c.Unsupported("inferred output differs from the selected shape");
  }
  return DeviceTensor::Allocate(dtype, dims, false, c.stream);
}

Outputs RunTopK(const Call& c) {
  absl::StatusOr<DeviceTensor> x = ToLayout(c.in(0), false, c.stream);
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  absl::StatusOr<ops::TopKAttrs> attrs = ops::ParseTopKAttrs(c.node.attrs, rank);
  absl::StatusOr<int64_t> k = ops::TopKCount(*c.constant(1));
  if (!attrs.ok() || !k.ok() || *k > x->dims[attrs->axis]) return c.Unsupported("a form the host reports");
  kernels::cuda::TopKShape shape;
  shape.outer = Product(x->dims, 0, attrs->axis);
  shape.n = x->dims[attrs->axis];
  shape.inner = Product(x->dims, attrs->axis + 1, rank);
  shape.k = *k;
  shape.largest = attrs->largest;
  const kernels::cuda::ArgElement type = *ArgElementOf(x->dtype);
  const size_t bytes = kernels::cuda::TopKWorkspaceBytes(type, shape);
  if (bytes == 0 && x->num_elements() > 0) return c.Unsupported("more elements than the sort indexes");
  std::vector<int64_t> dims = x->dims;
  dims[attrs->axis] = *k;
  absl::StatusOr<DeviceTensor> values = OutputOrScratch(c, 0, x->dtype, dims);
  if (!values.ok()) return values.status();
  absl::StatusOr<DeviceTensor> indices = OutputOrScratch(c, 1, DType::kInt64, dims);
  if (!indices.ok()) return indices.status();
  absl::StatusOr<DeviceTensor> workspace =
      DeviceTensor::Allocate(DType::kUint8, {static_cast<int64_t>(bytes)}, false, c.stream);
  if (!workspace.ok()) return workspace.status();
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::TopK(type, x->data(), values->data(),
                                                   static_cast<int64_t*>(indices->data()), shape, workspace->data(),
                                                   bytes, c.stream));
  std::vector<DeviceTensor> outs;
  outs.push_back(c.outputs[0].present ? *std::move(values) : DeviceTensor());
  outs.push_back(c.outputs[1].present ? *std::move(indices) : DeviceTensor());
  return outs;
}

// ---- GatherElements ----

bool SupportsGatherElements(const ir::Graph& g, const ir::Node& n) {
  const DType i = InputDType(g, n, 1);
  return Movable(InputDType(g, n, 0)) && (i == DType::kInt32 || i == DType::kInt64);
}

}  // namespace

absl::StatusOr<kernels::cuda::GatherElementsShape> ElementsShapeOf(const Call& c, const DeviceTensor& data,
                                                                   const DeviceTensor& indices) {
  const int rank = static_cast<int>(data.dims.size());
  if (rank < 1 || indices.dims.size() != data.dims.size()) return c.Unsupported("indices' rank differs from data's");
  absl::StatusOr<int64_t> axis = ops::NormalizeAxis(c.node.attrs.GetInt("axis", 0), rank);
  if (!axis.ok()) return c.Unsupported(axis.status().message());
  const int64_t axis_dim = data.dims[*axis];
  for (int d = 0; d < rank; ++d) {
    if (d != *axis && indices.dims[d] > data.dims[d]) return c.Unsupported("an indices dim exceeds data's");
  }
  if (const ir::Tensor* constant = c.constant(1)) {  // checked here, so the host reports bad ones
    for (int64_t i : constant->ToInt64Vector()) {
      if (i < -axis_dim || i >= axis_dim) return c.Unsupported("constant index out of range");
    }
  }
  kernels::cuda::GatherElementsShape shape;
  shape.rank = rank;
  shape.axis = static_cast<int>(*axis);
  shape.axis_dim = axis_dim;
  const std::vector<int64_t> ds = data.strides(), is = indices.strides();
  for (int d = 0; d < rank; ++d) {
    shape.dims[d] = indices.dims[d];
    shape.data_strides[d] = ds[d];
    shape.index_strides[d] = is[d];
  }
  return shape;
}

namespace {

Outputs RunGatherElements(const Call& c) {
  const DeviceTensor &data = c.in(0), &indices = c.in(1);
  absl::StatusOr<kernels::cuda::GatherElementsShape> shape = ElementsShapeOf(c, data, indices);
  if (!shape.ok()) return shape.status();
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dims != indices.dims) return c.Unsupported("inferred dims differ from the indices'");
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::GatherElements(data.data(), indices.data(),
                                                             indices.dtype == DType::kInt64, out->data(), *shape,
                                                             ElementBytes(data.dtype), c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

// ---- Trilu ----

bool SupportsTrilu(const ir::Graph& g, const ir::Node& n) {
  if (!Movable(InputDType(g, n, 0)) || !ConstantOrAbsent(g, n, 1)) return false;
  const ir::Tensor* k = ConstantInput(g, n, 1);
  return k == nullptr || (k->dtype() == DType::kInt64 && k->num_elements() == 1);
}

Outputs RunTrilu(const Call& c) {
  absl::StatusOr<DeviceTensor> x = ToLayout(c.in(0), false, c.stream);
  if (!x.ok()) return x.status();
  const size_t rank = x->dims.size();
  if (rank < 2) return c.Unsupported("rank below 2 (the host reports it)");
  const int64_t rows = x->dims[rank - 2], cols = x->dims[rank - 1];
  const int64_t k = c.has(1) ? std::clamp<int64_t>(c.constant(1)->GetAsInt64(0), -rows - 1, cols + 1) : 0;
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dims != x->dims) return c.Unsupported("inferred dims differ from the input's");
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Trilu(x->data(), out->data(), Product(x->dims, 0, rank - 2), rows, cols,
                                                    k, c.node.attrs.GetInt("upper", 1) != 0, ElementBytes(x->dtype),
                                                    c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

// ---- DepthToSpace / SpaceToDepth ----

// The output of a rearrangement viewed as 6 dims `view`, read from the input through `strides`
// (the input's stored strides combined as the CPU kernel's view does).
Outputs CopyRearranged(const Call& c, const std::vector<int64_t>& view, const std::vector<int64_t>& strides,
                       const std::vector<int64_t>& expected_dims) {
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dims != expected_dims) return c.Unsupported("inferred dims differ from the block rearrangement's");
  if (out->num_elements() > 0) {
    if (absl::Status st = CopyView(c.in(0).data(), view, strides, *out, c.stream); !st.ok()) return st;
  }
  return std::vector<DeviceTensor>{*std::move(out)};
}

Outputs RunDepthToSpace(const Call& c) {
  const DeviceTensor& x = c.in(0);
  const int64_t b = c.node.attrs.GetInt("blocksize", 0);
  const std::string mode = c.node.attrs.GetString("mode", "DCR");
  if (x.dims.size() != 4 || b <= 0 || b > (int64_t{1} << 20) || x.dims[1] % (b * b) != 0 ||
      (mode != "DCR" && mode != "CRD")) {
    return c.Unsupported("a form the host reports");
  }
  const int64_t n = x.dims[0], ch = x.dims[1] / (b * b), h = x.dims[2], w = x.dims[3];
  const std::vector<int64_t> s = x.strides();  // n, c, h, w
  // Output [N, C', H, b, W, b]; DCR reads channel (i * b + j) * C' + c', CRD c' * b * b + i * b + j.
  const std::vector<int64_t> strides = mode == "DCR"
                                           ? std::vector<int64_t>{s[0], s[1], s[2], b * ch * s[1], s[3], ch * s[1]}
                                           : std::vector<int64_t>{s[0], b * b * s[1], s[2], b * s[1], s[3], s[1]};
  return CopyRearranged(c, {n, ch, h, b, w, b}, strides, {n, ch, h * b, w * b});
}

Outputs RunSpaceToDepth(const Call& c) {
  const DeviceTensor& x = c.in(0);
  absl::StatusOr<int64_t> b = ops::ParseSpaceToDepthBlocksize(c.node.attrs);
  const std::string mode = c.node.attrs.GetString("mode", "DCR");
  if (!b.ok() || x.dims.size() != 4 || x.dims[2] % *b != 0 || x.dims[3] % *b != 0 || (mode != "DCR" && mode != "CRD")) {
    return c.Unsupported("a form the host reports");
  }
  const int64_t n = x.dims[0], ch = x.dims[1], h = x.dims[2] / *b, w = x.dims[3] / *b;
  const std::vector<int64_t> s = x.strides();
  // Output [N, b, b, C, H/b, W/b] (DCR) or [N, C, b, b, H/b, W/b] (CRD) reads input (n, c, h' * b + i, w' * b + j).
  const bool crd = mode == "CRD";
  const std::vector<int64_t> view =
      crd ? std::vector<int64_t>{n, ch, *b, *b, h, w} : std::vector<int64_t>{n, *b, *b, ch, h, w};
  const std::vector<int64_t> strides = crd ? std::vector<int64_t>{s[0], s[1], s[2], s[3], *b * s[2], *b * s[3]}
                                           : std::vector<int64_t>{s[0], s[2], s[3], s[1], *b * s[2], *b * s[3]};
  return CopyRearranged(c, view, strides, {n, ch * *b * *b, h, w});
}

bool SupportsMovable(const ir::Graph& g, const ir::Node& n) { return Movable(InputDType(g, n, 0)); }

}  // namespace

std::vector<DeviceRunnerDef> IndexRunners() {
  return {
      {"ArgMax", SupportsArg, RunArg},
      {"ArgMin", SupportsArg, RunArg},
      {"GatherElements", SupportsGatherElements, RunGatherElements},
      {"TopK", SupportsTopK, RunTopK},
      {"Trilu", SupportsTrilu, RunTrilu},
      {"DepthToSpace", SupportsMovable, RunDepthToSpace},
      {"SpaceToDepth", SupportsMovable, RunSpaceToDepth},
  };
}

}  // namespace exec
