// Device runners for reductions, Softmax/LogSoftmax, LayerNormalization, InstanceNormalization,
// GroupNormalization, RMSNormalization, LpNormalization, CumSum, CumProd.
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
#include "kernels/cuda/cumsum.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/norm.h"
#include "kernels/cuda/reduce.h"
#include "kernels/cuda/softmax.h"
#include "ops/cumsum.h"
#include "ops/group_rms_norm.h"
#include "ops/infer_concrete.h"
#include "ops/infer_util.h"
#include "ops/math_norm.h"
#include "ops/op_def.h"
#include "ops/tensor_ops_slice.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

using ir::DType;
using kernels::cuda::FloatType;
using kernels::cuda::kMaxRank;

// ---- Reductions -----------------------------------------------------------------------------------

std::optional<kernels::cuda::ReduceOp> ReduceOpOf(std::string_view op) {
  using kernels::cuda::ReduceOp;
  static const auto* ops = new std::map<std::string_view, ReduceOp>{
      {"ReduceSum", ReduceOp::kSum},       {"ReduceMean", ReduceOp::kMean},
      {"ReduceMax", ReduceOp::kMax},       {"ReduceMin", ReduceOp::kMin},
      {"ReduceProd", ReduceOp::kProd},     {"ReduceL1", ReduceOp::kL1},
      {"ReduceL2", ReduceOp::kL2},         {"ReduceSumSquare", ReduceOp::kSumSquare},
      {"ReduceLogSum", ReduceOp::kLogSum}, {"ReduceLogSumExp", ReduceOp::kLogSumExp}};
  auto it = ops->find(op);
  return it == ops->end() ? std::nullopt : std::optional<ReduceOp>(it->second);
}

std::optional<kernels::cuda::ReduceType> ReduceTypeOf(DType d) {
  using kernels::cuda::ReduceType;
  switch (d) {
    case DType::kFloat32: return ReduceType::kFloat32;
    case DType::kFloat16: return ReduceType::kFloat16;
    case DType::kBFloat16: return ReduceType::kBFloat16;
    case DType::kInt32: return ReduceType::kInt32;
    case DType::kInt64: return ReduceType::kInt64;
    default: return std::nullopt;
  }
}

