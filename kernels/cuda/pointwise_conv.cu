// The 1x1-conv kernel of pointwise_conv.h on tensor cores (WMMA 16x16x16 on 16-bit types, 16x16x8
// TF32 on float32; float accumulation): a warp per 16 pixels, weights in shared memory; and the
// support rules.
#include <mma.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/pointwise_conv.h"

namespace kernels::cuda {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarps = 4;  // per block; each warp owns tiles of 16 pixels
constexpr int kThreads = 32 * kWarps;
constexpr int kTile = 16;        // the mma's m and n (pixels and output channels per tile); kpad a multiple of it
constexpr int kMaxCin = 64;      // of a 1x1 conv
constexpr int kMaxWindowK = 80;  // taps * cin of a window (five 16-wide k tiles)
constexpr size_t kDefaultSharedBytes = 48 * 1024;  // more needs the kernel's opt-in
constexpr size_t kMaxSharedBytes = 96 * 1024;      // a block's limit here (two blocks still fit an SM)

__host__ __device__ constexpr int PaddedCin(int cin) { return (cin + kTile - 1) / kTile * kTile; }

// The tensor-core operand of storage type T and the k of one mma step: 16-bit types as stored
// (16x16x16); float32 rounded to TF32 (16x16x8).
template <typename T>
struct MmaOperand {
  using Type = T;
  static constexpr int kK = 16;
};
template <>
struct MmaOperand<float> {
  using Type = wmma::precision::tf32;
  static constexpr int kK = 8;
};

// Row length in shared memory of `kpad` values of T: one 16-byte vector more, so that the rows an
// mma operand load reads start in different banks. The float output tile's rows: kLdC.
__host__ __device__ constexpr int SharedLd(int kpad, size_t element) { return kpad + 16 / static_cast<int>(element); }
constexpr int kLdC = kTile + 4;

size_t ElementBytes(FloatType type) { return type == FloatType::kFloat32 ? 4 : 2; }

static_assert(PointwiseConvParams::kNone == kConvActNone && PointwiseConvParams::kRelu == kConvActRelu &&
              PointwiseConvParams::kRelu6 == kConvActRelu6 && PointwiseConvParams::kSilu == kConvActSilu);
// The activation kAct (a compile-time PointwiseConvParams::Activation).
template <int kAct>
__device__ __forceinline__ float Activate(float v) {
  return ApplyConvActivation(kAct, v);
}

// Copies `rows` rows of `cin` elements from src (dense, 16-byte aligned rows: cin is a multiple of 8)
// into dst [kTile][ld], zero-filling the columns cin..kpad and the rows past `rows`, 16 bytes per
// lane and step; the calling warp's lanes share the work.
template <typename T>
__device__ __forceinline__ void StageInputTile(const T* src, int rows, int cin, int kpad, int ld, T* dst) {
  constexpr int kVec = 16 / sizeof(T);  // elements per 16-byte vector
  for (int i = threadIdx.x % 32; i < kTile * kpad / kVec; i += 32) {
    const int r = i / (kpad / kVec), k = (i % (kpad / kVec)) * kVec;
    uint4 v = make_uint4(0, 0, 0, 0);  // zeros of every storage type
    if (r < rows && k < cin) v = *reinterpret_cast<const uint4*>(src + r * cin + k);
    *reinterpret_cast<uint4*>(dst + r * ld + k) = v;
  }
}

// Eight values of one output row, stored with one 16-byte store (two for float32).
template <typename T>
struct alignas(16) EightValues {
  T v[8];
};

// The 16 x 16 float tile `c` (rows = pixels, columns = channels n0..; row length kLdC) plus bias,
// activated and stored into `y` (the tile's first row; rows `cout` elements apart): lane l writes row
// l / 2, channels (l % 2) * 8 .. + 8, as one 16-byte store (two for float32); rows from `rows` on are
// not written.
template <typename T, int kAct>
__device__ __forceinline__ void StoreOutputTile(const float* c, const float* bias, int n0, int rows, int cout, T* y) {
  const int lane = threadIdx.x % 32, r = lane / 2, c0 = (lane % 2) * 8;
  if (r >= rows) return;
  const float4* cv = reinterpret_cast<const float4*>(c + r * kLdC + c0);
  const float4* bv = reinterpret_cast<const float4*>(bias + n0 + c0);
  const float4 c_lo = cv[0], c_hi = cv[1], b_lo = bv[0], b_hi = bv[1];
  const float sums[8] = {c_lo.x + b_lo.x, c_lo.y + b_lo.y, c_lo.z + b_lo.z, c_lo.w + b_lo.w,
                         c_hi.x + b_hi.x, c_hi.y + b_hi.y, c_hi.z + b_hi.z, c_hi.w + b_hi.w};
  EightValues<T> out;
#pragma unroll
  for (int j = 0; j < 8; ++j) out.v[j] = FromFloat<T>(Activate<kAct>(sums[j]));
  *reinterpret_cast<EightValues<T>*>(y + static_cast<int64_t>(r) * cout + n0 + c0) = out;
}

// Copies `bytes` (a multiple of 16) from shared `src` to global `dst` with the warp's lanes, 16 bytes
// each per step: a staged block of whole output rows, written contiguously.
__device__ __forceinline__ void CopyRowsOut(const void* src, void* dst, int bytes) {
  const uint4* s = static_cast<const uint4*>(src);
  uint4* d = static_cast<uint4*>(dst);
  for (int i = threadIdx.x % 32; i < bytes / 16; i += 32) d[i] = s[i];
}

// A weight as the mma reads it: float32 rounded to TF32 once, when staged; 16-bit types as they are.
template <typename T>
__device__ __forceinline__ T WeightOperand(T w) {
  if constexpr (std::is_same_v<T, float>) return wmma::__float_to_tf32(w);
  return w;
}

// Float32 fragments of inputs hold TF32 values once rounded (what the mma expects); 16-bit ones are
// used as loaded.
template <typename Fragment>
__device__ __forceinline__ void RoundToOperand(Fragment& f) {
  if constexpr (std::is_same_v<decltype(f.x[0]), float&>) {
#pragma unroll
    for (int i = 0; i < f.num_elements; ++i) f.x[i] = wmma::__float_to_tf32(f.x[i]);
  }
}

// The kernel's shape choices. kM: 16-pixel tiles a warp computes per step (they share each weight
// fragment); kRows: the warp stages its kM * 16 output rows (all channels) in shared memory and writes
// them as one contiguous block, else it stores each 16 x 16 tile where it goes. Measured on the H200
// (EfficientNet's expand convs at batch 256): 16-bit types gain from kM = 2 (16 -> 96 at 112x112
// 0.316 -> 0.288 ms, 24 -> 144 at 56x56 0.171 -> 0.123), float32 from staged rows (16 -> 96 0.785 ->
// 0.540 ms) where they fit the default shared memory.
// 16-pixel tiles per warp step for an element of `element` bytes (see Shape).
constexpr int MTilesFor(size_t element) { return element == 2 ? 2 : 1; }

// kSplitFloat: float32 in 3xTF32 (each operand split into a TF32 high part and a TF32 low part, three
// mmas: hi*hi + hi*lo + lo*hi), float32's accuracy for a strict-float32 stem.
template <int kMTiles, bool kStageRows, int kWindowPixelBytes, bool kSplitFloat = false>
struct Shape {
  static constexpr int kM = kMTiles;
  static constexpr bool kRows = kStageRows;
  static constexpr int kPixelBytes = kWindowPixelBytes;  // a conv window over 8- or 16-byte pixels; 0: 1x1
  static constexpr bool kSplit = kSplitFloat;
};

// f = the TF32 high part of f's float32 values, lo = the TF32 rounding of what is left.
template <typename Fragment>
__device__ __forceinline__ void SplitToOperands(Fragment& f, Fragment& lo) {
#pragma unroll
  for (int i = 0; i < f.num_elements; ++i) {
    const float hi = wmma::__float_to_tf32(f.x[i]);
    lo.x[i] = wmma::__float_to_tf32(f.x[i] - hi);
    f.x[i] = hi;
  }
}

// ConvWindow as the kernel reads it.
struct Window {
  int kernel_w, stride_h, stride_w, pad_top, pad_left, in_h, in_w, out_h, out_w, taps;
};

// Copies the inputs of output pixels p0 .. p0 + rows - 1 under a window into dst [kTile][ld]: row r
// holds the taps' input pixels (kPixelBytes each: all cin channels, tap-major), zeros outside the
// image, past the taps and past `rows`. Lanes 0..15 find one row's image and corner each; the warp
// shares them.
template <typename T, int kPixelBytes>
__device__ __forceinline__ void StageWindowTile(const T* x, int64_t p0, int rows, const Window& win, int kpad, int ld,
                                                T* dst) {
  using Pixel = std::conditional_t<kPixelBytes == 16, uint4, uint2>;
  constexpr int kVec = kPixelBytes / sizeof(T);  // channels of one input pixel
  const int lane = threadIdx.x % 32;
  int image = 0, top = 0, left = 0;
  if (lane < kTile) {
    const int p = static_cast<int>(p0) + lane, ow = p % win.out_w, rest = p / win.out_w;
    image = rest / win.out_h;
    top = (rest % win.out_h) * win.stride_h - win.pad_top;
    left = ow * win.stride_w - win.pad_left;
  }
  for (int i = lane; i < kTile * kpad / kVec; i += 32) {  // the same trip count on every lane
    const int r = i / (kpad / kVec), tap = i % (kpad / kVec);
    const int n = __shfl_sync(0xffffffffu, image, r), ih = __shfl_sync(0xffffffffu, top, r) + tap / win.kernel_w,
              iw = __shfl_sync(0xffffffffu, left, r) + tap % win.kernel_w;
    Pixel v{};
    if (r < rows && tap < win.taps && ih >= 0 && ih < win.in_h && iw >= 0 && iw < win.in_w) {
      v = *reinterpret_cast<const Pixel*>(x + ((static_cast<int64_t>(n) * win.in_h + ih) * win.in_w + iw) * kVec);
    }
    *reinterpret_cast<Pixel*>(dst + r * ld + tap * kVec) = v;
  }
}

// Shared memory: weights [cout][ld] (storage type, zero-padded along cin), bias [cout] (float), and
// per warp kM input tiles [16][ld] (storage type), kM output tiles [16][kLdC] (float) and, with kRows,
// the rows [kM * 16][cout] (storage type).
template <typename T>
struct SharedLayout {
  T* weights;
  float* bias;
  T* inputs;
  float* tiles;
  T* rows;

