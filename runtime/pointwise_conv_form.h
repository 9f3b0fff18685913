// Whether a FusedGraph step is a convolution the own pointwise-conv kernel (kernels/cuda/pointwise_conv.h)
// computes, and its parameters: Conv with a 1x1 kernel, strides 1, no pads (or a window: a stem conv),
// group 1, constant weights and optional constant bias, followed by nothing, Relu,
// Clip(0, 6) or x * Sigmoid(x) of the conv's output. No GPU needed. Whether the kernel takes the
// matched sizes and type is kernels::cuda::PointwiseConvSupported's answer (the measured choice
// times the kernel only for steps that match and are supported).
#ifndef ONNXRUN_RUNTIME_POINTWISE_CONV_FORM_H_
#define ONNXRUN_RUNTIME_POINTWISE_CONV_FORM_H_

#include <vector>

#include "absl/status/statusor.h"
#include "exec/plan.h"
#include "kernels/cuda/pointwise_conv.h"

namespace exec {

struct PointwiseConvForm {
  kernels::cuda::PointwiseConvParams params;
  ir::ValueId x = ir::kNoValue, weights = ir::kNoValue, bias = ir::kNoValue;  // bias may be kNoValue
  std::vector<int64_t> out_dims;                                              // logical [N, Cout, H, W]
};

// OK when `conv` is a Conv with constant 1x1 weights [Cout, Cin, 1, 1], a constant bias or none,
// group 1, strides 1 and no pads: what the own 1x1-conv kernel and the folded squeeze-excite gate
// (scaled_conv_form.h) both need of the node; an error saying why not otherwise.
absl::Status CheckOneByOneConv(const ir::Graph& g, const ir::Node& conv);

// The form of `step` when its input has dims `x_dims` ([N, C, H, W]); an error saying why not
// otherwise (e.g. "a dilated window", "Add after the conv"). A conv other than 1x1 matches with its
// window (params.window: the stem convs the kernel takes over 16-byte input pixels; its support rules
// refuse the others). `allow_tf32` (the tf32 precision) lets the
// kernel compute float32 tensors in TF32; strict fp32 forms are refused by its support rules.
absl::StatusOr<PointwiseConvForm> MatchPointwiseConv(const ir::Graph& g, const Step& step,
                                                     const std::vector<int64_t>& x_dims, bool allow_tf32);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_POINTWISE_CONV_FORM_H_
