// The attention kernel: one block per (query row, head, batch); the row's scores live in shared
// memory; keys are read one row per thread, values one element per thread.
#include <cuda_fp16.h>

#include <cmath>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/device_math.h"

namespace kernels::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int64_t kMaxSharedBytes = 200 * 1024;  // below the H100's 227 KiB per block
constexpr int64_t kMaxHeadSize = 1024;


template <typename T>
__global__ void AttentionRow(AttentionArgs a) {
  extern __shared__ float shared[];
  float* query = shared;                   // head_size
  float* scores = shared + a.head_size;    // kv_seq
  float* reduce = scores + a.kv_seq;       // kThreads
  const int64_t i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t kv_h = h / (a.q_heads / a.kv_heads);
  const T* q = static_cast<const T*>(a.q) + b * a.q_strides[0] + h * a.q_strides[1] + i * a.q_strides[2];
  for (int64_t e = threadIdx.x; e < a.head_size; e += blockDim.x) query[e] = ToFloat(q[e * a.q_strides[3]]) * a.scale;
  __syncthreads();
  const T* k = static_cast<const T*>(a.k) + b * a.k_strides[0] + kv_h * a.k_strides[1];
  float max = -INFINITY;
  for (int64_t j = threadIdx.x; j < a.kv_seq; j += blockDim.x) {
    float s = -INFINITY;
    const int64_t m = b * a.mask_strides[0] + h * a.mask_strides[1] + i * a.mask_strides[2] + j * a.mask_strides[3];
    const bool visible = (!a.causal || j <= i) &&
                         (a.mask_kind != AttentionMask::kBoolean || static_cast<const uint8_t*>(a.mask)[m] != 0);
    if (visible) {
      float dot = 0;
      const T* key = k + j * a.k_strides[2];
      for (int64_t e = 0; e < a.head_size; ++e) dot += query[e] * ToFloat(key[e * a.k_strides[3]]);
      s = dot;
      if (a.mask_kind == AttentionMask::kAdditive) s += ToFloat(static_cast<const T*>(a.mask)[m]);
    }
    scores[j] = s;
    max = fmaxf(max, s);
  }
  max = BlockReduce(max, [](float x, float y) { return fmaxf(x, y); }, reduce);
  float sum = 0;
  for (int64_t j = threadIdx.x; j < a.kv_seq; j += blockDim.x) {
    const float p = max == -INFINITY ? 0.0f : __expf(scores[j] - max);
    scores[j] = p;
    sum += p;
  }
  sum = BlockReduce(sum, [](float x, float y) { return x + y; }, reduce);
  const float inv = sum > 0 ? 1.0f / sum : 0.0f;
  const T* v = static_cast<const T*>(a.v) + b * a.v_strides[0] + kv_h * a.v_strides[1];
  T* y = static_cast<T*>(a.y) + b * a.y_strides[0] + h * a.y_strides[1] + i * a.y_strides[2];
  for (int64_t e = threadIdx.x; e < a.v_head_size; e += blockDim.x) {
    float acc = 0;
    for (int64_t j = 0; j < a.kv_seq; ++j) acc += scores[j] * ToFloat(v[j * a.v_strides[2] + e * a.v_strides[3]]);
    y[e * a.y_strides[3]] = FromFloat<T>(acc * inv);
  }
}

int64_t SharedBytes(int64_t head_size, int64_t kv_seq) { return (head_size + kv_seq + kThreads) * 4; }

template <typename T>
cudaError_t Launch(const AttentionArgs& a, cudaStream_t stream) {
  const int64_t shared = SharedBytes(a.head_size, a.kv_seq);
  if (shared > 48 * 1024) {
    cudaError_t e = cudaFuncSetAttribute(AttentionRow<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(shared));
    if (e != cudaSuccess) return e;
  }
  const dim3 grid(static_cast<unsigned>(a.q_seq), static_cast<unsigned>(a.q_heads), static_cast<unsigned>(a.batch));
  AttentionRow<T><<<grid, kThreads, shared, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace

int64_t MaxAttentionKeys() { return kMaxSharedBytes / 4 - kMaxHeadSize - kThreads; }

cudaError_t Attention(FloatType type, const AttentionArgs& a, cudaStream_t stream) {
  if (a.batch < 0 || a.q_heads <= 0 || a.kv_heads <= 0 || a.q_heads % a.kv_heads != 0 || a.q_seq < 0 ||
      a.kv_seq < 0 || a.head_size <= 0 || a.head_size > kMaxHeadSize || a.v_head_size < 0 ||
      a.kv_seq > MaxAttentionKeys() || a.q_seq > 2147483647 || a.q_heads > 65535 || a.batch > 65535) {
    return cudaErrorInvalidValue;
  }
  if (a.batch == 0 || a.q_seq == 0 || a.v_head_size == 0) return cudaSuccess;
  return type == FloatType::kFloat16 ? Launch<__half>(a, stream) : Launch<float>(a, stream);
}

}  // namespace kernels::cuda
