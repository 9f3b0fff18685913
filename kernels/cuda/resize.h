// Own CUDA kernel: Resize of a tensor of rank <= kMaxRank read through strides (any stored layout)
// into a dense row-major output. Every mode (nearest, linear, cubic incl. exclude_outside) and
// every coordinate_transformation_mode of the host reference; nearest moves bytes (any dtype of 1,
// 2, 4 or 8 bytes), linear and cubic compute float32/float16 in double. Source coordinates and
// weights follow kernels/cpu/reduce_resize_resize.cc operation by operation (in double, or for
// nearest's usual coordinate modes in float32 as ONNX Runtime does, without fused multiply-adds
// where they would change a nearest index), so nearest indices agree exactly.
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_RESIZE_H_
#define ONNXRUN_KERNELS_CUDA_RESIZE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/strided_copy.h"

namespace kernels::cuda {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class ResizeCoordinate {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
  kHalfPixelSymmetric
};
// kSimple: Upsample's and Resize-10's rounding (floor when an axis enlarges, ceil when it shrinks).
enum class NearestRounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeAxis {
  int64_t in_len = 0;
  int64_t out_len = 0;
  int64_t in_stride = 0;  // elements
  double scale = 1;       // the scales input's value, or out_len / in_len from sizes
  double roi_start = 0;   // tf_crop_and_resize only
  double roi_end = 1;
};

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoordinate coordinate = ResizeCoordinate::kHalfPixel;
  NearestRounding nearest = NearestRounding::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  int rank = 0;
  ResizeAxis axes[kMaxRank];
};

// Whether the kernels cover these parameters as the host reference does: rank in range, positive
// finite scales, no empty axis resized to a non-empty one, and every source coordinate finite and
// within 1e15 (the host reference reports an error for the others).
bool ResizeCovered(const ResizeParams& params);

// Nearest: out = in at the nearest source index of every axis, or `outside_bits` (one element's
// bytes: the extrapolation value) where tf_crop_and_resize samples outside the input.
cudaError_t ResizeNearest(const ResizeParams& params, const void* in, void* out, int element_bytes,
                          uint64_t outside_bits, cudaStream_t stream);

// Linear and cubic: the separable interpolation as one weighted sum per output element; samples
// outside the input (tf_crop_and_resize) are `extrapolation`.
cudaError_t ResizeInterpolate(const ResizeParams& params, FloatType type, const void* in, void* out,
                              double extrapolation, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_RESIZE_H_