  __device__ SharedLayout(void* base, int cout, int ld, int m, bool stage_rows) {
    const int warp = threadIdx.x / 32;
    weights = static_cast<T*>(base);
    bias = reinterpret_cast<float*>(weights + cout * ld);
    T* all_inputs = reinterpret_cast<T*>(bias + cout);
    inputs = all_inputs + warp * m * kTile * ld;
    float* all_tiles = reinterpret_cast<float*>(all_inputs + kWarps * m * kTile * ld);
    tiles = all_tiles + warp * m * kTile * kLdC;
    rows = stage_rows ? reinterpret_cast<T*>(all_tiles + kWarps * m * kTile * kLdC) + warp * m * kTile * cout : nullptr;
  }
};

// k: the matrix product's K (cin * taps).
size_t SharedBytes(int k, int cout, size_t element, int m, bool stage_rows) {
  const size_t ld = SharedLd(PaddedCin(k), element);
  const size_t per_warp =
      m * (kTile * ld * element + kTile * kLdC * sizeof(float) + (stage_rows ? kTile * cout * element : 0));
  return (cout * ld * element + cout * sizeof(float) + kWarps * per_warp + 31) / 32 * 32;
}

// y = act(x w^T + bias) on tensor cores: each warp takes steps of kM * 16 pixels (grid-stride),
// stages their inputs in shared memory, and for each 16 output channels accumulates kpad / k mma
// steps per 16-pixel tile in float, then writes them through its shared output tiles (and, with
// kRows, its staged rows). kKTiles: kpad / 16.
template <typename T, int kKTiles, int kAct, typename S>
__global__ void __launch_bounds__(kThreads)
    PointwiseConvKernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias, T* __restrict__ y,
                        int64_t pixels, int cin, int cout, Window win) {
  extern __shared__ float4 shared[];
  using Operand = typename MmaOperand<T>::Type;
  constexpr int kK = MmaOperand<T>::kK, kpad = kKTiles * kTile, kSteps = kpad / kK, kPixels = S::kM * kTile;
  constexpr int ld = SharedLd(kpad, sizeof(T));
  const SharedLayout<T> sm(shared, cout, ld, S::kM, S::kRows);
  for (int i = threadIdx.x; i < cout * ld; i += blockDim.x) {  // k = tap * cin + channel; w [cout][cin][taps]
    const int n = i / ld, k = i % ld, tap = k / cin, c = k % cin;
    const T weight = tap < win.taps ? w[(n * cin + c) * win.taps + tap] : FromFloat<T>(0.f);
    sm.weights[i] = S::kSplit ? weight : WeightOperand(weight);  // split: exact, rounded per use
  }
  for (int i = threadIdx.x; i < cout; i += blockDim.x) sm.bias[i] = bias != nullptr ? ToFloat(bias[i]) : 0.f;
  __syncthreads();
  const int64_t steps = (pixels + kPixels - 1) / kPixels;
  const int64_t warp = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  for (int64_t t = warp; t < steps; t += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t p0 = t * kPixels;
    const int rows = static_cast<int>(pixels - p0 < kPixels ? pixels - p0 : kPixels);
#pragma unroll
    for (int m = 0; m < S::kM; ++m) {
      if constexpr (S::kPixelBytes > 0) {
        StageWindowTile<T, S::kPixelBytes>(x, p0 + m * kTile, rows - m * kTile, win, kpad, ld,
                                           sm.inputs + m * kTile * ld);
      } else {
        StageInputTile(x + (p0 + m * kTile) * cin, rows - m * kTile, cin, kpad, ld, sm.inputs + m * kTile * ld);
      }
    }
    __syncwarp();
    using FragmentA = wmma::fragment<wmma::matrix_a, kTile, kTile, kK, Operand, wmma::row_major>;
    FragmentA a[S::kM][kSteps];
    FragmentA a_lo[S::kSplit ? S::kM : 1][S::kSplit ? kSteps : 1];
#pragma unroll
    for (int m = 0; m < S::kM; ++m) {
#pragma unroll
      for (int k = 0; k < kSteps; ++k) {
        wmma::load_matrix_sync(a[m][k], sm.inputs + m * kTile * ld + k * kK, ld);
        if constexpr (S::kSplit) {
          SplitToOperands(a[m][k], a_lo[m][k]);
        } else {
          RoundToOperand(a[m][k]);
        }
      }
    }
    for (int n0 = 0; n0 < cout; n0 += kTile) {
      wmma::fragment<wmma::accumulator, kTile, kTile, kK, float> acc[S::kM];
#pragma unroll
      for (int m = 0; m < S::kM; ++m) wmma::fill_fragment(acc[m], 0.f);
#pragma unroll
      for (int k = 0; k < kSteps; ++k) {
        wmma::fragment<wmma::matrix_b, kTile, kTile, kK, Operand, wmma::col_major> b;
        wmma::load_matrix_sync(b, sm.weights + n0 * ld + k * kK, ld);  // weights already TF32 for float32
        if constexpr (S::kSplit) {                                     // small products first
          decltype(b) b_lo;
          SplitToOperands(b, b_lo);
#pragma unroll
          for (int m = 0; m < S::kM; ++m) {
            wmma::mma_sync(acc[m], a_lo[m][k], b, acc[m]);
            wmma::mma_sync(acc[m], a[m][k], b_lo, acc[m]);
          }
        }
#pragma unroll
        for (int m = 0; m < S::kM; ++m) wmma::mma_sync(acc[m], a[m][k], b, acc[m]);
      }
#pragma unroll
      for (int m = 0; m < S::kM; ++m) {
        wmma::store_matrix_sync(sm.tiles + m * kTile * kLdC, acc[m], kLdC, wmma::mem_row_major);
      }
      __syncwarp();
#pragma unroll
      for (int m = 0; m < S::kM; ++m) {
        const float* tile = sm.tiles + m * kTile * kLdC;
        if constexpr (S::kRows) {
          StoreOutputTile<T, kAct>(tile, sm.bias, n0, kTile, cout, sm.rows + m * kTile * cout);
        } else {
          StoreOutputTile<T, kAct>(tile, sm.bias, n0, rows - m * kTile, cout, y + (p0 + m * kTile) * cout);
        }
      }
      __syncwarp();
    }
    if constexpr (S::kRows) {
      CopyRowsOut(sm.rows, y + p0 * cout, rows * cout * static_cast<int>(sizeof(T)));
      __syncwarp();
    }
  }
}

