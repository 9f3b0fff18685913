// kernels/cudnn/conv_transpose.h: 2-D ConvTranspose (UNet, FCN and GAN decoders, segmentation
// heads) as cuDNN's backward-data convolution. A ConvTranspose of x into y is the data gradient of
// the forward conv that maps y to x: its filter is ONNX's W [C_in, C_out / groups, R, S] read as
// [K, C, R, S] (stored KRSC for kNHWC), its padding the ConvTranspose's begin pads. cuDNN wants
// symmetric pads, so the end pads are folded into how far y reaches past the forward conv's
// natural input extent: y_extent = stride * (x_extent - 1) + dilated kernel - 2 * pad + extra,
// with 0 <= extra < stride (ONNX's output_padding, SAME padding, an explicit output_shape).
// Bias [C_out] optional. Made once (descriptors, algorithm, workspace), run many times.
#ifndef ONNXRUN_KERNELS_CUDNN_CONV_TRANSPOSE_H_
#define ONNXRUN_KERNELS_CUDNN_CONV_TRANSPOSE_H_

#include <cudnn.h>

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/cudnn/legacy.h"

namespace cudnn {

struct ConvTransposeSpec {
  Shape4 x;  // the ConvTranspose input [N, C_in, H, W]
  Shape4 y;  // its output [N, C_out, H_out, W_out]
  int r = 1, s = 1, groups = 1;
  int pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;  // begin pads
  Layout layout = Layout::kNHWC;
  IoType type = IoType::kHalf;
  bool allow_tf32 = false;  // float I/O: false → FMA math only
  bool has_bias = false;
  size_t workspace_limit = size_t{256} << 20;
};

class ConvTranspose {
 public:
  // Needs a handle on a live GPU (the algorithm query does). InvalidArgument when y's extent is
  // not one the backward-data convolution reaches (the caller runs the node elsewhere).
  static absl::StatusOr<ConvTranspose> Create(cudnnHandle_t handle, const ConvTransposeSpec& spec);
  absl::Status Run(cudnnHandle_t handle, const void* x, const void* w, const void* bias, void* y,
                   void* workspace) const;
  size_t workspace_bytes() const { return workspace_; }
  // "backward-data algo 1 math 1 workspace 0", for --explain.
  std::string description() const;

 private:
  ConvTranspose() = default;
  ConvTransposeSpec spec_;
  TensorDescriptor x_, y_, bias_;
  FilterDescriptor w_;
  ConvolutionDescriptor conv_;
  cudnnConvolutionBwdDataAlgo_t algo_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  cudnnMathType_t math_ = CUDNN_DEFAULT_MATH;
  size_t workspace_ = 0;
};

}  // namespace cudnn

#endif  // ONNXRUN_KERNELS_CUDNN_CONV_TRANSPOSE_H_
