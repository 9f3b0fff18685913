// Device runners for the indicator generators OneHot and EyeLike (kernels/cuda/indicator.h): exports
// build one-hot masks and identity matrices inside the graph, and on the host they kept the whole
// model out of a CUDA graph. OneHot needs a constant depth (its output shape); its indices are
// int32 / int64 / float32 / float64 and its values any dtype of 1, 2, 4 or 8 bytes. Semantics follow
// kernels/cpu/tensor_gen.cc; output dims come from the op's own inference.
#include <bit>
#include <cstdint>
#include <optional>

#include "kernels/cuda/indicator.h"
#include "ops/tensor_gen_attrs.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

using ir::DType;

std::optional<kernels::cuda::OneHotIndexType> OneHotIndexTypeOf(DType d) {
  switch (d) {
    case DType::kInt32: return kernels::cuda::OneHotIndexType::kInt32;
    case DType::kInt64: return kernels::cuda::OneHotIndexType::kInt64;
    case DType::kFloat32: return kernels::cuda::OneHotIndexType::kFloat32;
    case DType::kFloat64: return kernels::cuda::OneHotIndexType::kFloat64;
    default: return std::nullopt;
  }
}

// OneHot's axis normalised against the output rank (indices' rank + 1), or nullopt when out of range.
std::optional<int64_t> OneHotAxis(const ir::Node& n, int64_t indices_rank) {
  const int64_t rank = indices_rank + 1;
  const int64_t axis = n.attrs.GetInt("axis", -1);
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

bool SupportsOneHot(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor* depth = ConstantInput(g, n, 1);
  const int64_t rank = g.value(n.inputs[0]).type.rank();
  return n.inputs.size() == 3 && depth != nullptr && ops::OneHotDepth(*depth).ok() &&
         OneHotIndexTypeOf(InputDType(g, n, 0)).has_value() && Movable(InputDType(g, n, 2)) && rank >= 0 &&
         OneHotAxis(n, rank).has_value();
}

Outputs RunOneHot(const Call& c) {
  absl::StatusOr<DeviceTensor> indices = ToLayout(c.in(0), false, c.stream);
  if (!indices.ok()) return indices.status();
  const DeviceTensor& values = c.in(2);
  if (values.num_elements() != 2) return c.Unsupported("values must have two elements");
  absl::StatusOr<int64_t> depth = ops::OneHotDepth(*c.constant(1));
  if (!depth.ok()) return c.Unsupported(depth.status().message());
  const std::optional<int64_t> axis = OneHotAxis(c.node, static_cast<int64_t>(indices->dims.size()));
  if (!axis) return c.Unsupported("axis out of range");
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dtype != values.dtype) return c.Unsupported("output dtype differs from the values'");
  const int64_t inner = Product(indices->dims, *axis, indices->dims.size());
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::OneHot(*OneHotIndexTypeOf(indices->dtype), indices->data(),
                                                     Product(indices->dims, 0, *axis), *depth, inner, values.data(),
                                                     ElementBytes(values.dtype), out->data(), c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

// The raw bits of 1 in `d`, for the numeric dtypes EyeLike writes.
std::optional<uint64_t> OneBits(DType d) {
  switch (d) {
    case DType::kFloat32: return std::bit_cast<uint32_t>(1.0f);
    case DType::kFloat64: return std::bit_cast<uint64_t>(1.0);
    case DType::kFloat16: return uint64_t{0x3C00};
    case DType::kBool:
    case DType::kInt8:
    case DType::kUint8:
    case DType::kInt16:
    case DType::kUint16:
    case DType::kInt32:
    case DType::kUint32:
    case DType::kInt64:
    case DType::kUint64: return uint64_t{1};
    default: return std::nullopt;
  }
}

bool SupportsEyeLike(const ir::Graph& g, const ir::Node& n) {
  absl::StatusOr<ops::EyeLikeAttrs> attrs = ops::ParseEyeLikeAttrs(n.attrs, InputDType(g, n, 0));
  return attrs.ok() && OneBits(attrs->dtype).has_value() && g.value(n.inputs[0]).type.rank() == 2;
}

Outputs RunEyeLike(const Call& c) {
  absl::StatusOr<ops::EyeLikeAttrs> attrs = ops::ParseEyeLikeAttrs(c.node.attrs, c.in(0).dtype);
  if (!attrs.ok()) return c.Unsupported(attrs.status().message());
  const std::optional<uint64_t> one = OneBits(attrs->dtype);
  if (!one || c.in(0).dims.size() != 2) return c.Unsupported("not a 2-D input of a numeric output dtype");
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (out->dtype != attrs->dtype || out->dims != c.in(0).dims) return c.Unsupported("inferred output differs");
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::EyeLike(out->dims[0], out->dims[1], attrs->k, *one,
                                                      ElementBytes(out->dtype), out->data(), c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

}  // namespace

std::vector<DeviceRunnerDef> IndicatorRunners() {
  return {
      {"OneHot", SupportsOneHot, RunOneHot},
      {"EyeLike", SupportsEyeLike, RunEyeLike},
  };
}

}  // namespace exec