// Blocks for `pixels` in steps of `step_pixels`: enough to fill every multiprocessor, at most one step per warp.
cudaError_t GridFor(int64_t pixels, int step_pixels, size_t shared_bytes, int* grid) {
  int sms = 0;
  if (cudaError_t e = DeviceMultiprocessors(&sms); e != cudaSuccess) return e;
  const int64_t per_sm = std::max<int64_t>(1, std::min<int64_t>(16, (200 * 1024) / static_cast<int64_t>(shared_bytes)));
  const int64_t wanted = ((pixels + step_pixels - 1) / step_pixels + kWarps - 1) / kWarps;
  *grid = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(wanted, sms * per_sm)));
  return cudaSuccess;
}

template <typename T, int kKTiles, int kAct, typename S>
cudaError_t Launch(const PointwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                   cudaStream_t stream) {
  const size_t shared_bytes = SharedBytes(p.cin * p.window.Taps(), p.cout, sizeof(T), S::kM, S::kRows);
  int grid = 0;
  if (cudaError_t e = GridFor(p.pixels, S::kM * kTile, shared_bytes, &grid); e != cudaSuccess) return e;
  if (shared_bytes > kDefaultSharedBytes) {
    const cudaError_t e = cudaFuncSetAttribute(PointwiseConvKernel<T, kKTiles, kAct, S>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxSharedBytes);
    if (e != cudaSuccess) return e;
  }
  const ConvWindow& cw = p.window;
  const Window win{cw.kernel_w, cw.stride_h, cw.stride_w, cw.pad_top, cw.pad_left,
                   cw.in_h,     cw.in_w,     cw.out_h,    cw.out_w,   cw.Taps()};
  PointwiseConvKernel<T, kKTiles, kAct, S><<<grid, kThreads, shared_bytes, stream>>>(
      static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(bias), static_cast<T*>(y), p.pixels,
      p.cin, p.cout, win);
  return cudaGetLastError();
}

