// The squeeze-excite kernel (squeeze_excite.h): the sample's C inputs into shared memory, then
// both matrix-vector products as warp-per-row dot products (coalesced rows, 16-byte loads where the
// row length allows, four rows at a time so that their loads overlap), W1's into shared hidden
// units, W2's into the block's share of the output channels. The output channels are split over
// several blocks per sample (each recomputes the R hidden units) so that more SMs read the weights.
// The first form (one warp per hidden unit with 2-byte loads, one thread per output channel, 256
// threads) took 62 us per MobileNetV3-Large block (C 960, R 240) at batch 16, slower than cuDNN.
// A version taking 8 samples per block (each weight read serving all of them) ran slower on the
// H200 at every batch (efficientnet_b0 fp16 b256 +3%, b1 +14%). With a map to scale, each block
// then multiplies its channels of a chunk of the sample's pixels by the gates it computed.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/squeeze_excite.h"

namespace kernels::cuda {
namespace {

constexpr int kThreads = 1024;
constexpr int kMinChannelsPerBlock = 64;  // output channels a block computes, at least
constexpr int kRowsPerPass = 4;           // rows a warp sums at once
constexpr size_t kMaxSharedBytes = 48 * 1024;
constexpr int64_t kScaledPerBlock = 16384;  // map elements a block multiplies (scale_map), about

__device__ __forceinline__ float Sigmoid(float v) { return 1.f / (1.f + __expf(-v)); }

__device__ __forceinline__ float Activate(const SqueezeExciteParams& p, float v) {
  return p.activation == SqueezeExciteParams::kRelu ? fmaxf(v, 0.f) : v * Sigmoid(v);
}

__device__ __forceinline__ float Gate(const SqueezeExciteParams& p, float v) {
  return p.gate == SqueezeExciteParams::kSigmoid ? Sigmoid(v) : fminf(fmaxf(p.alpha * v + p.beta, 0.f), 1.f);
}

// For rows r in [first, last) of w (row r at w + r * ld): store(r, sum over k < len of w[r][k] * v[k]).
// One warp per row, its lanes reading V elements each (len a multiple of V, rows 16-byte aligned
// when V > 1); kRowsPerPass rows per pass.
template <typename T, int V, typename Store>
__device__ __forceinline__ void WarpRowDots(const T* __restrict__ w, int64_t ld, int64_t len, int64_t first,
                                            int64_t last, const float* v, Store store) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int64_t r0 = first + warp * kRowsPerPass; r0 < last; r0 += int64_t{warps} * kRowsPerPass) {
    float acc[kRowsPerPass] = {};
    for (int64_t k = lane * V; k < len; k += 32 * V) {
#pragma unroll
      for (int i = 0; i < kRowsPerPass; ++i) {
        if (r0 + i < last) {
          const Pack<T, V> pack = *reinterpret_cast<const Pack<T, V>*>(w + (r0 + i) * ld + k);
#pragma unroll
          for (int j = 0; j < V; ++j) acc[i] += ToFloat(pack.v[j]) * v[k + j];
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kRowsPerPass; ++i) {
      const float sum = WarpSum(acc[i]);
      if (lane == 0 && r0 + i < last) store(r0 + i, sum);
    }
  }
}

// y[n, p, c] = map[n, p, c] * gate[c] for pixels [first_pixel, last_pixel) and channels [first,
// last) of an NHWC map with C channels: V elements per load (V divides last - first and C, and the
// rows are 16-byte aligned when V > 1).
template <typename T, int V>
__device__ __forceinline__ void ScaleMap(const T* __restrict__ map, T* __restrict__ y, int64_t n, int64_t pixels,
                                         int64_t channels, int64_t first, int64_t last, int64_t first_pixel,
                                         int64_t last_pixel, const float* gates) {
  const int64_t vectors = (last - first) / V;
  for (int64_t i = threadIdx.x; i < (last_pixel - first_pixel) * vectors; i += blockDim.x) {
    const int64_t c = first + (i % vectors) * V;
    const int64_t at = (n * pixels + first_pixel + i / vectors) * channels + c;
    Pack<T, V> pack = *reinterpret_cast<const Pack<T, V>*>(map + at);
#pragma unroll
    for (int j = 0; j < V; ++j) pack.v[j] = FromFloat<T>(ToFloat(pack.v[j]) * gates[c - first + j]);
    *reinterpret_cast<Pack<T, V>*>(y + at) = pack;
  }
}

// Output channels of each of `parts` blocks per sample: with a map to scale, a multiple of `vector`.
__host__ __device__ __forceinline__ int64_t ChannelsPerPart(int64_t channels, int64_t parts, int64_t vector) {
  const int64_t per_part = (channels + parts - 1) / parts;
  return (per_part + vector - 1) / vector * vector;
}

// Block (x, y, z): sample x, output channels of part y, pixels of chunk z (a scale_map's; else 0).
// V1 / V2: elements per load of W1 / W2 rows; VM: of the scaled map (1 without one).
template <typename T, int V1, int V2, int VM>
__global__ void __launch_bounds__(kThreads)
    SqueezeExciteKernel(SqueezeExciteParams p, const T* __restrict__ x, T* __restrict__ y) {
  extern __shared__ float shared[];
  float* pooled = shared;
  float* hidden = shared + p.channels;
  float* gates = hidden + p.reduced;  // this block's gates (scale_map)
  const int64_t n = blockIdx.x;
  for (int64_t c = threadIdx.x; c < p.channels; c += blockDim.x) {
    pooled[c] =
        p.channel_sums != nullptr ? p.channel_sums[n * p.channels + c] * p.sums_scale : ToFloat(x[n * p.channels + c]);
  }
  __syncthreads();
  const T* b1 = static_cast<const T*>(p.b1);
  WarpRowDots<T, V1>(
      static_cast<const T*>(p.w1), p.channels, p.channels, 0, p.reduced, pooled,
      [&](int64_t r, float sum) { hidden[r] = Activate(p, sum + (b1 != nullptr ? ToFloat(b1[r]) : 0.f)); });
  __syncthreads();
  const T* b2 = static_cast<const T*>(p.b2);
  const int64_t per_part = ChannelsPerPart(p.channels, gridDim.y, VM);
  const int64_t first = blockIdx.y * per_part, last = min(p.channels, first + per_part);
  const T* map = static_cast<const T*>(p.scale_map);
  WarpRowDots<T, V2>(static_cast<const T*>(p.w2), p.w2_row, p.reduced, first, last, hidden, [&](int64_t c, float sum) {
    const float gate = Gate(p, sum + (b2 != nullptr ? ToFloat(b2[c]) : 0.f));
    if (map != nullptr) {
      gates[c - first] = gate;
    } else {
      y[n * p.channels + c] = FromFloat<T>(gate);
    }
  });
  if (map == nullptr || first >= last) return;
  __syncthreads();
  const int64_t per_chunk = (p.map_pixels + gridDim.z - 1) / gridDim.z;
  const int64_t first_pixel = blockIdx.z * per_chunk, last_pixel = min(p.map_pixels, first_pixel + per_chunk);
  ScaleMap<T, VM>(map, y, n, p.map_pixels, p.channels, first, last, first_pixel, last_pixel, gates);
}

// 16 / sizeof(T) when rows of `len` elements `ld` apart can be read in 16-byte loads from `w`, else 1.
template <typename T>
int VectorFor(const void* w, int64_t ld, int64_t len) {
  constexpr int kWide = 16 / sizeof(T);
  return Aligned16(w) && ld % kWide == 0 && len % kWide == 0 ? kWide : 1;
}

// The grid and the scaled map's vector width: blocks per sample (channel parts) and, with a map,
// pixel chunks of about kScaledPerBlock elements each.
struct Launch {
  dim3 grid;
  int map_vector = 1;
};

template <typename T, int V1, int V2>
void LaunchWithMapVector(const SqueezeExciteParams& p, const Launch& l, size_t shared, const T* x, T* y,
                         cudaStream_t stream) {
  constexpr int kWide = 16 / sizeof(T);
  if (l.map_vector == kWide) {
    SqueezeExciteKernel<T, V1, V2, kWide><<<l.grid, kThreads, shared, stream>>>(p, x, y);
  } else {
    SqueezeExciteKernel<T, V1, V2, 1><<<l.grid, kThreads, shared, stream>>>(p, x, y);
  }
}

template <typename T, int V1>
void LaunchWithW2Vector(const SqueezeExciteParams& p, const Launch& l, size_t shared, const T* x, T* y,
                        cudaStream_t stream) {
  constexpr int kWide = 16 / sizeof(T);
  if (VectorFor<T>(p.w2, p.w2_row, p.reduced) == kWide) {
    LaunchWithMapVector<T, V1, kWide>(p, l, shared, x, y, stream);
  } else {
    LaunchWithMapVector<T, V1, 1>(p, l, shared, x, y, stream);
  }
}

}  // namespace

size_t SqueezeExciteSharedBytes(const SqueezeExciteParams& params, bool with_map) {
  const int64_t floats = params.channels * (with_map ? 2 : 1) + params.reduced;
  return floats < 0 ? SIZE_MAX : static_cast<size_t>(floats) * sizeof(float);
}

bool SqueezeExciteFits(const SqueezeExciteParams& params, bool with_map) {
  return SqueezeExciteSharedBytes(params, with_map) <= kMaxSharedBytes;
}

cudaError_t SqueezeExcite(const SqueezeExciteParams& params, const void* x, void* y, cudaStream_t stream) {
  const bool scaling = params.scale_map != nullptr;
  const size_t per_sample = SqueezeExciteSharedBytes(params, scaling);
  if (params.batch < 0 || params.channels <= 0 || params.reduced <= 0 || params.w2_row < params.reduced ||
      per_sample > kMaxSharedBytes || params.w1 == nullptr || params.w2 == nullptr ||
      (scaling && params.map_pixels < 1)) {
    return cudaErrorInvalidValue;
  }
  if (params.batch == 0) return cudaSuccess;
  int sms = 0;
  if (cudaError_t e = DeviceMultiprocessors(&sms); e != cudaSuccess) return e;
  if (params.batch > INT32_MAX) return cudaErrorInvalidValue;
  int64_t parts = std::clamp<int64_t>(sms / params.batch, 1, CeilDiv(params.channels, kMinChannelsPerBlock));
  Launch launch;
  int64_t chunks = 1;
  if (scaling) {
    const int wide = params.type == FloatType::kFloat32 ? 4 : 8;
    const bool vectors = params.channels % wide == 0 && Aligned16(params.scale_map) && Aligned16(y);
    launch.map_vector = vectors ? wide : 1;
    const int64_t per_part = ChannelsPerPart(params.channels, parts, launch.map_vector);
    parts = CeilDiv(params.channels, per_part);  // no empty part
    chunks = std::clamp<int64_t>(CeilDiv(params.map_pixels * per_part, kScaledPerBlock), 1,
                                 std::min<int64_t>(params.map_pixels, 65535));
  }
  launch.grid = dim3(static_cast<unsigned>(params.batch), static_cast<unsigned>(parts), static_cast<unsigned>(chunks));
  DispatchFloatType(params.type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(x);
    T* out = static_cast<T*>(y);
    if (VectorFor<T>(params.w1, params.channels, params.channels) > 1) {
      LaunchWithW2Vector<T, 16 / sizeof(T)>(params, launch, per_sample, in, out, stream);
    } else {
      LaunchWithW2Vector<T, 1>(params, launch, per_sample, in, out, stream);
    }
  });
  return cudaGetLastError();
}

}  // namespace kernels::cuda
