// The 1x1-conv kernel of pointwise_conv.h on tensor cores (WMMA 16x16x16, float accumulation): a
// warp per 16 pixels, weights in shared memory; and the support rules.
#include <mma.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/pointwise_conv.h"

namespace kernels::cuda {
namespace {

using Activation = PointwiseConvParams::Activation;
namespace wmma = nvcuda::wmma;

constexpr int kWarps = 4;  // per block; each warp owns tiles of 16 pixels
constexpr int kThreads = 32 * kWarps;
constexpr int kTile = 16;  // the mma shape: 16 x 16 x 16
constexpr int kMaxCin = 64;
constexpr size_t kMaxSharedBytes = 48 * 1024;  // without the opt-in for more

__host__ __device__ constexpr int PaddedCin(int cin) { return (cin + kTile - 1) / kTile * kTile; }

// Shared memory: weights [cout][kpad] (16-bit, zero-padded along cin), bias [cout] (float), and per
// warp an input tile [16][kpad] (16-bit) and an output tile [16][16] (float).
size_t SharedBytes(int cin, int cout) {
  const size_t kpad = PaddedCin(cin);
  return (cout * kpad * 2 + cout * sizeof(float) + kWarps * (kTile * kpad * 2 + kTile * kTile * sizeof(float)) + 31) /
         32 * 32;
}

static_assert(PointwiseConvParams::kNone == kConvActNone && PointwiseConvParams::kRelu == kConvActRelu &&
              PointwiseConvParams::kRelu6 == kConvActRelu6 && PointwiseConvParams::kSilu == kConvActSilu);
__device__ __forceinline__ float Activate(Activation act, float v) { return ApplyConvActivation(act, v); }

// Copies `rows` rows of `cin` elements from src (dense, 16-byte aligned rows: cin is a multiple of 8)
// into dst [kTile][kpad], zero-filling the padding columns and the rows past `rows`, 8 elements
// (16 bytes) per lane and step; the calling warp's lanes share the work.
template <typename T>
__device__ __forceinline__ void StageInputTile(const T* src, int rows, int cin, int kpad, T* dst) {
  for (int i = threadIdx.x % 32; i < kTile * kpad / 8; i += 32) {
    const int r = i / (kpad / 8), k = (i % (kpad / 8)) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);  // 8 zeros of either 16-bit type
    if (r < rows && k < cin) v = *reinterpret_cast<const uint4*>(src + r * cin + k);
    *reinterpret_cast<uint4*>(dst + r * kpad + k) = v;
  }
}

// The 16 x 16 float tile `c` (rows = pixels p0.., columns = channels n0..) plus bias, activated and
// stored: lane l writes row l / 2, channels (l % 2) * 8 .. + 8, as one 16-byte store.
template <typename T>
__device__ __forceinline__ void StoreOutputTile(const float* c, const float* bias, int n0, int rows, int cout,
                                                Activation act, T* y) {
  const int lane = threadIdx.x % 32, r = lane / 2, c0 = (lane % 2) * 8;
  if (r >= rows) return;
  const float4* cv = reinterpret_cast<const float4*>(c + r * kTile + c0);
  const float4* bv = reinterpret_cast<const float4*>(bias + n0 + c0);
  const float4 c_lo = cv[0], c_hi = cv[1], b_lo = bv[0], b_hi = bv[1];
  const float sums[8] = {c_lo.x + b_lo.x, c_lo.y + b_lo.y, c_lo.z + b_lo.z, c_lo.w + b_lo.w,
                         c_hi.x + b_hi.x, c_hi.y + b_hi.y, c_hi.z + b_hi.z, c_hi.w + b_hi.w};
  uint4 raw;
  T* out = reinterpret_cast<T*>(&raw);
#pragma unroll
  for (int j = 0; j < 8; ++j) out[j] = FromFloat<T>(Activate(act, sums[j]));
  *reinterpret_cast<uint4*>(y + static_cast<int64_t>(r) * cout + n0 + c0) = raw;
}

// y = act(x w^T + bias) on tensor cores: each warp takes tiles of 16 pixels (grid-stride), stages the
// tile's inputs in shared memory, and for each 16 output channels accumulates kpad / 16 mma steps in
// float, then writes them through its shared output tile.
template <typename T, int kKTiles>
__global__ void __launch_bounds__(kThreads)
    PointwiseConvKernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias, T* __restrict__ y,
                        int64_t pixels, int cin, int cout, Activation act) {
  extern __shared__ float4 shared[];
  constexpr int kpad = kKTiles * kTile;
  T* sw = reinterpret_cast<T*>(shared);
  float* sbias = reinterpret_cast<float*>(sw + cout * kpad);
  T* sx = reinterpret_cast<T*>(sbias + cout) + (threadIdx.x / 32) * kTile * kpad;
  float* sc = reinterpret_cast<float*>(reinterpret_cast<T*>(sbias + cout) + kWarps * kTile * kpad) +
              (threadIdx.x / 32) * kTile * kTile;
  for (int i = threadIdx.x; i < cout * kpad; i += blockDim.x) {
    const int n = i / kpad, k = i % kpad;
    sw[i] = k < cin ? w[n * cin + k] : FromFloat<T>(0.f);
  }
  for (int i = threadIdx.x; i < cout; i += blockDim.x) sbias[i] = bias != nullptr ? ToFloat(bias[i]) : 0.f;
  __syncthreads();
  const int64_t tiles = (pixels + kTile - 1) / kTile;
  const int64_t warp = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  for (int64_t t = warp; t < tiles; t += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t p0 = t * kTile;
    const int rows = static_cast<int>(pixels - p0 < kTile ? pixels - p0 : kTile);
    StageInputTile(x + p0 * cin, rows, cin, kpad, sx);
    __syncwarp();
    wmma::fragment<wmma::matrix_a, kTile, kTile, kTile, T, wmma::row_major> a[kKTiles];
#pragma unroll
    for (int k = 0; k < kKTiles; ++k) wmma::load_matrix_sync(a[k], sx + k * kTile, kpad);
    for (int n0 = 0; n0 < cout; n0 += kTile) {
      wmma::fragment<wmma::accumulator, kTile, kTile, kTile, float> acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int k = 0; k < kKTiles; ++k) {
        wmma::fragment<wmma::matrix_b, kTile, kTile, kTile, T, wmma::col_major> b;
        wmma::load_matrix_sync(b, sw + n0 * kpad + k * kTile, kpad);
        wmma::mma_sync(acc, a[k], b, acc);
      }
      wmma::store_matrix_sync(sc, acc, kTile, wmma::mem_row_major);
      __syncwarp();
      StoreOutputTile(sc, sbias, n0, rows, cout, act, y + p0 * cout);
      __syncwarp();
    }
  }
}