// The shape for p (see Shape): 16-bit types two tiles per step; a strict float32 stem in 3xTF32;
// other float32 staged rows when they fit the default shared memory, else one tile per step.
template <typename T, int kKTiles, int kAct, int kPixelBytes>
cudaError_t LaunchShaped(const PointwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                         cudaStream_t stream) {
  if constexpr (MTilesFor(sizeof(T)) == 2) {
    return Launch<T, kKTiles, kAct, Shape<2, false, kPixelBytes>>(p, x, w, bias, y, stream);
  } else {
    if constexpr (std::is_same_v<T, float> && kPixelBytes == 16) {  // a float32 stem: 3xTF32 unless tf32
      if (!p.allow_tf32) return Launch<T, kKTiles, kAct, Shape<1, false, kPixelBytes, true>>(p, x, w, bias, y, stream);
    }
    if (SharedBytes(p.cin * p.window.Taps(), p.cout, sizeof(T), 1, true) <= kDefaultSharedBytes) {
      return Launch<T, kKTiles, kAct, Shape<1, true, kPixelBytes>>(p, x, w, bias, y, stream);
    }
    return Launch<T, kKTiles, kAct, Shape<1, false, kPixelBytes>>(p, x, w, bias, y, stream);
  }
}

template <typename T, int kKTiles, int kAct>
cudaError_t LaunchWindowed(const PointwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                           cudaStream_t stream) {
  if (p.window.OneByOne()) return LaunchShaped<T, kKTiles, kAct, 0>(p, x, w, bias, y, stream);
  if (p.cin * sizeof(T) == 8) return LaunchShaped<T, kKTiles, kAct, 8>(p, x, w, bias, y, stream);
  return LaunchShaped<T, kKTiles, kAct, 16>(p, x, w, bias, y, stream);
}

