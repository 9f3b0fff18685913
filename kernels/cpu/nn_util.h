// Shared helpers of the nn-family CPU kernels (Conv, ConvTranspose, pools, norms, MatMul, Gemm):
// sliding-window attributes and geometry over concrete shapes, BLAS gemm wrappers, float16
// staging through float32, and the declarations of the family's kernel entry points.
#ifndef ONNXRUN_KERNELS_CPU_NN_UTIL_H_
#define ONNXRUN_KERNELS_CPU_NN_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/half.h"
#include "ir/tensor.h"
#include "kernels/cpu/kernel.h"
#include "ops/window_attrs.h"

namespace kernels::cpu::nn {

using ops::AutoPad;
using ops::kMaxWindowValue;

// A scratch buffer of rows * cols elements of T; an error (not a crash) past ir::kMaxTensorBytes.
template <typename T>
absl::StatusOr<std::vector<T>> ScratchBuffer(int64_t rows, int64_t cols) {
  const int64_t limit = ir::kMaxTensorBytes / static_cast<int64_t>(sizeof(T));
  if (rows < 0 || cols < 0 || (rows > 0 && cols > limit / rows)) {
    return absl::ResourceExhaustedError("scratch buffer too large");
  }
  return std::vector<T>(static_cast<size_t>(rows * cols));
}

// The same, left uninitialized, for a buffer the caller writes in full before reading (im2col).
template <typename T>
absl::StatusOr<std::unique_ptr<T[]>> UninitializedScratch(int64_t rows, int64_t cols) {
  const int64_t limit = ir::kMaxTensorBytes / static_cast<int64_t>(sizeof(T));
  if (rows < 0 || cols < 0 || (rows > 0 && cols > limit / rows)) {
    return absl::ResourceExhaustedError("scratch buffer too large");
  }
  return std::unique_ptr<T[]>(new T[static_cast<size_t>(std::max<int64_t>(1, rows * cols))]);
}

// Attributes of a sliding-window op, validated for a given number of spatial dims.
struct WindowAttrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // begins, then ends
  bool ceil_mode = false;
};

// Reads auto_pad, kernel_shape, strides, dilations, pads and ceil_mode. kernel_from_weights is
// the spatial part of W's shape for Conv/ConvTranspose (then kernel_shape must match it when
// present); empty for pools, where kernel_shape is required.
absl::StatusOr<WindowAttrs> ReadWindowAttrs(const ir::Attributes& attrs, size_t spatial,
                                            absl::Span<const int64_t> kernel_from_weights);

// A window op over concrete dims: the image (the larger side: Conv/pool input, ConvTranspose
// output), the grid (one point per window position: Conv/pool output, ConvTranspose input) and,
// per spatial dim, kernel, stride, dilation and the padding before and after the image.
struct WindowGeometry {
  std::vector<int64_t> image;
  std::vector<int64_t> grid;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;
  std::vector<int64_t> pad_end;
};

// Conv/pool geometry: the grid (output dims) computed from the image (input spatial dims).
absl::StatusOr<WindowGeometry> ForwardGeometry(const WindowAttrs& w, absl::Span<const int64_t> input_spatial);
// ConvTranspose geometry: the image (output dims, from output_padding, auto_pad or output_shape)
// computed from the grid (input spatial dims); pad_begin as col2im crops it, pad_end unused (0).
absl::StatusOr<WindowGeometry> TransposeGeometry(const ir::Attributes& attrs, const WindowAttrs& w,
                                                 absl::Span<const int64_t> input_spatial);

int64_t Product(absl::Span<const int64_t> dims);

// An error unless `t` has exactly `shape`.
absl::Status ExpectShape(const ir::Tensor& t, absl::Span<const int64_t> shape, const char* what);

// Row-major C = alpha * op(A) * op(B) + beta * C with A m x k, B k x n (after op), all dense.
absl::Status Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  const float* b, float beta, float* c);
absl::Status Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                  const double* b, double beta, double* c);

// col[(c * K + k) * G + g] = image[c, position of tap k of window g], 0 in the padding
// (K = kernel size, G = grid size). `channels` image planes.
template <typename T>
void Im2Col(const T* image, int64_t channels, const WindowGeometry& geo, T* col);
// The adjoint: accumulates every col entry into its image position (padding taps dropped).
template <typename T>
void Col2Im(const T* col, int64_t channels, const WindowGeometry& geo, T* image);

// True when input 0 is float16 or bfloat16.
bool IsHalf(const KernelContext& ctx);
// Runs `fn` on float32 copies of every float16 or bfloat16 input and output, then converts the outputs back.
absl::Status RunAsFloat32(KernelContext& ctx, KernelFn fn);

// Accumulation type: float for Half, else T itself.
template <typename T>
using Acc = std::conditional_t<ir::kIsHalfLike<T>, float, T>;

// Kernel entry points (one .cc per group).
absl::Status Conv(KernelContext& ctx);                   // nn_conv.cc
absl::Status ConvTranspose(KernelContext& ctx);          // nn_conv.cc
absl::Status MaxPool(KernelContext& ctx);                // nn_pool.cc
absl::Status AveragePool(KernelContext& ctx);            // nn_pool.cc
absl::Status GlobalAveragePool(KernelContext& ctx);      // nn_pool.cc
absl::Status GlobalMaxPool(KernelContext& ctx);          // nn_pool.cc
absl::Status LpPool(KernelContext& ctx);                 // nn_pool.cc
absl::Status GlobalLpPool(KernelContext& ctx);           // nn_pool.cc
absl::Status BatchNormalization(KernelContext& ctx);     // nn_norm.cc
absl::Status InstanceNormalization(KernelContext& ctx);  // nn_norm.cc
absl::Status LayerNormalization(KernelContext& ctx);     // nn_norm.cc
absl::Status GroupNormalization(KernelContext& ctx);     // nn_norm.cc
absl::Status RMSNormalization(KernelContext& ctx);       // nn_norm.cc
absl::Status MatMul(KernelContext& ctx);                 // nn_matmul.cc
absl::Status GemmOp(KernelContext& ctx);                 // nn_matmul.cc

}  // namespace kernels::cpu::nn

#endif  // ONNXRUN_KERNELS_CPU_NN_UTIL_H_
