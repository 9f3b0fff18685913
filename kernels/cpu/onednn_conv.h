// Float32 Conv on oneDNN (Debian's libdnnl: JIT kernels for this CPU's vector ISA), 1-3 spatial
// dims, any group count, stride and dilation, pads >= 0, computed channels-last (NHWC: the layout
// of oneDNN's fastest CPU convolutions). An NCHW input is reordered into NHWC first; the output is
// reordered back to NCHW unless the caller (the CPU executor) takes it channels-last, so that a
// chain of convolutions and elementwise ops never leaves NHWC. The weights, reordered into
// oneDNN's layout, are kept in the KernelCache per node and input shape when they are a plan
// constant (reordered every run otherwise).
#ifndef ONNXRUN_KERNELS_CPU_ONEDNN_CONV_H_
#define ONNXRUN_KERNELS_CPU_ONEDNN_CONV_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/nn_util.h"

namespace kernels::cpu::nn {

struct ConvProblem {
  int64_t batch = 0;
  int64_t channels = 0;      // input channels
  int64_t out_channels = 0;  // output channels
  int64_t group = 1;
  const WindowGeometry* geo = nullptr;
};

// y = conv(x, w) + bias (bias may be null), float32 with the problem's NCHW dims; ctx gives the
// node, the cache, whether W (input 1) is a constant, whether x is stored channels-last and whether
// y may be (ctx.channels_last_output says whether it was). Returns false, y untouched, where oneDNN
// does not take the convolution (the caller runs its own).
absl::StatusOr<bool> OneDnnConvFloat(KernelContext& ctx, const ConvProblem& problem, const float* x, const float* w,
                                     const float* bias, float* y);

// The NCHW copy of a float32 rank-4 tensor whose bytes are channels-last (NHWC).
absl::StatusOr<ir::Tensor> ChannelsLastToNchw(const ir::Tensor& t);

}  // namespace kernels::cpu::nn

#endif  // ONNXRUN_KERNELS_CPU_ONEDNN_CONV_H_
