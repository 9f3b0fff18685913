// A row-major matmul D[M, N] = act(X[M, K] * W[K, N] (+ bias[N]) (+ residual[M, N])) on cuBLASLt, float16
// or bfloat16 with float accumulation (float32 in float32 or TF32): the same kernels PyTorch runs for
// its Linear layers; optionally a batch of them over dense [batch, M, K] / [batch, M, N] tensors, W
// shared or one per batch entry (the squeeze-excite 1x1 conv with per-sample weights). The
// runtime times it (with its ReLU / GELU epilogue, or the own epilogue kernel for what it cannot
// apply) against the step's cuDNN operation graph; on the H200, cuDNN's engines took 50 us for
// BERT-base's 4096x768 * 768x3072 matmul where cuBLAS takes 31 us. libcublasLt is loaded when first needed (dlopen), so
// a machine without it only loses this candidate. Layering: CUDA, Abseil only.
//
// Usage:
//   LtMatmulShape s{.m = 4096, .n = 3072, .k = 768, .type = CUDA_R_16F};
//   s.bias = bias_ptr;  // constant for the plan's life; or nullptr
//   s.activation = LtMatmulShape::Activation::kGeluTanh;  // after the bias; none with a residual
//   absl::StatusOr<LtMatmul> mm = LtMatmul::Create(s);
//   mm->Run(x, w, residual_or_null, d, workspace, stream);  // workspace: mm->workspace_bytes()
//   (time mm->WithAlgorithm(i) for i < mm->algorithm_count() to pick another of cuBLASLt's algorithms)
#ifndef ONNXRUN_KERNELS_CUBLAS_LT_MATMUL_H_
#define ONNXRUN_KERNELS_CUBLAS_LT_MATMUL_H_

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kernels::cublas {

struct LtMatmulShape {
  // What cuBLASLt applies after the bias (before a residual is not possible: with an activation
  // there is no residual). kGeluTanh is cuBLASLt's GELU, 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))).
  enum class Activation { kNone, kRelu, kGeluTanh };
  int64_t m = 0, n = 0, k = 0;
  cudaDataType_t type = CUDA_R_16F;  // of X, W, D, the residual and the bias: CUDA_R_16F, CUDA_R_16BF, CUDA_R_32F
  bool tf32 = false;                 // CUDA_R_32F only: multiply in TF32 (else in float32)
  const void* bias = nullptr;        // n elements in device memory, added to every row; or null
  bool residual = false;             // Run adds a [m, n] tensor (beta = 1); not with an activation
  Activation activation = Activation::kNone;
  int64_t batch = 1;           // matmuls: X, D and the residual dense [batch, m, k] / [batch, m, n]
  int64_t w_batch_stride = 0;  // elements between batch entries of W: 0 (shared) or k * n
  bool w_transposed = false;   // W stored [n, k] row-major (a 1x1 conv's KRSC weight, a Linear's), not [k, n]
};

class LtMatmul {
 public:
  LtMatmul() = delete;

  // Descriptors and cuBLASLt's heuristic algorithms for `shape` (up to 8, best first; the first is
  // selected); Unavailable when the library cannot be loaded or offers no algorithm.
  static absl::StatusOr<LtMatmul> Create(const LtMatmulShape& shape);

  int algorithm_count() const;
  // This matmul with heuristic algorithm `i` (0 <= i < algorithm_count()) selected, to time them.
  LtMatmul WithAlgorithm(int i) const;

  // Every pointer 16-byte aligned (InvalidArgument otherwise); `residual` set iff shape.residual.
  absl::Status Run(const void* x, const void* w, const void* residual, void* d, void* workspace,
                   cudaStream_t stream) const;
  size_t workspace_bytes() const;
  const LtMatmulShape& shape() const;

 private:
  struct State;
  explicit LtMatmul(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
  int chosen_ = 0;
};

}  // namespace kernels::cublas

#endif  // ONNXRUN_KERNELS_CUBLAS_LT_MATMUL_H_
