// The attention kernel, flash-style: a block takes kWarps query rows of one (batch, head), one row
// per warp; keys and values stream through shared memory in tiles of 32 (read once per block,
// coalesced), each lane scores one key of the tile, and the softmax is kept online (running max
// and sum), so no row of scores is ever stored whole and any number of keys fits.
#include <cuda_fp16.h>

#include <cmath>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/device_math.h"

namespace kernels::cuda {
namespace {

constexpr int kWarps = 8;  // query rows per block (each key/value tile is read once for them)
constexpr int kTile = 32;  // keys per tile: one per lane
constexpr int kMaxHeadSize = 256;
constexpr int kMaxPerLane = kMaxHeadSize / 32;  // output elements each lane accumulates

__device__ float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The score of key j for query row i (scaled query in `query`, key tile row `key`), or -inf.
template <typename T>
__device__ float Score(const AttentionArgs& a, const float* query, const float* key, int64_t b, int64_t h, int64_t i,
                       int64_t j) {
  if (j >= a.kv_seq || (a.causal && j > i)) return -INFINITY;
  const int64_t m = b * a.mask_strides[0] + h * a.mask_strides[1] + i * a.mask_strides[2] + j * a.mask_strides[3];
  if (a.mask_kind == AttentionMask::kBoolean && static_cast<const uint8_t*>(a.mask)[m] == 0) return -INFINITY;
  float dot = 0;
  for (int64_t e = 0; e < a.head_size; ++e) dot += query[e] * key[e];
  if (a.mask_kind == AttentionMask::kAdditive) dot += ToFloat(static_cast<const T*>(a.mask)[m]);
  return dot;
}

template <typename T>
__global__ void AttentionTiled(AttentionArgs a) {
  extern __shared__ float shared[];
  const int key_row = static_cast<int>(a.head_size) + 1;  // padded: lanes read different banks
  float* keys = shared;                                   // kTile x key_row
  float* values = keys + kTile * key_row;                 // kTile x v_head_size
  float* queries = values + kTile * a.v_head_size;        // kWarps x head_size
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t h = blockIdx.y, b = blockIdx.z, i = blockIdx.x * kWarps + warp;
  const int64_t kv_h = h / (a.q_heads / a.kv_heads);
  const bool row = i < a.q_seq;
  float* query = queries + warp * a.head_size;
  if (row) {
    const T* q = static_cast<const T*>(a.q) + b * a.q_strides[0] + h * a.q_strides[1] + i * a.q_strides[2];
    for (int64_t e = lane; e < a.head_size; e += 32) query[e] = ToFloat(q[e * a.q_strides[3]]) * a.scale;
  }
  const T* k = static_cast<const T*>(a.k) + b * a.k_strides[0] + kv_h * a.k_strides[1];
  const T* v = static_cast<const T*>(a.v) + b * a.v_strides[0] + kv_h * a.v_strides[1];
  float acc[kMaxPerLane] = {};
  float running_max = -INFINITY, running_sum = 0;
  for (int64_t start = 0; start < a.kv_seq; start += kTile) {
    __syncthreads();  // the previous tile is no longer read (and the queries are written)
    // Warp w loads rows w, w + kWarps, ... of the tile; its lanes read along the row (coalesced).
    for (int r = warp; r < kTile; r += kWarps) {
      const int64_t j = start + r;
      const bool inside = j < a.kv_seq;
      for (int e = lane; e < a.head_size; e += 32) {
        keys[r * key_row + e] = inside ? ToFloat(k[j * a.k_strides[2] + e * a.k_strides[3]]) : 0.0f;
      }
      for (int e = lane; e < a.v_head_size; e += 32) {
        values[r * a.v_head_size + e] = inside ? ToFloat(v[j * a.v_strides[2] + e * a.v_strides[3]]) : 0.0f;
      }
    }
    __syncthreads();
    if (!row) continue;
    const float s = Score<T>(a, query, keys + lane * key_row, b, h, i, start + lane);
    const float new_max = fmaxf(running_max, WarpMax(s));
    if (new_max == -INFINITY) continue;  // every key so far masked
    const float correction = running_max == -INFINITY ? 0.0f : __expf(running_max - new_max);
    const float p = s == -INFINITY ? 0.0f : __expf(s - new_max);
    running_sum = running_sum * correction + WarpSum(p);
    running_max = new_max;
    for (int c = 0; c < kMaxPerLane; ++c) acc[c] *= correction;
    for (int j = 0; j < kTile; ++j) {
      const float pj = __shfl_sync(0xffffffffu, p, j);
      for (int c = 0; c < kMaxPerLane; ++c) {
        const int64_t e = lane + 32 * c;
        if (e < a.v_head_size) acc[c] += pj * values[j * a.v_head_size + e];
      }
    }
  }
  if (!row) return;
  const float inv = running_sum > 0 ? 1.0f / running_sum : 0.0f;  // all keys masked: zeros
  T* y = static_cast<T*>(a.y) + b * a.y_strides[0] + h * a.y_strides[1] + i * a.y_strides[2];
  for (int c = 0; c < kMaxPerLane; ++c) {
    const int64_t e = lane + 32 * c;
    if (e < a.v_head_size) y[e * a.y_strides[3]] = FromFloat<T>(acc[c] * inv);
  }
}

int64_t SharedBytes(const AttentionArgs& a) {
  return (kTile * (a.head_size + 1) + kTile * a.v_head_size + kWarps * a.head_size) * 4;
}

template <typename T>
cudaError_t Launch(const AttentionArgs& a, cudaStream_t stream) {
  const int64_t shared = SharedBytes(a);
  if (shared > 48 * 1024) {
    cudaError_t e =
        cudaFuncSetAttribute(AttentionTiled<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
    if (e != cudaSuccess) return e;
  }
  const dim3 grid(static_cast<unsigned>((a.q_seq + kWarps - 1) / kWarps), static_cast<unsigned>(a.q_heads),
                  static_cast<unsigned>(a.batch));
  AttentionTiled<T><<<grid, kWarps * 32, shared, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace

int64_t MaxAttentionHeadSize() { return kMaxHeadSize; }

cudaError_t Attention(FloatType type, const AttentionArgs& a, cudaStream_t stream) {
  if (a.batch < 0 || a.q_heads <= 0 || a.kv_heads <= 0 || a.q_heads % a.kv_heads != 0 || a.q_seq < 0 || a.kv_seq < 0 ||
      a.head_size <= 0 || a.head_size > kMaxHeadSize || a.v_head_size < 0 || a.v_head_size > kMaxHeadSize ||
      a.q_seq / kWarps >= 2147483647 || a.q_heads > 65535 || a.batch > 65535) {
    return cudaErrorInvalidValue;
  }
  if (a.batch == 0 || a.q_seq == 0 || a.v_head_size == 0) return cudaSuccess;
  return DispatchFloatType(type, [&](auto tag) { return Launch<decltype(tag)>(a, stream); });
}

}  // namespace kernels::cuda