// The canonical form has axes as an input for every opset (an `axes` attribute left over is not
// canonical: the host reference handles it).
bool SupportsReduce(const ir::Graph& g, const ir::Node& n) {
  const DType x = InputDType(g, n, 0);
  if ((n.op_type == "ReduceLogSum" || n.op_type == "ReduceLogSumExp") && !IsFloat(x)) return false;  // floats only
  return ReduceTypeOf(x).has_value() && ConstantOrAbsent(g, n, 1) && !n.attrs.Has("axes");
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
  DeviceTensor residual;
  if (c.residual != nullptr) {
    absl::StatusOr<DeviceTensor> r = ToLayout(*c.residual, false, c.stream);
    if (!r.ok()) return r.status();
    if (r->dims != x->dims || r->dtype != x->dtype) return c.Unsupported("residual of another shape or dtype");
    residual = *std::move(r);
    p.residual = residual.data();
  }
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

// Output 0 as RowNormalize(x, p) writes it: InstanceNormalization, GroupNormalization,
// RMSNormalization (LayerNormalization also has the statistics outputs).
Outputs NormalizeRows(const Call& c, const DeviceTensor& x, const kernels::cuda::RowNormParams& p) {
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::RowNormalize(ToFloatType(x.dtype), x.data(), out->data(), p, c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

// Scale (input 1) and bias (input 2), 1-D (the stored layout is the logical one), per channel.
void SetChannelParams(const Call& c, int64_t channels, kernels::cuda::RowNormParams& p) {
  p.scale = c.in(1).data();
  p.scale_type = ToFloatType(c.in(1).dtype);
  p.bias = c.in(2).data();
  p.bias_type = ToFloatType(c.in(2).dtype);
  p.per_channel = true;
  p.channels = channels > 0 ? channels : 1;
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
  SetChannelParams(c, channels, p);
  return NormalizeRows(c, *x, p);
}

// GroupNormalization: rows of one sample's group (its channels' spatial positions), scale and bias
// per channel (opset 21+) or per group (opset 18-20).
bool SupportsGroupNorm(const ir::Graph& g, const ir::Node& n) {
  return SupportsInstanceNorm(g, n) && n.attrs.Has("num_groups");
}

Outputs RunGroupNorm(const Call& c) {
  absl::StatusOr<DeviceTensor> x = ToLayout(c.in(0), false, c.stream);
  if (!x.ok()) return x.status();
  if (x->dims.size() < 2) return c.Unsupported("X rank below 2");
  const int64_t channels = x->dims[1];
  absl::StatusOr<ops::GroupNormAttrs> attrs = ops::ParseGroupNormAttrs(c.node, channels);
  if (!attrs.ok()) return c.Unsupported(attrs.status().message());
  const int64_t params = attrs->per_channel_affine ? channels : attrs->num_groups;
  if (c.in(1).num_elements() != params || c.in(2).num_elements() != params) {
    return c.Unsupported("scale or bias does not have one element per channel (per group before opset 21)");
  }
  const int64_t spatial = Product(x->dims, 2, x->dims.size());
  kernels::cuda::RowNormParams p;
  p.rows = x->dims[0] * attrs->num_groups;
  p.n = channels / attrs->num_groups * spatial;
  p.epsilon = attrs->epsilon;
  SetChannelParams(c, params, p);
  p.channel_span = attrs->per_channel_affine && spatial > 0 ? spatial : 0;
  return NormalizeRows(c, *x, p);
}

// RMSNormalization: Y has scale's dtype, which the kernel writes only when it is X's.
bool SupportsRmsNorm(const ir::Graph& g, const ir::Node& n) {
  return SupportsFloat(g, n) && InputDType(g, n, 1) == InputDType(g, n, 0);
}

Outputs RunRmsNorm(const Call& c) {
  absl::StatusOr<DeviceTensor> x = ToLayout(c.in(0), false, c.stream);
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  absl::StatusOr<ops::RmsNormAttrs> attrs = ops::ParseRmsNormAttrs(c.node, rank);
  if (!attrs.ok()) return c.Unsupported(attrs.status().message());
  if (c.outputs[0].dtype != x->dtype) return c.Unsupported("Y of another dtype than X");
  const std::vector<int64_t> norm_dims(x->dims.begin() + attrs->axis, x->dims.end());
  absl::StatusOr<DeviceTensor> scale = FullParam(c, c.in(1), norm_dims);
  if (!scale.ok()) return scale.status();
  kernels::cuda::RowNormParams p;
  p.rows = Product(x->dims, 0, attrs->axis);
  p.n = Product(x->dims, attrs->axis, rank);
  p.epsilon = attrs->epsilon;
  p.scale = scale->data();
  p.scale_type = ToFloatType(scale->dtype);
  p.rms = true;
  return NormalizeRows(c, *x, p);
}

// ---- CumSum, CumProd ------------------------------------------------------------------------------

std::optional<kernels::cuda::ScanType> ScanTypeOf(DType d) {
  switch (d) {
    case DType::kFloat32: return kernels::cuda::ScanType::kFloat32;
    case DType::kFloat16: return kernels::cuda::ScanType::kFloat16;
    case DType::kFloat64: return kernels::cuda::ScanType::kFloat64;
    case DType::kInt32: return kernels::cuda::ScanType::kInt32;
    case DType::kInt64: return kernels::cuda::ScanType::kInt64;
    default: return std::nullopt;
  }
}

bool SupportsCumSum(const ir::Graph& g, const ir::Node& n) {
  return ScanTypeOf(InputDType(g, n, 0)).has_value() && ConstantInput(g, n, 1) != nullptr &&
         ops::ParseCumSumAttrs(n).ok();
}

Outputs RunCumSum(const Call& c) {
  const DeviceTensor& x = c.in(0);
  absl::StatusOr<ops::CumSumAttrs> attrs = ops::ParseCumSumAttrs(c.node);
  if (!attrs.ok()) return c.Unsupported(attrs.status().message());
  absl::StatusOr<int64_t> axis = ops::CumSumAxis(*c.constant(1), static_cast<int64_t>(x.dims.size()));
  if (!axis.ok()) return c.Unsupported(axis.status().message());
  absl::StatusOr<DeviceTensor> dense = ToLayout(x, false, c.stream);
  if (!dense.ok()) return dense.status();
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  const ops::ScanExtents e = ops::ScanExtentsOf(x.dims, *axis);
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::CumSum(*ScanTypeOf(x.dtype), dense->data(), out->data(), e.outer,
                                                     e.length, e.inner, attrs->exclusive, attrs->reverse,
                                                     c.node.op_type == "CumProd", c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

// ---- LpNormalization ----

bool SupportsLpNormalization(const ir::Graph& g, const ir::Node& n) {
  const ir::TensorType& x = g.value(n.inputs[0]).type;
  return IsFloat(x.dtype) && x.rank() >= 1 && ops::ParseLpNormalizationAttrs(n, x.rank()).ok();
}

Outputs RunLpNormalization(const Call& c) {
  absl::StatusOr<DeviceTensor> x = ToLayout(c.in(0), false, c.stream);
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  absl::StatusOr<ops::LpNormalizationAttrs> attrs = ops::ParseLpNormalizationAttrs(c.node, rank);
  if (!attrs.ok()) return c.Unsupported(attrs.status().message());
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dims != x->dims) return c.Unsupported("inferred dims differ from the input's");
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::LpNormalize(
      *ReduceTypeOf(x->dtype), x->data(), out->data(), Product(x->dims, 0, attrs->axis), x->dims[attrs->axis],
      Product(x->dims, attrs->axis + 1, rank), static_cast<int>(attrs->p), c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

}  // namespace

std::vector<DeviceRunnerDef> MathRunners() {
  return {
      {"ReduceSum", SupportsReduce, RunReduce},
      {"ReduceMean", SupportsReduce, RunReduce},
      {"ReduceMax", SupportsReduce, RunReduce},
      {"ReduceMin", SupportsReduce, RunReduce},
      {"ReduceProd", SupportsReduce, RunReduce},
      {"ReduceL1", SupportsReduce, RunReduce},
      {"ReduceL2", SupportsReduce, RunReduce},
      {"ReduceSumSquare", SupportsReduce, RunReduce},
      {"ReduceLogSum", SupportsReduce, RunReduce},
      {"ReduceLogSumExp", SupportsReduce, RunReduce},
      {"LpNormalization", SupportsLpNormalization, RunLpNormalization},
      {"Softmax", SupportsFloat, RunSoftmax},
      {"LogSoftmax", SupportsFloat, RunSoftmax},
      {"LayerNormalization", SupportsLayerNorm, RunLayerNorm},
      {"InstanceNormalization", SupportsInstanceNorm, RunInstanceNorm},
      {"GroupNormalization", SupportsGroupNorm, RunGroupNorm},
      {"RMSNormalization", SupportsRmsNorm, RunRmsNorm},
      {"CumSum", SupportsCumSum, RunCumSum},
      {"CumProd", SupportsCumSum, RunCumSum},
  };
}

}  // namespace exec
