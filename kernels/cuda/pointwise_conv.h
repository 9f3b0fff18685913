// Own CUDA kernel: a 1x1 convolution with few input channels (ONNX Conv, kernel 1x1, stride 1, no
// pads, group 1, C_in a multiple of 8 up to 64) on NHWC tensors, with an optional bias and a fused
// activation; float16 or bfloat16 storage on tensor cores, or float32 computed in TF32 (what the tf32
// precision allows), float accumulation. Such convs (EfficientNet's and MobileNetV2's expand convs:
// 16 -> 96 channels at 112x112) are bound by writing their output, and cuDNN's engines run them far
// below memory speed (tf32: 1.8 ms where this kernel takes 0.55); the runtime times this kernel
// against the cuDNN graph (the measured choice) and keeps the faster.
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
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

struct PointwiseConvParams {
  enum Activation { kNone, kRelu, kRelu6, kSilu };

  int64_t pixels = 0;                    // n * h * w: rows of x [pixels, cin] and y [pixels, cout]
  int cin = 0, cout = 0;                 // channels in and out
  Activation activation = kNone;         // applied after the bias; kRelu6 is min(max(v, 0), 6), kSilu v * sigmoid(v)
  FloatType type = FloatType::kFloat16;  // storage of x, w, bias and y
  bool allow_tf32 = false;               // float32 computed in TF32 (else float32 is not supported)
};

// Whether PointwiseConvNhwc computes p: float16, bfloat16 or (allow_tf32) float32, pixels >= 1, cin in
// {8, 16, ..., 64}, cout a positive multiple of 16 whose weights fit the kernel's 96 KiB of shared memory. On false,
// `*reason` (if given) points to a static string saying why.
bool PointwiseConvSupported(const PointwiseConvParams& p, const char** reason = nullptr);

// Whether x and y are 16-byte aligned, as PointwiseConvNhwc's vector loads and stores need.
bool PointwiseConvAligned(const void* x, const void* y);

// y[p, co] = activation(sum_ci x[p, ci] * w[co, ci] + bias[co]) on `stream`.
// x [pixels, cin] and y [pixels, cout] dense (NHWC flattened); w [cout, cin] (ONNX's [Cout, Cin, 1, 1]
// weights as given); bias [cout] or nullptr. All in p.type, device memory, PointwiseConvAligned; y
// must not overlap the others. Returns cudaErrorInvalidValue when !PointwiseConvSupported(p) or the
// pointers are misaligned, else the launch's error.
cudaError_t PointwiseConvNhwc(const PointwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                              cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_POINTWISE_CONV_H_
