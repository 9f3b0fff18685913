// ConvTranspose steps on the GPU: 2-D ConvTranspose as cuDNN's backward-data convolution
// (kernels/cudnn/conv_transpose.h), in the layout its consumers want (NHWC feeds the fused convs of
// a UNet decoder without a transpose). The output extent comes from the host kernel's geometry
// (kernels/cpu/nn_util.h TransposeGeometry), so both backends agree on output_padding, auto_pad
// and output_shape. An output shorter at the end than the backward-data call's extent (more pad
// after than before: SAME_UPPER of a 3x3 stride 2, TensorFlow's 'same') is computed at that extent
// and cropped by one strided copy. Other forms (1-D / 3-D, outputs longer than the call reaches)
// run on the host, as before.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/nn_util.h"
#include "kernels/cudnn/status.h"
#include "runtime/cuda_executor.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

// The cuDNN call's spec and the step's output dims (logical), which may be a crop of spec.y.
struct ConvTransposeForm {
  cudnn::ConvTransposeSpec spec;
  std::vector<int64_t> out_dims;
};

absl::StatusOr<ConvTransposeForm> FormOf(const ir::Node& node, const DeviceTensor& x,
                                         const std::vector<int64_t>& w_dims, bool nhwc, cudnn::IoType io, bool tf32,
                                         bool has_bias) {
  if (x.dims.size() != 4 || w_dims.size() != 4) return absl::UnimplementedError("not 2-D");
  absl::StatusOr<kernels::cpu::nn::WindowAttrs> attrs =
      kernels::cpu::nn::ReadWindowAttrs(node.attrs, 2, {w_dims[2], w_dims[3]});
  if (!attrs.ok()) return attrs.status();
  const std::vector<int64_t> grid = {x.dims[2], x.dims[3]};
  absl::StatusOr<kernels::cpu::nn::WindowGeometry> geo = kernels::cpu::nn::TransposeGeometry(node.attrs, *attrs, grid);
  if (!geo.ok()) return geo.status();
  const int64_t groups = node.attrs.GetInt("group", 1);
  if (w_dims[0] != x.dims[1]) return absl::UnimplementedError("W's first dim is not X's channel count");
  const int64_t limit = int64_t{1} << 30;
  for (int64_t d : {x.dims[0], x.dims[1], x.dims[2], x.dims[3], w_dims[1], w_dims[2], w_dims[3], groups,
                    w_dims[1] * groups, geo->image[0], geo->image[1]}) {
    if (d < 1 || d >= limit) return absl::UnimplementedError("dims outside what a cuDNN descriptor holds");
  }
  cudnn::ConvTransposeSpec spec;
  spec.x = {static_cast<int>(x.dims[0]), static_cast<int>(x.dims[1]), static_cast<int>(x.dims[2]),
            static_cast<int>(x.dims[3])};
  // The backward-data call's extent with symmetric pads (pad_begin on both sides) where the output
  // is shorter: the output is its beginning.
  auto reached = [&](int d) {
    const int64_t natural =
        geo->strides[d] * (grid[d] - 1) + (w_dims[2 + d] - 1) * geo->dilations[d] + 1 - 2 * geo->pad_begin[d];
    return static_cast<int>(std::clamp<int64_t>(std::max(natural, geo->image[d]), 1, limit));
  };
  spec.y = {spec.x.n, static_cast<int>(w_dims[1] * groups), reached(0), reached(1)};
  spec.r = static_cast<int>(w_dims[2]);
  spec.s = static_cast<int>(w_dims[3]);
  spec.groups = static_cast<int>(groups);
  spec.pad_h = static_cast<int>(geo->pad_begin[0]);
  spec.pad_w = static_cast<int>(geo->pad_begin[1]);
  spec.stride_h = static_cast<int>(geo->strides[0]);
  spec.stride_w = static_cast<int>(geo->strides[1]);
  spec.dilation_h = static_cast<int>(geo->dilations[0]);
  spec.dilation_w = static_cast<int>(geo->dilations[1]);
  spec.layout = nhwc ? cudnn::Layout::kNHWC : cudnn::Layout::kNCHW;
  spec.type = io;
  spec.allow_tf32 = tf32;
  spec.has_bias = has_bias;
  return ConvTransposeForm{spec, {x.dims[0], w_dims[1] * groups, geo->image[0], geo->image[1]}};
}

