// Own-CUDA-kernel steps (see cuda_kernel_steps.h): per op, a support rule on the graph and a runner
// that turns the concrete input dims and the node's attributes and constant inputs into kernel
// parameters. Output dims always come from the op's own inference.
#include "runtime/cuda_kernel_steps.h"

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ir/half.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/gather.h"
#include "kernels/cuda/norm.h"
#include "kernels/cuda/reduce.h"
#include "kernels/cuda/resize.h"
#include "kernels/cuda/softmax.h"
#include "kernels/cuda/strided_copy.h"
#include "kernels/cuda/tile.h"
#include "kernels/cuda/where.h"
#include "ops/infer_util.h"
#include "ops/infer_concrete.h"
#include "ops/op_def.h"
#include "ops/tensor_ops_slice.h"

namespace exec {
namespace {

using ir::DType;
using kernels::cuda::FloatType;
using kernels::cuda::kMaxRank;

// ---- Helpers --------------------------------------------------------------------------------------

absl::Status NotCovered(const ir::Node& node, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat(node.op_type, " on the device: ", why));
}

bool IsFloat(DType d) { return d == DType::kFloat32 || d == DType::kFloat16; }
FloatType ToFloatType(DType d) { return d == DType::kFloat16 ? FloatType::kFloat16 : FloatType::kFloat32; }
// Dtypes the byte-moving kernels copy (every element of 1, 2, 4 or 8 bytes).
bool Movable(DType d) {
  const size_t bytes = ir::DTypeSize(d);
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8;
}
int ElementBytes(DType d) { return static_cast<int>(ir::DTypeSize(d)); }

std::vector<int64_t> DenseStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

DType InputDType(const ir::Graph& g, const ir::Node& n, size_t i) {
  return n.input(i) == ir::kNoValue ? DType::kUndefined : g.value(n.input(i)).type.dtype;
}

const ir::Tensor* ConstantInput(const ir::Graph& g, const ir::Node& n, size_t i) {
  const ir::ValueId id = n.input(i);
  return id == ir::kNoValue || !g.value(id).constant ? nullptr : &*g.value(id).constant;
}

bool ConstantOrAbsent(const ir::Graph& g, const ir::Node& n, size_t i) {
  return n.input(i) == ir::kNoValue || ConstantInput(g, n, i) != nullptr;
}

// One output as the op's inference gives it for the concrete inputs.
struct OutputSpec {
  bool present = false;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
};

// Everything a runner needs; `outputs` come from the op's inference on the concrete input dims.
struct Call {
  const ir::Graph& graph;
  const ir::Node& node;
  const std::vector<DeviceTensor>& inputs;
  cudaStream_t stream;
  std::vector<OutputSpec> outputs;

  bool has(size_t i) const { return node.input(i) != ir::kNoValue; }
  const DeviceTensor& in(size_t i) const { return inputs[i]; }
  const ir::Tensor* constant(size_t i) const { return ConstantInput(graph, node, i); }
  // Output i allocated (row-major); an invalid DeviceTensor when the node does not produce it.
  absl::StatusOr<DeviceTensor> Allocate(size_t i) const {
    if (!outputs[i].present) return DeviceTensor();
    return DeviceTensor::Allocate(outputs[i].dtype, outputs[i].dims, false, stream);
  }
  absl::Status Unsupported(absl::string_view why) const { return NotCovered(node, why); }
};

using Outputs = absl::StatusOr<std::vector<DeviceTensor>>;

// The node's outputs from ops::FindOpDef(op)->infer on the concrete dims of `inputs` (constant
// inputs with their values). Inference errors become Unimplemented: the host then reports them.
absl::StatusOr<std::vector<OutputSpec>> InferOutputs(const ir::Graph& graph, const ir::Node& node,
                                                     const std::vector<DeviceTensor>& inputs) {
  std::vector<ops::ConcreteInput> concrete;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == ir::kNoValue) {
      concrete.push_back(ops::ConcreteInput::Absent());
    } else {
      concrete.push_back(ops::ConcreteInput::Of(inputs[i].dtype, inputs[i].dims, ConstantInput(graph, node, i)));
    }
  }
  absl::StatusOr<std::vector<ops::ConcreteOutput>> inferred = ops::InferConcrete(node, concrete);
  if (!inferred.ok()) return NotCovered(node, absl::StrCat("inference: ", inferred.status().message()));
  std::vector<OutputSpec> outputs(node.outputs.size());
  for (size_t o = 0; o < node.outputs.size() && o < inferred->size(); ++o) {
    if (node.outputs[o] == ir::kNoValue) continue;
    std::optional<std::vector<int64_t>>& dims = (*inferred)[o].dims;
    if (!dims) return NotCovered(node, absl::StrCat("output ", o, " has no concrete dims"));
    if (dims->size() > static_cast<size_t>(kMaxRank)) return NotCovered(node, "output rank above the kernels' limit");
    outputs[o] = OutputSpec{true, (*inferred)[o].dtype, *std::move(dims)};
  }
  return outputs;
}

