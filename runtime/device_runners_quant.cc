// Device runners for QuantizeLinear (a float type to int8 / uint8) and DequantizeLinear (int8 /
// uint8 / int32 to a float type), per tensor or per axis (kernels/cuda/quantize.h): the activation
// Quantize / Dequantize pairs of QDQ models, which ran on the host and kept those models from
// capturing a CUDA graph. Blocked forms (block_size) and the 4-bit / 8-bit float types stay on the
// host. Semantics follow kernels/cpu/quantize.cc.
#include <optional>
#include <vector>

#include "kernels/cuda/quantize.h"
#include "ops/infer_util.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

using ir::DType;

std::optional<kernels::cuda::QuantType> QuantTypeOf(DType d) {
  switch (d) {
    case DType::kInt8: return kernels::cuda::QuantType::kInt8;
    case DType::kUint8: return kernels::cuda::QuantType::kUint8;
    case DType::kInt32: return kernels::cuda::QuantType::kInt32;
    default: return std::nullopt;
  }
}

// Output 0's dtype where inference gave one, else kUndefined.
DType OutputDType(const ir::Graph& g, const ir::Node& n) {
  return n.outputs.empty() || n.outputs[0] == ir::kNoValue ? DType::kUndefined : g.value(n.outputs[0]).type.dtype;
}

// The quantized side's dtype: DequantizeLinear's input; QuantizeLinear's output as inferred, else as
// the op defines it (the zero point's dtype, else output_dtype, else uint8).
DType QuantizedDType(const ir::Graph& g, const ir::Node& n) {
  if (n.op_type == "DequantizeLinear") return InputDType(g, n, 0);
  if (DType out = OutputDType(g, n); out != DType::kUndefined) return out;
  if (n.input(2) != ir::kNoValue) return InputDType(g, n, 2);
  const int64_t attr = n.attrs.GetInt("output_dtype", 0);
  return attr != 0 ? static_cast<DType>(attr) : DType::kUint8;
}

bool SupportsQuant(const ir::Graph& g, const ir::Node& n) {
  if (n.attrs.GetInt("block_size", 0) != 0 || n.outputs.size() != 1) return false;
  const DType q = QuantizedDType(g, n);
  const std::optional<kernels::cuda::QuantType> type = QuantTypeOf(q);
  if (!type) return false;
  if (n.op_type == "QuantizeLinear" && (q == DType::kInt32 || !IsFloat(InputDType(g, n, 0)))) return false;
  const DType y = OutputDType(g, n);  // DequantizeLinear: scale's float type unless inference says otherwise
  if (n.op_type == "DequantizeLinear" && y != DType::kUndefined && !IsFloat(y)) return false;
  const bool zero_ok = n.input(2) == ir::kNoValue || InputDType(g, n, 2) == q;
  return IsFloat(InputDType(g, n, 1)) && zero_ok;
}

Outputs RunQuant(const Call& c) {
  absl::StatusOr<DeviceTensor> x = ToLayout(c.in(0), false, c.stream);
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  const DeviceTensor& scale = c.in(1);
  kernels::cuda::QuantParams p;
  p.count = x->num_elements();
  if (scale.num_elements() != 1) {  // per axis: a 1-D scale along `axis`
    absl::StatusOr<int64_t> axis = ops::NormalizeAxis(c.node.attrs.GetInt("axis", 1), rank);
    if (!axis.ok()) return c.Unsupported(axis.status().message());
    if (scale.dims.size() != 1 || scale.dims[0] != x->dims[*axis]) {
      return c.Unsupported("scale is neither one value nor one per element of the axis");
    }
    p.channels = scale.dims[0];
    p.inner = Product(x->dims, *axis + 1, rank);
    if (p.inner < 1) p.inner = 1;
  }
  p.scale = scale.data();
  p.scale_type = ToFloatType(scale.dtype);
  if (c.has(2)) {
    if (c.in(2).num_elements() != scale.num_elements()) return c.Unsupported("zero_point and scale differ in size");
    p.zero_point = c.in(2).data();  // one value or 1-D: the stored layout is the logical one
  }
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  if (c.node.op_type == "QuantizeLinear") {
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        kernels::cuda::Quantize(ToFloatType(x->dtype), x->data(), *QuantTypeOf(out->dtype), out->data(), p, c.stream));
  } else {
    ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Dequantize(*QuantTypeOf(x->dtype), x->data(), ToFloatType(out->dtype),
                                                           out->data(), p, c.stream));
  }
  return std::vector<DeviceTensor>{*std::move(out)};
}

}  // namespace

std::vector<DeviceRunnerDef> QuantRunners() {
  return {
      {"QuantizeLinear", SupportsQuant, RunQuant},
      {"DequantizeLinear", SupportsQuant, RunQuant},
  };
}

}  // namespace exec
