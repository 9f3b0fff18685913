// Own CUDA kernel of GridSample over two spatial dims: X [N, C, H, W] read through its stored
// strides (NCHW or NHWC), a dense grid [N, Ho, Wo, 2] of normalized (x, y) coordinates, a dense
// Y [N, C, Ho, Wo]; bilinear, nearest (ties to even) or bicubic (Keys, a = -0.75) interpolation,
// zeros / border / reflection padding, align_corners, math in double: the CPU kernel's arithmetic
// (kernels/cpu/vision_grid_sample.cc) point by point. One thread per output element. Plain C++
// interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_GRID_SAMPLE_H_
#define ONNXRUN_KERNELS_CUDA_GRID_SAMPLE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"  // FloatType

namespace kernels::cuda {

enum class GridMode { kLinear, kNearest, kCubic };
enum class GridPadding { kZeros, kBorder, kReflection };

struct GridSampleParams {
  int64_t n = 0, c = 0, h = 0, w = 0;  // X
  int64_t out_h = 0, out_w = 0;        // the grid's spatial dims
  int64_t x_strides[4] = {};           // X's element strides for n, c, h, w
  GridMode mode = GridMode::kLinear;
  GridPadding padding = GridPadding::kZeros;
  bool align_corners = false;
};

// x_type: X's and Y's element type; grid_type: the grid's (an fp16 plan may keep a float32 grid).
cudaError_t GridSample(FloatType x_type, FloatType grid_type, const void* x, const void* grid, void* y,
                       const GridSampleParams& params, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_GRID_SAMPLE_H_