// Copies `src` (viewed through `src_strides` over `dims`) into the dense `dst`.
absl::Status CopyView(const void* src, const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                      DeviceTensor& dst, cudaStream_t stream) {
  kernels::cuda::CopyShape shape;
  shape.rank = static_cast<int>(dims.size());
  const std::vector<int64_t> dst_strides = DenseStrides(dims);
  for (int d = 0; d < shape.rank; ++d) {
    shape.dims[d] = dims[d];
    shape.src_strides[d] = src_strides[d];
    shape.dst_strides[d] = dst_strides[d];
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::StridedCopy(src, dst.data(), shape, ElementBytes(dst.dtype), stream));
  return absl::OkStatus();
}

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

// ---- Reductions -----------------------------------------------------------------------------------

std::optional<kernels::cuda::ReduceOp> ReduceOpOf(std::string_view op) {
  using kernels::cuda::ReduceOp;
  static const auto* ops = new std::map<std::string_view, ReduceOp>{
      {"ReduceSum", ReduceOp::kSum}, {"ReduceMean", ReduceOp::kMean}, {"ReduceMax", ReduceOp::kMax},
      {"ReduceMin", ReduceOp::kMin}, {"ReduceProd", ReduceOp::kProd}, {"ReduceL2", ReduceOp::kL2}};
  auto it = ops->find(op);
  return it == ops->end() ? std::nullopt : std::optional<ReduceOp>(it->second);
}

std::optional<kernels::cuda::ReduceType> ReduceTypeOf(DType d) {
  using kernels::cuda::ReduceType;
  switch (d) {
    case DType::kFloat32: return ReduceType::kFloat32;
    case DType::kFloat16: return ReduceType::kFloat16;
    case DType::kInt32: return ReduceType::kInt32;
    case DType::kInt64: return ReduceType::kInt64;
    default: return std::nullopt;
  }
}

// The canonical form has axes as an input for every opset (an `axes` attribute left over is not
// canonical: the host reference handles it).
bool SupportsReduce(const ir::Graph& g, const ir::Node& n) {
  return ReduceTypeOf(InputDType(g, n, 0)).has_value() && ConstantOrAbsent(g, n, 1) && !n.attrs.Has("axes");
}

