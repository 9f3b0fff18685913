// MatchPointwiseConv: the conv's attributes and weights, then the tail (see pointwise_conv_form.h).
#include "runtime/pointwise_conv_form.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "runtime/device_runner.h"
#include "runtime/fused_lowering.h"  // IsFloat32Stem

namespace exec {
namespace {

using Params = kernels::cuda::PointwiseConvParams;

bool AllEqual(const std::vector<int64_t>& v, int64_t want) {
  return std::all_of(v.begin(), v.end(), [want](int64_t x) { return x == want; });
}

// A constant scalar input of `node` (Clip's min/max), if it has one.
std::optional<double> ConstantScalar(const ir::Graph& g, const ir::Node& node, size_t input) {
  if (node.input(input) == ir::kNoValue) return std::nullopt;
  const auto& constant = g.value(node.input(input)).constant;
  if (!constant || constant->num_elements() != 1) return std::nullopt;
  return constant->GetAsDouble(0);
}

// The activation of the nodes after the conv (which writes `conv_out`).
absl::StatusOr<Params::Activation> TailActivation(const ir::Graph& g, const Step& step, ir::ValueId conv_out) {
  const size_t n = step.nodes.size();
  if (n == 1) return Params::kNone;
  const ir::Node& first = g.node(step.nodes[1]);
  if (first.inputs.empty() || first.inputs[0] != conv_out)
    return absl::UnimplementedError("the tail reads another value");
  if (n == 2 && first.op_type == "Relu") return Params::kRelu;
  if (n == 2 && first.op_type == "Clip") {
    const bool by_inputs = ConstantScalar(g, first, 1) == 0.0 && ConstantScalar(g, first, 2) == 6.0;
    const bool by_attrs = first.attrs.Has("min") && first.attrs.GetFloat("min", 1) == 0.f &&
                          first.attrs.GetFloat("max", 0) == 6.f;  // opset < 11
    if (by_inputs || by_attrs) return Params::kRelu6;
    return absl::UnimplementedError("Clip other than Clip(0, 6)");
  }
  if (n == 3 && first.op_type == "Sigmoid") {
    const ir::Node& mul = g.node(step.nodes[2]);
    const ir::ValueId sig = first.outputs[0];
    const bool silu =
        mul.op_type == "Mul" && mul.inputs.size() == 2 &&
        ((mul.inputs[0] == conv_out && mul.inputs[1] == sig) || (mul.inputs[0] == sig && mul.inputs[1] == conv_out));
    if (silu) return Params::kSilu;
  }
  std::string tail;
  for (size_t k = 1; k < n; ++k) absl::StrAppend(&tail, k > 1 ? "+" : "", g.node(step.nodes[k]).op_type);
  return absl::UnimplementedError(absl::StrCat(tail, " after the conv"));
}

// A Conv with constant 4-D weights, a constant bias or none, and group 1.
absl::Status CheckConstantConv(const ir::Graph& g, const ir::Node& conv) {
  if (conv.op_type != "Conv" || conv.inputs.size() < 2) return absl::UnimplementedError("not a Conv");
  const auto& w = g.value(conv.inputs[1]).constant;
  if (!w || w->shape().size() != 4) return absl::UnimplementedError("not constant 2-D conv weights");
  if (conv.input(2) != ir::kNoValue && !g.value(conv.input(2)).constant) {
    return absl::UnimplementedError("a computed bias");
  }
  if (conv.attrs.GetInt("group", 1) != 1) return absl::UnimplementedError("a grouped conv");
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckOneByOneConv(const ir::Graph& g, const ir::Node& conv) {
  if (absl::Status s = CheckConstantConv(g, conv); !s.ok()) return s;
  const auto& w = g.value(conv.inputs[1]).constant;
  if (w->shape()[2] != 1 || w->shape()[3] != 1) return absl::UnimplementedError("not constant 1x1 weights");
  if (!AllEqual(conv.attrs.GetInts("strides"), 1) || !AllEqual(conv.attrs.GetInts("pads"), 0)) {
    return absl::UnimplementedError("strides or pads");
  }
  return absl::OkStatus();
}

namespace {

// The window of a 2-D conv other than 1x1 (a stem) on an [N, C, H, W] input, from its attributes:
// explicit pads only (auto_pad NOTSET), no dilation.
absl::StatusOr<kernels::cuda::ConvWindow> ConvWindowOf(const ir::Node& conv, const std::vector<int64_t>& w_dims,
                                                       const std::vector<int64_t>& x_dims) {
  if (conv.attrs.GetString("auto_pad", "NOTSET") != "NOTSET") return absl::UnimplementedError("auto_pad");
  if (!AllEqual(conv.attrs.GetInts("dilations"), 1)) return absl::UnimplementedError("a dilated window");
  std::vector<int64_t> strides = conv.attrs.GetInts("strides"), pads = conv.attrs.GetInts("pads");
  if (strides.empty()) strides = {1, 1};
  if (pads.empty()) pads = {0, 0, 0, 0};
  if (strides.size() != 2 || pads.size() != 4) return absl::UnimplementedError("not a 2-D window");
  kernels::cuda::ConvWindow win;
  const int64_t out_h = (x_dims[2] + pads[0] + pads[2] - w_dims[2]) / strides[0] + 1;
  const int64_t out_w = (x_dims[3] + pads[1] + pads[3] - w_dims[3]) / strides[1] + 1;
  const std::vector<int64_t> all = {w_dims[2], w_dims[3], strides[0], strides[1], pads[0],
                                    pads[1],   x_dims[2], x_dims[3],  out_h,      out_w};
  for (int64_t v : all) {
    if (v < 0 || v > (int64_t{1} << 30)) return absl::UnimplementedError("window sizes out of range");
  }
  win.kernel_h = static_cast<int>(w_dims[2]), win.kernel_w = static_cast<int>(w_dims[3]);
  win.stride_h = static_cast<int>(strides[0]), win.stride_w = static_cast<int>(strides[1]);
  win.pad_top = static_cast<int>(pads[0]), win.pad_left = static_cast<int>(pads[1]);
  win.in_h = static_cast<int>(x_dims[2]), win.in_w = static_cast<int>(x_dims[3]);
  win.out_h = static_cast<int>(out_h), win.out_w = static_cast<int>(out_w);
  return win;
}

}  // namespace

absl::StatusOr<PointwiseConvForm> MatchPointwiseConv(const ir::Graph& g, const Step& step,
                                                     const std::vector<int64_t>& x_dims, bool allow_tf32) {
  if (step.nodes.empty() || step.outputs.size() != 1) return absl::UnimplementedError("not a one-output step");
  const ir::Node& conv = g.node(step.nodes[0]);
  if (absl::Status s = CheckConstantConv(g, conv); !s.ok()) return s;
  PointwiseConvForm form;
  form.x = conv.inputs[0];
  form.weights = conv.inputs[1];
  form.bias = conv.input(2);
  const auto& w = g.value(form.weights).constant;
  if (x_dims.size() != 4 || x_dims[1] != w->shape()[1]) return absl::UnimplementedError("not a 2-D conv input");
  if (!CheckOneByOneConv(g, conv).ok()) {  // a window: a stem conv on channel-padded input
    absl::StatusOr<kernels::cuda::ConvWindow> window = ConvWindowOf(conv, w->shape(), x_dims);
    if (!window.ok()) return window.status();
    form.params.window = *window;
  }
  absl::StatusOr<Params::Activation> act = TailActivation(g, step, conv.outputs[0]);
  if (!act.ok()) return act.status();
  const ir::DType dtype = g.value(form.x).type.dtype;
  if (!IsFloat(dtype)) return absl::UnimplementedError(absl::StrCat(ir::DTypeName(dtype), " tensors"));
  if (w->dtype() != dtype || (form.bias != ir::kNoValue && g.value(form.bias).constant->dtype() != dtype)) {
    return absl::UnimplementedError("weights or bias of another type than the input");
  }
  const kernels::cuda::ConvWindow& win = form.params.window;
  const int64_t out_h = win.OneByOne() ? x_dims[2] : win.out_h, out_w = win.OneByOne() ? x_dims[3] : win.out_w;
  form.params.pixels = x_dims[0] * out_h * out_w;
  form.params.cin = static_cast<int>(x_dims[1]);
  form.params.cout = static_cast<int>(w->shape()[0]);
  form.params.activation = *act;
  form.params.type = ToFloatType(dtype);
  form.params.allow_tf32 = allow_tf32 && !IsFloat32Stem(w->shape());
  form.out_dims = {x_dims[0], w->shape()[0], out_h, out_w};
  return form;
}

}  // namespace exec
