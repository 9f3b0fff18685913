// Own CUDA kernel: scaled-dot-product attention (flash-style tiles, online softmax), the fallback rung of
// Attention steps on the GPU (the first rung is cuDNN's fused attention graph, see
// runtime/cuda_steps_attention.cc). Inputs are float32 or float16, addressed through strides, so
// 4-D [B, H, S, D] tensors and 3-D [B, S, H*D] ones are read where they are; grouped-query
// attention reads key/value head h / (q_heads / kv_heads). Scores, softmax and the weighted sum in
// float; a row whose keys are all masked gives zeros (as ONNX's Attention).
// Plain C++ interface (no absl) so nvcc compiles it; callers turn cudaError_t into a Status.
#ifndef ONNXRUN_KERNELS_CUDA_ATTENTION_H_
#define ONNXRUN_KERNELS_CUDA_ATTENTION_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"

namespace kernels::cuda {

enum class AttentionMask { kNone, kAdditive, kBoolean };

struct AttentionArgs {
  const void *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr;
  void* y = nullptr;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_seq = 0, kv_seq = 0, head_size = 0, v_head_size = 0;
  // Element strides of (batch, head, position, element) for q, k, v, y; of (batch, head, query,
  // key) for the mask (0 along broadcast dims).
  int64_t q_strides[4] = {}, k_strides[4] = {}, v_strides[4] = {}, y_strides[4] = {}, mask_strides[4] = {};
  AttentionMask mask_kind = AttentionMask::kNone;  // additive masks have the dtype of q
  float scale = 1;
  bool causal = false;  // key j is seen by query i when j <= i
};

// The largest head size (of Q/K and of V) the kernel takes (each lane keeps head/32 sums).
int64_t MaxAttentionHeadSize();

// Y = softmax(scale * Q K^T + mask) V. cudaErrorInvalidValue for bad sizes or a head larger than
// MaxAttentionHeadSize().
cudaError_t Attention(FloatType type, const AttentionArgs& args, cudaStream_t stream);

}  // namespace kernels::cuda

#endif  // ONNXRUN_KERNELS_CUDA_ATTENTION_H_
