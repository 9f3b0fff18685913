// Own CUDA kernel: depthwise 2-D convolution (ONNX Conv with group == C == K) on NHWC tensors, float32
// or float16 storage with float accumulation, with an optional bias and a fused activation. Meant to
// replace cuDNN's legacy depthwise convolution (about 400 GB/s on an H100 for MobileNetV2's layers).
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
//
// Paths (chosen inside DepthwiseConvNhwc, invisible to the caller):
//  - tiled: R x S in {3x3, 5x5, 7x7}, stride_w in {1, 2}, dilation_w == 1 (stride_h, dilation_h any).
//    A thread computes 4 adjacent output columns of an output row for V adjacent channels (8 bytes of
//    channels for 3x3: V = 4 float16 / 2 float32; 4 bytes for 5x5 / 7x7: 2 float16 / 1 float32; narrower
//    when C or the x / y addresses are not multiples of the vector), with its weights in registers, so
//    loads and stores are vectors coalesced along C and the input columns shared by the 4 outputs are
//    read once; a thread loops over output rows. For 5x5 and 7x7 filters at large batches a thread
//    computes a strip of consecutive output rows and keeps the R input rows in registers, loading
//    only stride_h new rows per output row (stride_h 1 or 2, no dilation in H): EfficientNet's 5x5
//    layers read each input row once instead of 5 times.
//  - shared tiles (depthwise_conv_shared.cu; p.kernel = kSharedTiles): 5x5 and 7x7 filters with
//    equal strides 1 or 2 and no dilation, without channel sums: a block stages the input rows of a
//    few output rows in shared memory and each thread computes 4 outputs of one row for its channel
//    vector from there (about 96 registers, the register-tiled kernel 118-254 for these filters). Faster
//    where the register-tiled kernel has too few rows per thread to keep input rows (batch 32 on an
//    H200: 14x14x480 0.017 against 0.026 ms), slower at batch 256; callers time both.
//  - generic: every other valid shape; one thread per output element, weights read from cache.
//
// Usage:
//   DepthwiseConvParams p;
//   p.n = 256; p.c = 32; p.h = p.w = 112; p.r = p.s = 3;
//   p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
//   p.out_h = p.out_w = 112; p.activation = DepthwiseConvParams::kRelu6; p.fp16 = true;
//   if (DepthwiseConvSupported(p)) ONNXRUN_CUDA_RETURN_IF_ERROR(DepthwiseConvNhwc(p, x, w, bias, y, stream));
#ifndef ONNXRUN_KERNELS_CUDA_DEPTHWISE_CONV_H_
#define ONNXRUN_KERNELS_CUDA_DEPTHWISE_CONV_H_

#include <cuda_runtime_api.h>

namespace kernels::cuda {

struct DepthwiseConvParams {
  enum Activation { kNone, kRelu, kRelu6, kSilu };

  int n = 0, c = 0, h = 0, w = 0;  // input [n, h, w, c]
  int r = 0, s = 0;                // filter height, width
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  int out_h = 0, out_w = 0;       // must equal (h + pads - ((r - 1) * dilation_h + 1)) / stride_h + 1
  Activation activation = kNone;  // applied after the bias; kRelu6 is min(max(v, 0), 6), kSilu v * sigmoid(v)
  bool fp16 = false;              // storage of x, w, bias and y: float16 if true, else float32
  int rows_per_thread = 0;        // 5x5 / 7x7 tiled path: rows per strip (0: chosen by size)
  // Which kernel computes 5x5 / 7x7 filters: the register-tiled one, or the shared-memory tile one
  // where DepthwiseConvSharedTilesFit(p) and no channel sums are asked (else the register-tiled).
  enum Kernel { kRegisterTiles, kSharedTiles };
  Kernel kernel = kRegisterTiles;
};

// Whether DepthwiseConvNhwc computes p: every dimension, stride and dilation >= 1, pads >= 0, out_h /
// out_w as the formula above, per-image tensors (padded input, output), the weights and n * out_h under
// 2^31 elements, c < 2^24; any filter size, stride and dilation otherwise. On false,
// `*reason` (if given) points to a static string saying why; the caller keeps its cuDNN path then.
bool DepthwiseConvSupported(const DepthwiseConvParams& p, const char** reason = nullptr);

// Whether DepthwiseConvNhwc can also sum its output per channel (the tiled path's shapes: square
// 3x3, 5x5 or 7x7 filters, stride_w 1 or 2, no dilation in W).
bool DepthwiseConvSumsChannels(const DepthwiseConvParams& p);

// Whether the shared-tile kernel takes p (see Kernel) and has at least one tile (image x channel
// chunk x column and row tile) per SM of the current device: worth timing against the register-
// tiled kernel. Smaller convolutions (batch 1) leave SMs idle on it.
bool DepthwiseConvSharedTilesFit(const DepthwiseConvParams& p);

// y = activation(depthwise_conv(x, w) + bias) on `stream`.
// x [n, h, w, c] and y [n, out_h, out_w, c] dense NHWC; w [c, r, s] dense (ONNX's [C, 1, R, S] weights
// as given); bias [c] or nullptr. All in the storage type of p.fp16, device memory, naturally aligned;
// y must not overlap x, w or bias. With `channel_sums` (float32 [n, c], device memory, zeroed by the
// caller; only where DepthwiseConvSumsChannels(p)) the kernel also adds, per image and channel, the
// sum of y's stored values over the output pixels (float atomics: the order of the additions, and
// so the last bits, vary between runs) — a GlobalAveragePool of y without reading it again.
// Returns cudaErrorInvalidValue when !DepthwiseConvSupported(p) (or sums are asked where they are
// not computed), else the launch's error.
cudaError_t DepthwiseConvNhwc(const DepthwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                              cudaStream_t stream, float* channel_sums = nullptr);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_DEPTHWISE_CONV_H_