Outputs RunReduce(const Call& c) {
  const DeviceTensor& x = c.in(0);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const std::vector<int64_t> axes = c.has(1) ? c.constant(1)->ToInt64Vector() : std::vector<int64_t>{};
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (axes.empty() && c.node.attrs.GetInt("noop_with_empty_axes", 0) != 0) {
    absl::StatusOr<DeviceTensor> logical = ToLayout(x, false, c.stream);
    if (!logical.ok()) return logical.status();
    if (out->bytes() != logical->bytes()) return c.Unsupported("no-op output differs in size");
    if (out->bytes() > 0) {
      ONNXRUN_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(out->data(), logical->data(), out->bytes(), cudaMemcpyDeviceToDevice, c.stream));
    }
    return std::vector<DeviceTensor>{*std::move(out)};
  }
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) {
    absl::StatusOr<int64_t> axis = ops::NormalizeAxis(a, rank);
    if (!axis.ok() || reduced[*axis]) return c.Unsupported("axis out of range or repeated");
    reduced[*axis] = true;
  }
  kernels::cuda::ReduceShape shape;
  const std::vector<int64_t> s = x.strides();
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      shape.reduced_dims[shape.reduced_rank] = x.dims[d];
      shape.reduced_strides[shape.reduced_rank++] = s[d];
    } else {
      shape.kept_dims[shape.kept_rank] = x.dims[d];
      shape.kept_strides[shape.kept_rank++] = s[d];
    }
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Reduce(*ReduceOpOf(c.node.op_type), *ReduceTypeOf(x.dtype), x.data(),
                                                     out->data(), shape, c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

// ---- Softmax, LogSoftmax, LayerNormalization, InstanceNormalization -------------------------------

bool SupportsFloat(const ir::Graph& g, const ir::Node& n) { return IsFloat(InputDType(g, n, 0)); }

Outputs RunSoftmax(const Call& c) {
  absl::StatusOr<DeviceTensor> x = ToLayout(c.in(0), false, c.stream);
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  const bool legacy = c.node.opset < 13;  // coerced to 2-D at axis (axis == rank allowed)
  int64_t axis = c.node.attrs.GetInt("axis", legacy ? 1 : -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank || (!legacy && axis == rank)) return c.Unsupported("axis out of range");
  const int64_t outer = Product(x->dims, 0, axis);
  const int64_t n = legacy ? Product(x->dims, axis, rank) : x->dims[axis];
  const int64_t inner = legacy ? 1 : Product(x->dims, axis + 1, rank);
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Softmax(ToFloatType(x->dtype), c.node.op_type == "LogSoftmax", x->data(),
                                                      out->data(), outer, n, inner, c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

bool SupportsLayerNorm(const ir::Graph& g, const ir::Node& n) {
  const DType stash = static_cast<DType>(n.attrs.GetInt("stash_type", 1));
  const bool stats =
      (n.outputs.size() > 1 && n.outputs[1] != ir::kNoValue) || (n.outputs.size() > 2 && n.outputs[2] != ir::kNoValue);
  return SupportsFloat(g, n) && IsFloat(InputDType(g, n, 1)) &&
         (n.input(2) == ir::kNoValue || IsFloat(InputDType(g, n, 2))) && (!stats || IsFloat(stash));
}

// A LayerNormalization parameter as `count` = prod(norm_dims) elements in logical order: itself
// when it already has them all, else broadcast (unidirectionally) into a new buffer.
absl::StatusOr<DeviceTensor> FullParam(const Call& c, const DeviceTensor& p, const std::vector<int64_t>& norm_dims) {
  absl::StatusOr<DeviceTensor> logical = ToLayout(p, false, c.stream);
  if (!logical.ok()) return logical.status();
  if (logical->dims == norm_dims) return logical;
  if (p.dims.size() > norm_dims.size()) return c.Unsupported("parameter rank above the normalized rank");
  const size_t shift = norm_dims.size() - p.dims.size();
  for (size_t i = 0; i < p.dims.size(); ++i) {
    if (p.dims[i] != 1 && p.dims[i] != norm_dims[i + shift]) return c.Unsupported("parameter does not broadcast");
  }
  absl::StatusOr<DeviceTensor> full = DeviceTensor::Allocate(p.dtype, norm_dims, false, c.stream);
  if (!full.ok()) return full.status();
  if (absl::Status st = CopyView(logical->data(), norm_dims, logical->BroadcastStrides(norm_dims), *full, c.stream);
      !st.ok()) {
    return st;
  }
  return full;
}

Outputs RunLayerNorm(const Call& c) {
  absl::StatusOr<DeviceTensor> x = ToLayout(c.in(0), false, c.stream);
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  absl::StatusOr<int64_t> axis = ops::NormalizeAxis(c.node.attrs.GetInt("axis", -1), rank);
  if (!axis.ok()) return c.Unsupported(axis.status().message());
  const std::vector<int64_t> norm_dims(x->dims.begin() + *axis, x->dims.end());
  kernels::cuda::RowNormParams p;
  p.rows = Product(x->dims, 0, *axis);
  p.n = Product(x->dims, *axis, rank);
  p.epsilon = c.node.attrs.GetFloat("epsilon", 1e-5f);
  absl::StatusOr<DeviceTensor> scale = FullParam(c, c.in(1), norm_dims);
  if (!scale.ok()) return scale.status();
  p.scale = scale->data();
  p.scale_type = ToFloatType(scale->dtype);
  DeviceTensor bias;
  if (c.has(2)) {
    absl::StatusOr<DeviceTensor> b = FullParam(c, c.in(2), norm_dims);
    if (!b.ok()) return b.status();
    bias = *std::move(b);
    p.bias = bias.data();
    p.bias_type = ToFloatType(bias.dtype);
  }
  std::vector<DeviceTensor> outs;
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    absl::StatusOr<DeviceTensor> t = c.Allocate(o);
    if (!t.ok()) return t.status();
    if (o > 0 && t->valid() && (!IsFloat(t->dtype) || t->num_elements() != p.rows)) {
      return c.Unsupported("Mean/InvStdDev output not float32/float16 with one element per row");
    }
    outs.push_back(*std::move(t));
  }
  for (size_t o = 1; o < outs.size() && o < 3; ++o) {
    if (!outs[o].valid()) continue;
    (o == 1 ? p.mean : p.inv_std_dev) = outs[o].data();
    p.stat_type = ToFloatType(outs[o].dtype);  // both have the stash type
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(
      kernels::cuda::RowNormalize(ToFloatType(x->dtype), x->data(), outs[0].data(), p, c.stream));
  return outs;
}

bool SupportsInstanceNorm(const ir::Graph& g, const ir::Node& n) {
  return SupportsFloat(g, n) && IsFloat(InputDType(g, n, 1)) && IsFloat(InputDType(g, n, 2));
}

Outputs RunInstanceNorm(const Call& c) {
  absl::StatusOr<DeviceTensor> x = ToLayout(c.in(0), false, c.stream);
  if (!x.ok()) return x.status();
  if (x->dims.size() < 2) return c.Unsupported("X rank below 2");
  const int64_t channels = x->dims[1];
  if (c.in(1).num_elements() != channels || c.in(2).num_elements() != channels) {
    return c.Unsupported("scale or B does not have one element per channel");
  }
  kernels::cuda::RowNormParams p;
  p.rows = x->dims[0] * channels;
  p.n = Product(x->dims, 2, x->dims.size());
  p.epsilon = c.node.attrs.GetFloat("epsilon", 1e-5f);
  p.scale = c.in(1).data();  // 1-D: the stored layout is the logical one
  p.scale_type = ToFloatType(c.in(1).dtype);
  p.bias = c.in(2).data();
  p.bias_type = ToFloatType(c.in(2).dtype);
  p.per_channel = true;
  p.channels = channels > 0 ? channels : 1;
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::RowNormalize(ToFloatType(x->dtype), x->data(), out->data(), p, c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

// ---- Resize ---------------------------------------------------------------------------------------

template <typename E>
std::optional<E> Lookup(const std::string& key, std::initializer_list<std::pair<const char*, E>> table) {
  for (const auto& [name, value] : table) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::optional<kernels::cuda::ResizeMode> ResizeModeOf(const ir::Node& n) {
  using M = kernels::cuda::ResizeMode;
  return Lookup<M>(n.attrs.GetString("mode", "nearest"),
                   {{"nearest", M::kNearest}, {"linear", M::kLinear}, {"cubic", M::kCubic}});
}

bool SupportsResize(const ir::Graph& g, const ir::Node& n) {
  for (size_t i = 1; i < 4; ++i) {
    if (!ConstantOrAbsent(g, n, i)) return false;
  }
  const std::optional<kernels::cuda::ResizeMode> mode = ResizeModeOf(n);
  if (!mode || n.attrs.GetInt("antialias", 0) != 0 || n.attrs.Has("axes") ||
      n.attrs.GetString("keep_aspect_ratio_policy", "stretch") != "stretch") {
    return false;
  }
  const DType x = InputDType(g, n, 0);
  return *mode == kernels::cuda::ResizeMode::kNearest ? Movable(x) : IsFloat(x);
}

// The bits of one element of `dtype` holding `v` as the host reference converts it.
std::optional<uint64_t> ElementBits(DType dtype, double v) {
  uint64_t bits = 0;
  auto put = [&bits](auto value) {
    std::memcpy(&bits, &value, sizeof(value));
    return bits;
  };
  switch (dtype) {
    case DType::kFloat32: return put(static_cast<float>(v));
    case DType::kFloat64: return put(v);
    case DType::kFloat16: return put(ir::FloatToHalfBits(static_cast<float>(v)));
    case DType::kInt8: return put(static_cast<int8_t>(std::nearbyint(v)));
    case DType::kUint8: return put(static_cast<uint8_t>(std::nearbyint(v)));
    case DType::kInt32: return put(static_cast<int32_t>(std::nearbyint(v)));
    case DType::kInt64: return put(static_cast<int64_t>(std::nearbyint(v)));
    default: return std::nullopt;
  }
}

absl::StatusOr<kernels::cuda::ResizeParams> ResizeParamsOf(const Call& c, const std::vector<int64_t>& out_dims) {
  using C = kernels::cuda::ResizeCoordinate;
  using R = kernels::cuda::NearestRounding;
  const DeviceTensor& x = c.in(0);
  const ir::Attributes& attrs = c.node.attrs;
  kernels::cuda::ResizeParams p;
  p.mode = *ResizeModeOf(c.node);
  const std::optional<C> coordinate = Lookup<C>(attrs.GetString("coordinate_transformation_mode", "half_pixel"),
                                                {{"half_pixel", C::kHalfPixel},
                                                 {"pytorch_half_pixel", C::kPytorchHalfPixel},
                                                 {"align_corners", C::kAlignCorners},
                                                 {"asymmetric", C::kAsymmetric},
                                                 {"tf_half_pixel_for_nn", C::kTfHalfPixelForNn},
                                                 {"tf_crop_and_resize", C::kTfCropAndResize},
                                                 {"half_pixel_symmetric", C::kHalfPixelSymmetric}});
  const std::optional<R> nearest =
      Lookup<R>(attrs.GetString("nearest_mode", "round_prefer_floor"), {{"round_prefer_floor", R::kRoundPreferFloor},
                                                                        {"round_prefer_ceil", R::kRoundPreferCeil},
                                                                        {"floor", R::kFloor},
                                                                        {"ceil", R::kCeil}});
  if (!coordinate || !nearest) return c.Unsupported("unknown coordinate_transformation_mode or nearest_mode");
  p.coordinate = *coordinate;
  p.nearest = *nearest;
  p.cubic_a = attrs.GetFloat("cubic_coeff_a", -0.75f);
  p.exclude_outside = attrs.GetInt("exclude_outside", 0) != 0;
  p.rank = static_cast<int>(x.dims.size());
  const ir::Tensor* scales = c.constant(2);
  if (scales != nullptr && scales->num_elements() == 0) scales = nullptr;
  const ir::Tensor* sizes = c.constant(3);
  const ir::Tensor* roi = c.constant(1);
  if (p.coordinate == C::kTfCropAndResize && (roi == nullptr || roi->num_elements() != 2 * p.rank)) {
    return c.Unsupported("tf_crop_and_resize without a roi of 2 * rank elements");
  }
  if (scales != nullptr ? scales->num_elements() != p.rank : sizes == nullptr || sizes->num_elements() != p.rank) {
    return c.Unsupported("scales or sizes do not have one element per axis");
  }
  if (out_dims.size() != x.dims.size()) return c.Unsupported("output rank differs from the input's");
  const std::vector<int64_t> strides = x.strides();
  for (int d = 0; d < p.rank; ++d) {
    kernels::cuda::ResizeAxis& a = p.axes[d];
    a.in_len = x.dims[d];
    a.out_len = out_dims[d];
    a.in_stride = strides[d];
    a.scale = scales != nullptr ? scales->GetAsDouble(d)
                                : (a.in_len > 0 ? static_cast<double>(a.out_len) / static_cast<double>(a.in_len) : 1.0);
    if (p.coordinate == C::kTfCropAndResize) {
      a.roi_start = roi->GetAsDouble(d);
      a.roi_end = roi->GetAsDouble(p.rank + d);
    }
  }
  if (!kernels::cuda::ResizeCovered(p)) return c.Unsupported("scales or source coordinates out of range");
  return p;
}

Outputs RunResize(const Call& c) {
  const DeviceTensor& x = c.in(0);
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  absl::StatusOr<kernels::cuda::ResizeParams> p = ResizeParamsOf(c, out->dims);
  if (!p.ok()) return p.status();
  const double extrapolation = c.node.attrs.GetFloat("extrapolation_value", 0.0f);
  if (p->mode == kernels::cuda::ResizeMode::kNearest) {
    const std::optional<uint64_t> bits = ElementBits(x.dtype, extrapolation);
    if (!bits) return c.Unsupported(absl::StrCat("nearest of ", ir::DTypeName(x.dtype)));
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        kernels::cuda::ResizeNearest(*p, x.data(), out->data(), ElementBytes(x.dtype), *bits, c.stream));
  } else {
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        kernels::cuda::ResizeInterpolate(*p, ToFloatType(x.dtype), x.data(), out->data(), extrapolation, c.stream));
  }
  return std::vector<DeviceTensor>{*std::move(out)};
}

// ---- The table ------------------------------------------------------------------------------------

struct OpKernel {
  bool (*supports)(const ir::Graph&, const ir::Node&);
  Outputs (*run)(const Call&);
};

const std::map<std::string_view, OpKernel>& Kernels() {
  static const auto* table = new std::map<std::string_view, OpKernel>{
      {"Transpose", {SupportsMove, RunTranspose}},
      {"Slice", {SupportsSlice, RunSlice}},
      {"Gather", {SupportsGather, RunGather}},
      {"Expand", {SupportsExpand, RunExpand}},
      {"Tile", {SupportsTile, RunTile}},
      {"Where", {SupportsWhere, RunWhere}},
      {"ReduceSum", {SupportsReduce, RunReduce}},
      {"ReduceMean", {SupportsReduce, RunReduce}},
      {"ReduceMax", {SupportsReduce, RunReduce}},
      {"ReduceMin", {SupportsReduce, RunReduce}},
      {"ReduceProd", {SupportsReduce, RunReduce}},
      {"ReduceL2", {SupportsReduce, RunReduce}},
      {"Softmax", {SupportsFloat, RunSoftmax}},
      {"LogSoftmax", {SupportsFloat, RunSoftmax}},
      {"LayerNormalization", {SupportsLayerNorm, RunLayerNorm}},
      {"InstanceNormalization", {SupportsInstanceNorm, RunInstanceNorm}},
      {"Resize", {SupportsResize, RunResize}},
  };
  return *table;
}

}  // namespace

bool CudaKernelSupports(const ir::Graph& graph, const ir::Node& node) {
  auto it = Kernels().find(node.op_type);
  if (it == Kernels().end() || ops::FindOpDef(node.op_type) == nullptr) return false;  // ops without inference
  if (node.inputs.empty() || node.inputs[0] == ir::kNoValue || node.outputs.empty() ||
      node.outputs[0] == ir::kNoValue) {
    return false;
  }
  for (ir::ValueId id : node.inputs) {
    if (id != ir::kNoValue && graph.value(id).type.rank() > kMaxRank) return false;
  }
  for (ir::ValueId id : node.outputs) {
    if (id != ir::kNoValue && graph.value(id).type.rank() > kMaxRank) return false;
  }
  return it->second.supports(graph, node);
}

absl::StatusOr<std::vector<DeviceTensor>> RunCudaKernel(const ir::Graph& graph, const ir::Node& node,
                                                        const std::vector<DeviceTensor>& inputs, cudaStream_t stream) {
  if (!CudaKernelSupports(graph, node)) return NotCovered(node, "form not covered by kernels/cuda");
  auto it = Kernels().find(node.op_type);
  if (inputs.size() != node.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(node.op_type, ": ", inputs.size(), " device inputs for ", node.inputs.size(), " node inputs"));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (node.inputs[i] == ir::kNoValue) continue;
    if (!inputs[i].valid())
      return absl::InternalError(absl::StrCat(node.op_type, ": input ", i, " is not on the device"));
    if (inputs[i].dims.size() > static_cast<size_t>(kMaxRank)) return NotCovered(node, "rank above the kernels' limit");
  }
  absl::StatusOr<std::vector<OutputSpec>> outputs = InferOutputs(graph, node, inputs);
  if (!outputs.ok()) return outputs.status();
  return it->second.run(Call{graph, node, inputs, stream, *std::move(outputs)});
}

}  // namespace exec