// Blocks for `pixels`: enough to fill every multiprocessor, at most one tile per warp.
cudaError_t GridFor(int64_t pixels, size_t shared_bytes, int* grid) {
  int sms = 0;
  if (cudaError_t e = DeviceMultiprocessors(&sms); e != cudaSuccess) return e;
  const int64_t per_sm = std::max<int64_t>(1, std::min<int64_t>(16, (200 * 1024) / static_cast<int64_t>(shared_bytes)));
  const int64_t wanted = ((pixels + kTile - 1) / kTile + kWarps - 1) / kWarps;
  *grid = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(wanted, sms * per_sm)));
  return cudaSuccess;
}

template <typename T, int kKTiles>
cudaError_t Launch(const PointwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                   cudaStream_t stream) {
  const size_t shared_bytes = SharedBytes(p.cin, p.cout);
  int grid = 0;
  if (cudaError_t e = GridFor(p.pixels, shared_bytes, &grid); e != cudaSuccess) return e;
  PointwiseConvKernel<T, kKTiles><<<grid, kThreads, shared_bytes, stream>>>(
      static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(bias), static_cast<T*>(y), p.pixels,
      p.cin, p.cout, p.activation);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchForCin(const PointwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                         cudaStream_t stream) {
  switch (PaddedCin(p.cin) / kTile) {
    case 1: return Launch<T, 1>(p, x, w, bias, y, stream);
    case 2: return Launch<T, 2>(p, x, w, bias, y, stream);
    case 3: return Launch<T, 3>(p, x, w, bias, y, stream);
    case 4: return Launch<T, 4>(p, x, w, bias, y, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

bool PointwiseConvSupported(const PointwiseConvParams& p, const char** reason) {
  const char* why = nullptr;
  if (p.type == FloatType::kFloat32) {
    why = "float32 (the kernel runs on 16-bit tensor cores)";
  } else if (p.pixels < 1) {
    why = "no pixels";
  } else if (p.cin < 8 || p.cin > kMaxCin || p.cin % 8 != 0) {
    why = "input channels not a multiple of 8 from 8 to 64";
  } else if (p.cout < 16 || p.cout % 16 != 0) {
    why = "output channels not a positive multiple of 16";
  } else if (SharedBytes(p.cin, p.cout) > kMaxSharedBytes) {
    why = "weights over the kernel's shared memory";
  } else if (p.pixels > (int64_t{1} << 40)) {
    why = "more than 2^40 pixels";
  }
  if (reason != nullptr) *reason = why;
  return why == nullptr;
}

bool PointwiseConvAligned(const void* x, const void* y) { return Aligned16(x) && Aligned16(y); }

cudaError_t PointwiseConvNhwc(const PointwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                              cudaStream_t stream) {
  if (!PointwiseConvSupported(p) || !PointwiseConvAligned(x, y)) return cudaErrorInvalidValue;
  if (p.type == FloatType::kBFloat16) return LaunchForCin<__nv_bfloat16>(p, x, w, bias, y, stream);
  return LaunchForCin<__half>(p, x, w, bias, y, stream);
}

}  // namespace kernels::cuda