template <typename T, int kKTiles>
cudaError_t LaunchForActivation(const PointwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                                cudaStream_t stream) {
  switch (p.activation) {
    case PointwiseConvParams::kNone: return LaunchWindowed<T, kKTiles, kConvActNone>(p, x, w, bias, y, stream);
    case PointwiseConvParams::kRelu: return LaunchWindowed<T, kKTiles, kConvActRelu>(p, x, w, bias, y, stream);
    case PointwiseConvParams::kRelu6: return LaunchWindowed<T, kKTiles, kConvActRelu6>(p, x, w, bias, y, stream);
    case PointwiseConvParams::kSilu: return LaunchWindowed<T, kKTiles, kConvActSilu>(p, x, w, bias, y, stream);
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t LaunchForCin(const PointwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                         cudaStream_t stream) {
  switch (PaddedCin(p.cin * p.window.Taps()) / kTile) {
    case 1: return LaunchForActivation<T, 1>(p, x, w, bias, y, stream);
    case 2: return LaunchForActivation<T, 2>(p, x, w, bias, y, stream);
    case 3: return LaunchForActivation<T, 3>(p, x, w, bias, y, stream);
    case 4: return LaunchForActivation<T, 4>(p, x, w, bias, y, stream);
    case 5: return LaunchForActivation<T, 5>(p, x, w, bias, y, stream);
  }
  return cudaErrorInvalidValue;
}

// Why a window the kernel does not take (nullptr when it takes it): 8- or 16-byte input pixels,
// K <= 80, 32-bit coordinates.
const char* WindowRefusal(const PointwiseConvParams& p) {
  const ConvWindow& w = p.window;
  const size_t pixel_bytes = static_cast<size_t>(p.cin) * ElementBytes(p.type);
  if (pixel_bytes != 8 && pixel_bytes != 16) return "a window over input pixels of other than 8 or 16 bytes";
  if (w.kernel_h < 1 || w.kernel_w < 1 || p.cin * w.Taps() > kMaxWindowK) return "a window of more than 80 values";
  if (w.stride_h < 1 || w.stride_w < 1 || w.pad_top < 0 || w.pad_left < 0 || w.in_h < 1 || w.in_w < 1 || w.out_h < 1 ||
      w.out_w < 1 || p.pixels % (int64_t{w.out_h} * w.out_w) != 0) {
    return "a window without its image sizes";
  }
  const int64_t images = p.pixels / (int64_t{w.out_h} * w.out_w);
  if (p.pixels >= (int64_t{1} << 31) || images * w.in_h * w.in_w >= (int64_t{1} << 31)) {
    return "a window over 2^31 pixels or more";
  }
  return nullptr;
}

// Why the kernel does not compute p (nullptr when it does); see PointwiseConvSupported.
const char* Refusal(const PointwiseConvParams& p) {
  // Strict float32 only for a window over 4 channels (a stem, in 3xTF32); else float32 is TF32.
  const bool split_stem = !p.window.OneByOne() && p.cin * ElementBytes(p.type) == 16;
  if (p.type == FloatType::kFloat32 && !p.allow_tf32 && !split_stem) {
    return "strict float32 (the kernel computes float32 in TF32)";
  }
  if (p.pixels < 1) return "no pixels";
  if (!p.window.OneByOne()) {
    if (const char* why = WindowRefusal(p)) return why;
  } else if (p.cin < 8 || p.cin > kMaxCin || p.cin % 8 != 0) {
    return "input channels not a multiple of 8 from 8 to 64";
  }
  if (p.cout < 16 || p.cout % 16 != 0) return "output channels not a positive multiple of 16";
  const size_t element = ElementBytes(p.type);
  if (SharedBytes(p.cin * p.window.Taps(), p.cout, element, MTilesFor(element), false) > kMaxSharedBytes) {
    return "weights over the kernel's shared memory";
  }
  if (p.pixels > (int64_t{1} << 40)) return "more than 2^40 pixels";
  return nullptr;
}

}  // namespace

bool PointwiseConvSupported(const PointwiseConvParams& p, const char** reason) {
  const char* why = Refusal(p);
  if (reason != nullptr) *reason = why;
  return why == nullptr;
}

bool PointwiseConvAligned(const void* x, const void* y) { return Aligned16(x) && Aligned16(y); }

cudaError_t PointwiseConvNhwc(const PointwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                              cudaStream_t stream) {
  if (!PointwiseConvSupported(p) || !PointwiseConvAligned(x, y)) return cudaErrorInvalidValue;
  if (p.type == FloatType::kFloat32) return LaunchForCin<float>(p, x, w, bias, y, stream);
  if (p.type == FloatType::kBFloat16) return LaunchForCin<__nv_bfloat16>(p, x, w, bias, y, stream);
  return LaunchForCin<__half>(p, x, w, bias, y, stream);
}

}  // namespace kernels::cuda
