// Device runners for MaxPool (without Indices) and AveragePool on the own pooling kernel
// (kernels/cuda/pool.h), and the parameters the legacy step uses for the forms cuDNN's pooling
// cannot state (ceil_mode, asymmetric or auto pads, dilations). The window geometry is the host
// kernels' (kernels/cpu/nn_util.h ForwardGeometry), so both backends pool the same windows.
#include "absl/strings/str_cat.h"
#include "kernels/cpu/nn_util.h"
#include "kernels/cuda/pool.h"
#include "runtime/device_runner.h"

namespace exec {

absl::StatusOr<kernels::cuda::PoolParams> OwnPoolParams(const ir::Node& node, const std::vector<int64_t>& x_dims,
                                                        bool channels_last) {
  using kernels::cuda::PoolKind;
  const bool max = node.op_type == "MaxPool";
  if (!max && node.op_type != "AveragePool") return NotCovered(node, "not a MaxPool or AveragePool");
  if (node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue) return NotCovered(node, "the Indices output");
  const size_t spatial = x_dims.size() < 3 ? 0 : x_dims.size() - 2;
  if (spatial < 1 || spatial > static_cast<size_t>(kernels::cuda::kMaxPoolSpatial)) {
    return NotCovered(node, absl::StrCat(spatial, " spatial dims (the kernel pools 1 to 3)"));
  }
  if (channels_last && spatial != 2) return NotCovered(node, "channels last needs 2 spatial dims");
  absl::StatusOr<kernels::cpu::nn::WindowAttrs> attrs = kernels::cpu::nn::ReadWindowAttrs(node.attrs, spatial, {});
  if (!attrs.ok()) return NotCovered(node, attrs.status().message());
  const std::vector<int64_t> image(x_dims.begin() + 2, x_dims.end());
  absl::StatusOr<kernels::cpu::nn::WindowGeometry> geo = kernels::cpu::nn::ForwardGeometry(*attrs, image);
  if (!geo.ok()) return NotCovered(node, geo.status().message());
  kernels::cuda::PoolParams p;
  p.kind = max                                         ? PoolKind::kMax
           : node.attrs.GetInt("count_include_pad", 0) ? PoolKind::kAverageIncludePad
                                                       : PoolKind::kAverageExcludePad;
  p.spatial = static_cast<int>(spatial);
  p.n = x_dims[0];
  p.c = x_dims[1];
  p.channels_last = channels_last;
  for (size_t d = 0; d < spatial; ++d) {
    p.image[d] = geo->image[d];
    p.grid[d] = geo->grid[d];
    p.kernel[d] = geo->kernel[d];
    p.stride[d] = geo->strides[d];
    p.dilation[d] = geo->dilations[d];
    p.pad_begin[d] = geo->pad_begin[d];
    p.pad_end[d] = geo->pad_end[d];
  }
  return p;
}

namespace {

bool SupportsPool(const ir::Graph& g, const ir::Node& n) {
  return IsFloat(InputDType(g, n, 0)) && (n.outputs.size() < 2 || n.outputs[1] == ir::kNoValue);
}

Outputs RunPool(const Call& c) {
  absl::StatusOr<DeviceTensor> channels_first = ToLayout(c.in(0), false, c.stream);  // a conv's NHWC output
  if (!channels_first.ok()) return channels_first.status();
  const DeviceTensor& x = *channels_first;
  absl::StatusOr<kernels::cuda::PoolParams> p = OwnPoolParams(c.node, x.dims, false);
  if (!p.ok()) return p.status();
  absl::StatusOr<DeviceTensor> out = c.Allocate(0);
  if (!out.ok()) return out.status();
  for (int d = 0; d < p->spatial; ++d) {
    if (out->dims[2 + d] != p->grid[d]) return c.Unsupported("output dims differ from the window geometry's");
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Pool(ToFloatType(x.dtype), *p, x.data(), out->data(), c.stream));
  return std::vector<DeviceTensor>{*std::move(out)};
}

}  // namespace

std::vector<DeviceRunnerDef> PoolRunners() {
  return {
      {"MaxPool", SupportsPool, RunPool},
      {"AveragePool", SupportsPool, RunPool},
  };
}

}  // namespace exec
