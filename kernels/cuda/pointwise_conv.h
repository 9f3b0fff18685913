// Own CUDA kernel: a 1x1 convolution with few input channels (ONNX Conv, kernel 1x1, stride 1, no
// pads, group 1, C_in a multiple of 8 up to 64), or a small-window conv over 8- or 16-byte input pixels (a
// stem conv on channel-padded input, e.g. 3x3 stride 2 on 4 fp16 channels: the taps are the K of the
// same matrix product), on NHWC tensors, with an optional bias and a fused activation; float16 or bfloat16 storage on
// tensor cores, or float32 computed in TF32 (what the tf32 precision allows), float accumulation. Such convs
// (EfficientNet's and MobileNetV2's expand convs: 16 -> 96 channels at 112x112) are bound by writing their output, and
// cuDNN's engines run them far below memory speed (tf32: 1.8 ms where this kernel takes 0.55); the runtime times this
// kernel against the cuDNN graph (the measured choice) and keeps the faster. Plain C++ interface (no absl) so nvcc
// compiles it; callers turn cudaError_t into a Status.
//
// A warp computes 32 pixels per step (16-bit types; 16 for float32) with WMMA 16x16x16 steps
// (16x16x8 for TF32) over C_in zero-padded to a multiple of 16, the weights and bias in shared
// memory, and writes each 16 x 16 output tile with the bias and activation applied, one 16-byte store
// per lane (float32: the step's whole output rows staged in shared memory, then written as one block).
//
// Usage:
//   PointwiseConvParams p;
//   p.pixels = n * h * w; p.cin = 16; p.cout = 96;
//   p.activation = PointwiseConvParams::kSilu; p.type = FloatType::kFloat16;
//   if (PointwiseConvSupported(p)) ONNXRUN_CUDA_RETURN_IF_ERROR(PointwiseConvNhwc(p, x, w, bias, y, stream));
#ifndef ONNXRUN_KERNELS_CUDA_POINTWISE_CONV_H_
#define ONNXRUN_KERNELS_CUDA_POINTWISE_CONV_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"  // FloatType

namespace kernels::cuda {

// The window of a conv with more than one tap or a stride (a stem conv: 3x3, stride 2, on an input
// whose channels are padded to 8 or 16 bytes). The default is the 1x1 conv: output pixel p reads input
// pixel p.
struct ConvWindow {
  int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
  int in_h = 0, in_w = 0, out_h = 0, out_w = 0;  // read when !OneByOne()

  bool OneByOne() const {
    return kernel_h == 1 && kernel_w == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 && pad_left == 0;
  }
  int Taps() const { return kernel_h * kernel_w; }
};

struct PointwiseConvParams {
  enum Activation { kNone, kRelu, kRelu6, kSilu };

  int64_t pixels = 0;                    // output pixels n * out_h * out_w: rows of y [pixels, cout]
  int cin = 0, cout = 0;                 // channels in and out
  Activation activation = kNone;         // applied after the bias; kRelu6 is min(max(v, 0), 6), kSilu v * sigmoid(v)
  FloatType type = FloatType::kFloat16;  // storage of x, w, bias and y
  bool allow_tf32 = false;               // float32 computed in TF32 (else only a float32 stem, in 3xTF32)
  ConvWindow window;                     // 1x1 unless set
};

// Whether PointwiseConvNhwc computes p: float16, bfloat16 or float32 (in TF32 with allow_tf32, else only
// a window over 4 channels, in 3xTF32: float32's accuracy), pixels >= 1, cout a
// positive multiple of 16 whose weights fit the kernel's 96 KiB of shared memory, and either a 1x1 conv
// with cin in {8, 16, ..., 64} or a window over 8- or 16-byte input pixels (cin 4 or 8 of a 16-bit
// type, 4 of float32) with taps * cin <= 80 and fewer than 2^31 input and output elements. On false, `*reason`
// (if given) points to a static string saying why.
bool PointwiseConvSupported(const PointwiseConvParams& p, const char** reason = nullptr);

// Whether x and y are 16-byte aligned, as PointwiseConvNhwc's vector loads and stores need.
bool PointwiseConvAligned(const void* x, const void* y);

// y[p, co] = activation(sum_ci x[p, ci] * w[co, ci] + bias[co]) on `stream` (with a window: the sum
// also runs over the taps, x's pixels outside the image read as 0).
// x [pixels, cin] (with a window [n, in_h, in_w, cin]) and y [pixels, cout] dense (NHWC flattened);
// w [cout, cin, kernel_h, kernel_w] (ONNX's weights as given); bias [cout] or nullptr. All in p.type, device memory,
// PointwiseConvAligned; y must not overlap the others. Returns cudaErrorInvalidValue when !PointwiseConvSupported(p) or
// the pointers are misaligned, else the launch's error.
cudaError_t PointwiseConvNhwc(const PointwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                              cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_POINTWISE_CONV_H_