// Copies the beginning of `full` (the same storage layout, each dim at least `out`'s) into `out`.
absl::Status CopyCrop(const DeviceTensor& full, DeviceTensor& out, cudaStream_t stream) {
  auto storage = [](const DeviceTensor& t) {  // dims in storage order
    return t.nhwc ? std::vector<int64_t>{t.dims[0], t.dims[2], t.dims[3], t.dims[1]} : t.dims;
  };
  const std::vector<int64_t> out_storage = storage(out);
  return CopyView(full.data(), out_storage, DenseStrides(storage(full)), out, stream);
}

}  // namespace

absl::Status CudaExecutor::RunConvTranspose(size_t index, const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  absl::StatusOr<DeviceTensor> x = Input(node.inputs[0], values);
  if (!x.ok()) return x.status();
  const bool has_bias = node.input(2) != ir::kNoValue;
  auto [it, inserted] = legacy_[index].try_emplace(ir::ShapeToString(x->dims));
  LegacyEntry& e = it->second;
  if (inserted) {
    e.status = [&]() -> absl::Status {
      if (step.outputs.size() != 1 || !g.value(node.inputs[1]).constant) {
        return absl::UnimplementedError("weights are not constants");
      }
      absl::StatusOr<cudnn::IoType> io = IoTypeOf(x->dtype);
      if (!io.ok()) return io.status();
      for (size_t i = 1; i < node.inputs.size(); ++i) {  // one type for the call's descriptors
        if (node.input(i) != ir::kNoValue && g.value(node.input(i)).type.dtype != x->dtype) {
          return absl::UnimplementedError("weights or bias of another type than X");
        }
      }
      e.nhwc = WantsNhwc(step.outputs[0]);
      absl::StatusOr<ConvTransposeForm> form =
          FormOf(node, *x, g.value(node.inputs[1]).constant->shape(), e.nhwc, *io, plan_.precision == "tf32", has_bias);
      if (!form.ok()) return form.status();
      CUDNN_ASSIGN_OR_RETURN(cudnn::ConvTranspose t, cudnn::ConvTranspose::Create(cudnn_, form->spec));
      const cudnn::Shape4& y = form->spec.y;
      e.out_dims = form->out_dims;
      if (e.out_dims != std::vector<int64_t>{y.n, y.c, y.h, y.w}) e.cropped_from = {y.n, y.c, y.h, y.w};
      e.conv_transpose = std::make_unique<cudnn::ConvTranspose>(std::move(t));
      return absl::OkStatus();
    }();
    notes_[index] = e.status.ok()
                        ? absl::StrCat("legacy cuDNN: ConvTranspose as a backward-data convolution, ",
                                       e.conv_transpose->description(), e.nhwc ? " (NHWC)" : " (NCHW)",
                                       e.cropped_from.empty() ? "" : ", its end cropped (more pad after than before)")
                        : absl::StrCat("host reference kernel (cuDNN not used: ", e.status.message(), ")");
  }
  if (!e.status.ok()) return RunOnHost(step, values);
  absl::StatusOr<DeviceTensor> in = ToLayout(*x, e.nhwc, stream_);
  if (!in.ok()) return in.status();
  absl::StatusOr<DeviceTensor> w = Bound({node.inputs[1], e.nhwc, {}}, values);
  if (!w.ok()) return w.status();
  DeviceTensor bias, workspace;
  if (has_bias) {
    absl::StatusOr<DeviceTensor> b = Input(node.input(2), values);
    if (!b.ok()) return b.status();
    bias = *std::move(b);
  }
  if (e.conv_transpose->workspace_bytes() > 0) {
    absl::StatusOr<DeviceTensor> ws = DeviceTensor::Allocate(
        ir::DType::kUint8, {static_cast<int64_t>(e.conv_transpose->workspace_bytes())}, false, stream_);
    if (!ws.ok()) return ws.status();
    workspace = *std::move(ws);
  }
  const std::vector<int64_t>& computed = e.cropped_from.empty() ? e.out_dims : e.cropped_from;
  absl::StatusOr<DeviceTensor> full = DeviceTensor::Allocate(x->dtype, computed, e.nhwc, stream_);
  if (!full.ok()) return full.status();
  CUDNN_RETURN_IF_NOT_OK(
      e.conv_transpose->Run(cudnn_, in->data(), w->data(), bias.data(), full->data(), workspace.data()));
  if (e.cropped_from.empty()) {
    values[step.outputs[0]] = *std::move(full);
    return absl::OkStatus();
  }
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(x->dtype, e.out_dims, e.nhwc, stream_);
  if (!out.ok()) return out.status();
  CUDNN_RETURN_IF_NOT_OK(CopyCrop(*full, *out, stream_));
  values[step.outputs[0]] = *std::move(out);
  return absl::OkStatus();
}

}  // namespace exec
