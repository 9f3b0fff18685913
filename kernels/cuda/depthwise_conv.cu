// Depthwise 2-D convolution kernels on NHWC: the register-tiled kernel (fixed square filters, stride_w 1 or
// 2) with its optional channel sums and the generic one-thread-per-output kernel, the choice between
// them, and the support rules.
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/channel_vectors.h"
#include "kernels/cuda/depthwise_conv.h"
#include "kernels/cuda/depthwise_conv_shared.h"
#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"

namespace kernels::cuda {
namespace {

using Activation = DepthwiseConvParams::Activation;

// Output columns one thread of the tiled kernel computes.
constexpr int kTileW = 4;

static_assert(DepthwiseConvParams::kNone == kConvActNone && DepthwiseConvParams::kRelu == kConvActRelu &&
              DepthwiseConvParams::kRelu6 == kConvActRelu6 && DepthwiseConvParams::kSilu == kConvActSilu);
__device__ __forceinline__ float Activate(Activation act, float v) { return ApplyConvActivation(act, v); }

// The tiled kernel's geometry. A lane is (channel vector, column tile, strip group), channel vector
// fastest; a strip is up to strip_rows consecutive output rows of one image, and a lane computes
// up to `iterations` strips in turn (its weights loaded once for all of them): interleaved (group,
// group + strip_groups, ...) by default; consecutive (group * iterations, then the next ones) when
// the lane also sums its channels (the kernel's SUMS), so it adds them up about once per image.
struct TiledArgs {
  int c, h, w, out_h, out_w;
  int stride_h, dilation_h, pad_top, pad_left;
  int channel_vectors, column_tiles, strip_rows, strips_per_image, strip_groups;
  int64_t iterations;
  int strip_step_n, strip_step_s;  // the step between a lane's strips / strips_per_image and % strips_per_image
  int64_t strips, lanes;
  Activation activation;
  float* channel_sums;  // [n, c]: += the sum over output pixels of the stored outputs, or nullptr
  int block_sums;       // with channel_sums: floats of shared memory per block for its sums (0: none)
};

// channel_sums[n * c + c0 + v] += sums[v], then sums = 0.
template <int V>
__device__ __forceinline__ void FlushChannelSums(float* channel_sums, int n, int c, int c0, float (&sums)[V]) {
#pragma unroll
  for (int v = 0; v < V; ++v) {
    atomicAdd(channel_sums + static_cast<int64_t>(n) * c + c0 + v, sums[v]);
    sums[v] = 0.f;
  }
}

// Loads input row `ih` (zeros outside the image) at the NC columns starting at byte address
// `row0` + ih * row_bytes into `raw` as V-wide vectors.
template <typename T, int V, int NC>
__device__ __forceinline__ void LoadInputRow(typename Packed<T, V>::Type (&raw)[NC], uint64_t row0, int ih, int h,
                                             int64_t row_bytes, unsigned column_bytes, const bool (&inside)[NC]) {
  const bool row_inside = static_cast<unsigned>(ih) < static_cast<unsigned>(h);
  const uint64_t in_row = row0 + ih * row_bytes;
#pragma unroll
  for (int j = 0; j < NC; ++j) {
    raw[j] = {};
    if (row_inside && inside[j])
      raw[j] = LoadPacked<T, V>(reinterpret_cast<const T*>(in_row + static_cast<uint64_t>(j * column_bytes)));
  }
}

// One thread: channels [c0, c0 + V) of output columns [ow0, ow0 + kTileW) of the output rows of its
// strips. Its R x S x V weights and V biases stay in registers, and so do the R input rows (NC
// columns each, as V-wide vectors) the current output row reads: with SH > 0 (= stride_h <= R,
// dilation_h 1) the next output row shifts them by SH and loads only SH new rows, so each input
// row is read about once per strip instead of R times; with SH == 0 all R are loaded per row.
// `sums` (with a.channel_sums) is where image n's channel sums go, at (n - sums_n0) * c: the block's
// shared sums or channel_sums itself.
template <typename T, int V, int R, int S, int SW, int SH, bool SUMS>
__device__ __forceinline__ void DepthwiseTiledLane(const TiledArgs& a, int64_t lane, const T* __restrict__ x,
                                                   const T* __restrict__ w, const T* __restrict__ bias,
                                                   T* __restrict__ y, float* sums, int sums_n0) {
  constexpr int NC = (kTileW - 1) * SW + S;  // input columns of kTileW outputs
  const int cv = static_cast<int>(lane % a.channel_vectors);
  const int64_t rest = lane / a.channel_vectors;
  const int tile = static_cast<int>(rest % a.column_tiles);
  const int64_t first_strip = SUMS ? rest / a.column_tiles * a.iterations : rest / a.column_tiles;
  const int c0 = cv * V;
  const int ow0 = tile * kTileW;
  const int iw0 = ow0 * SW - a.pad_left;

  float wr[R][S][V];
#pragma unroll
  for (int v = 0; v < V; ++v)
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int s = 0; s < S; ++s) wr[r][s][v] = ToFloat(w[((c0 + v) * R + r) * S + s]);
  float b[V];
#pragma unroll
  for (int v = 0; v < V; ++v) b[v] = bias != nullptr ? ToFloat(bias[c0 + v]) : 0.f;

  // Loop-invariant: which of the NC input columns lie inside the image (the others are padding).
  bool column_inside[NC];
#pragma unroll
  for (int j = 0; j < NC; ++j) column_inside[j] = static_cast<unsigned>(iw0 + j) < static_cast<unsigned>(a.w);

  const unsigned column_bytes = a.c * sizeof(T);  // < 2^26: c < 2^24
  const int64_t row_bytes = static_cast<int64_t>(a.w) * column_bytes;
  typename Packed<T, V>::Type raw[R][NC];
  // The strip's image and index in it, advanced without a division per strip.
  int n = static_cast<int>(first_strip / a.strips_per_image);
  int image_strip = static_cast<int>(first_strip % a.strips_per_image);
  float pooled[V] = {};  // SUMS: channel sums of this lane's outputs in image pooled_n
  int pooled_n = -1;
  const int64_t strip_end = SUMS ? min(a.strips, first_strip + a.iterations) : a.strips;
  for (int64_t strip = first_strip; strip < strip_end; strip += SUMS ? 1 : a.strip_groups) {
    if constexpr (SUMS) {
      if (pooled_n != n) {
        if (pooled_n >= 0) FlushChannelSums<V>(sums, pooled_n - sums_n0, a.c, c0, pooled);
        pooled_n = n;
      }
    }
    const int oh_begin = image_strip * a.strip_rows;
    const int oh_end = min(oh_begin + a.strip_rows, a.out_h);
    // Byte address of (row 0, column iw0, channel c0) of image n, which may lie in the padding
    // (then never dereferenced).
    const uint64_t row0 = reinterpret_cast<uint64_t>(x) +
                          (static_cast<int64_t>(n) * a.h * a.w + iw0) * static_cast<int64_t>(column_bytes) +
                          static_cast<int64_t>(c0) * sizeof(T);
    for (int oh = oh_begin; oh < oh_end; ++oh) {
      const int ih0 = oh * a.stride_h - a.pad_top;
      if (SH == 0 || oh == oh_begin) {
#pragma unroll
        for (int r = 0; r < R; ++r)
          LoadInputRow<T, V, NC>(raw[r], row0, ih0 + r * a.dilation_h, a.h, row_bytes, column_bytes, column_inside);
      } else {
#pragma unroll
        for (int r = 0; r + SH < R; ++r)
#pragma unroll
          for (int j = 0; j < NC; ++j) raw[r][j] = raw[r + SH][j];
#pragma unroll
        for (int r = R - SH; r < R; ++r)
          LoadInputRow<T, V, NC>(raw[r], row0, ih0 + r, a.h, row_bytes, column_bytes, column_inside);
      }
      float acc[kTileW][V];
#pragma unroll
      for (int t = 0; t < kTileW; ++t)
#pragma unroll
        for (int v = 0; v < V; ++v) acc[t][v] = b[v];
#pragma unroll
      for (int r = 0; r < R; ++r) {
#pragma unroll
        for (int j = 0; j < NC; ++j) {
          float in[V];
          Unpack(raw[r][j], in);
#pragma unroll
          for (int t = 0; t < kTileW; ++t) {
            const int s = j - t * SW;  // the filter column that input column j meets at output t
            if (s < 0 || s >= S) continue;
#pragma unroll
            for (int v = 0; v < V; ++v) acc[t][v] = fmaf(in[v], wr[r][s][v], acc[t][v]);
          }
        }
      }
      T* yrow = y + (static_cast<int64_t>(n) * a.out_h + oh) * a.out_w * a.c + ow0 * a.c + c0;
#pragma unroll
      for (int t = 0; t < kTileW; ++t) {
        if (ow0 + t >= a.out_w) break;
#pragma unroll
        for (int v = 0; v < V; ++v) acc[t][v] = Activate(a.activation, acc[t][v]);
        StoreVec<T, V>(yrow + t * a.c, acc[t]);
        if constexpr (SUMS) {
#pragma unroll
          for (int v = 0; v < V; ++v) pooled[v] += ToFloat(FromFloat<T>(acc[t][v]));  // the stored value
        }
      }
    }
    n += a.strip_step_n;
    image_strip += a.strip_step_s;
    if (image_strip >= a.strips_per_image) image_strip -= a.strips_per_image, ++n;
  }
  if (SUMS && pooled_n >= 0) FlushChannelSums<V>(sums, pooled_n - sums_n0, a.c, c0, pooled);
}

// The images [*n_lo, *n_lo + *count) the block's lanes meet, from their strip ranges (consecutive
// strips per lane group; lanes past the last strip meet none).
__device__ __forceinline__ void BlockImages(const TiledArgs& a, int* n_lo, int* count) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x;
  const int64_t last = min(a.lanes, first + blockDim.x) - 1;
  const int64_t per_row = static_cast<int64_t>(a.channel_vectors) * a.column_tiles;
  const int64_t strip_lo = first / per_row * a.iterations;
  const int64_t strip_hi = min(a.strips, (last / per_row + 1) * a.iterations) - 1;
  *n_lo = static_cast<int>(strip_lo / a.strips_per_image);
  *count = strip_hi < strip_lo ? 0 : static_cast<int>(strip_hi / a.strips_per_image) - *n_lo + 1;
}

// One lane per thread (DepthwiseTiledLane). SUMS (a.channel_sums set; a separate instantiation, so
// the plain kernel keeps its registers) with a.block_sums: the block first
// adds its lanes' sums in shared memory (dynamic, a.block_sums floats) and then adds each image's
// and channel's total to channel_sums once: lanes sharing a channel would otherwise contend for
// the same global address (about a thousand per address at batch 32).
template <typename T, int V, int R, int S, int SW, int SH, bool SUMS>
__global__ void __launch_bounds__(kBlockSize)
    DepthwiseTiledKernel(TiledArgs a, const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                         T* __restrict__ y) {
  const int64_t lane = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (!SUMS || a.block_sums == 0) {
    if (lane < a.lanes) DepthwiseTiledLane<T, V, R, S, SW, SH, SUMS>(a, lane, x, w, bias, y, a.channel_sums, 0);
    return;
  }
  extern __shared__ float block_sums[];
  int n_lo = 0, images = 0;
  BlockImages(a, &n_lo, &images);
  const int slots = images * a.c;  // <= a.block_sums (LaunchTiled's bound)
  for (int i = threadIdx.x; i < slots; i += blockDim.x) block_sums[i] = 0.f;
  __syncthreads();
  if (lane < a.lanes) DepthwiseTiledLane<T, V, R, S, SW, SH, SUMS>(a, lane, x, w, bias, y, block_sums, n_lo);
  __syncthreads();
  float* out = a.channel_sums + static_cast<int64_t>(n_lo) * a.c;
  for (int i = threadIdx.x; i < slots; i += blockDim.x) {
    if (block_sums[i] != 0.f) atomicAdd(out + i, block_sums[i]);
  }
}

// One thread per output element (channel fastest) of images blockIdx.y, blockIdx.y + gridDim.y, ...;
// any filter size, stride, dilation. Weights are read per tap (cached).
template <typename T>
__global__ void DepthwiseGenericKernel(DepthwiseConvParams p, const T* __restrict__ x, const T* __restrict__ w,
                                       const T* __restrict__ bias, T* __restrict__ y) {
  const int in_image = p.h * p.w * p.c;
  const int out_image = p.out_h * p.out_w * p.c;
  for (int n = blockIdx.y; n < p.n; n += gridDim.y) {
    const T* xn = x + static_cast<int64_t>(n) * in_image;
    T* yn = y + static_cast<int64_t>(n) * out_image;
    for (unsigned e = blockIdx.x * blockDim.x + threadIdx.x; e < static_cast<unsigned>(out_image);
         e += gridDim.x * blockDim.x) {
      const int c = static_cast<int>(e % p.c);
      const int pixel = static_cast<int>(e / p.c);
      const int ow = pixel % p.out_w;
      const int oh = pixel / p.out_w;
      const T* wc = w + c * p.r * p.s;
      float acc = bias != nullptr ? ToFloat(bias[c]) : 0.f;
      for (int r = 0; r < p.r; ++r) {
        const int ih = oh * p.stride_h - p.pad_top + r * p.dilation_h;
        if (static_cast<unsigned>(ih) >= static_cast<unsigned>(p.h)) continue;
        for (int s = 0; s < p.s; ++s) {
          const int iw = ow * p.stride_w - p.pad_left + s * p.dilation_w;
          if (static_cast<unsigned>(iw) >= static_cast<unsigned>(p.w)) continue;
          acc = fmaf(ToFloat(xn[(ih * p.w + iw) * p.c + c]), ToFloat(wc[r * p.s + s]), acc);
        }
      }
      yn[e] = FromFloat<T>(Activate(p.activation, acc));
    }
  }
}

// Threads that fill the current device once at full occupancy (SMs x max threads per SM).
cudaError_t ResidentThreads(int* threads) {
  int device = 0, sms = 0, per_sm = 0;
  if (cudaError_t e = DeviceMultiprocessors(&sms); e != cudaSuccess) return e;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device); e != cudaSuccess)
    return e;
  *threads = sms * per_sm;
  return cudaSuccess;
}

// Output rows per strip: 1 when one row per lane leaves the GPU short of two waves of resident
// threads (small batches), else as many as keep about two waves, at most out_h; `wanted` > 0
// overrides.
int RowsPerStrip(int64_t lanes_per_row, int64_t rows, int out_h, int resident, int wanted) {
  if (wanted > 0) return wanted < out_h ? wanted : out_h;
  const int64_t by_fill = lanes_per_row * rows / (2 * static_cast<int64_t>(resident > 0 ? resident : 1));
  return static_cast<int>(by_fill < 1 ? 1 : (by_fill > out_h ? out_h : by_fill));
}

// Lane groups over `strips` strips of one row: as many as fill the GPU once, evened out so every
// lane loops equally often (its weights loaded once for all its rows). Longer strips get one lane
// group each.
int64_t StripGroups(int64_t strips, int strip_rows, int64_t lanes_per_row, int resident) {
  if (strip_rows > 1) return strips;
  const int64_t wanted = resident / lanes_per_row > 1 ? resident / lanes_per_row : 1;
  const int64_t iterations = CeilDiv(strips, wanted < strips ? wanted : strips);
  return CeilDiv(strips, iterations);
}

// Shared floats a block needs for its channel sums: C per image its lanes can meet (lane groups of
// consecutive strips: a block spans at most 255 / per_row + 2 groups), or 0 when that passes 48 KiB
// (the lanes then add to channel_sums directly).
int BlockSumSlots(const TiledArgs& a) {
  constexpr int64_t kMaxFloats = 48 * 1024 / sizeof(float);
  const int64_t per_row = static_cast<int64_t>(a.channel_vectors) * a.column_tiles;
  const int64_t groups = (kBlockSize - 1) / per_row + 2;
  const int64_t images = (groups * a.iterations - 1) / a.strips_per_image + 2;
  const int64_t slots = std::min<int64_t>(images, int64_t{a.strips} / a.strips_per_image) * a.c;
  return slots <= kMaxFloats ? static_cast<int>(slots) : 0;
}

template <typename T, int V, int K, int SW, int SH>
cudaError_t LaunchTiled(const DepthwiseConvParams& p, const T* x, const T* w, const T* bias, T* y, float* sums,
                        cudaStream_t stream) {
  int resident = 0;
  if (cudaError_t e = ResidentThreads(&resident); e != cudaSuccess) return e;
  TiledArgs a;
  a.c = p.c, a.h = p.h, a.w = p.w, a.out_h = p.out_h, a.out_w = p.out_w;
  a.stride_h = p.stride_h, a.dilation_h = p.dilation_h, a.pad_top = p.pad_top, a.pad_left = p.pad_left;
  a.channel_vectors = p.c / V;
  a.column_tiles = static_cast<int>(CeilDiv(p.out_w, kTileW));
  const int64_t per_row = static_cast<int64_t>(a.channel_vectors) * a.column_tiles;
  a.strip_rows = SH == 0 ? 1 : RowsPerStrip(per_row, int64_t{p.n} * p.out_h, p.out_h, resident, p.rows_per_thread);
  a.strips_per_image = static_cast<int>(CeilDiv(p.out_h, a.strip_rows));
  a.strips = int64_t{p.n} * a.strips_per_image;
  a.strip_groups = static_cast<int>(StripGroups(a.strips, a.strip_rows, per_row, resident));
  a.lanes = per_row * a.strip_groups;
  a.iterations = CeilDiv(a.strips, a.strip_groups);
  // Summing lanes take consecutive strips (one flush of their sums per image they meet); others
  // interleave, so lanes running at the same time read neighbouring rows.
  const int strip_step = sums != nullptr ? 1 : a.strip_groups;
  a.strip_step_n = strip_step / a.strips_per_image;
  a.strip_step_s = strip_step % a.strips_per_image;
  a.activation = p.activation;
  a.channel_sums = sums;
  a.block_sums = sums != nullptr ? BlockSumSlots(a) : 0;
  const unsigned blocks = static_cast<unsigned>(CeilDiv(a.lanes, kBlockSize));
  if (sums != nullptr) {
    DepthwiseTiledKernel<T, V, K, K, SW, SH, true>
        <<<blocks, kBlockSize, a.block_sums * sizeof(float), stream>>>(a, x, w, bias, y);
  } else {
    DepthwiseTiledKernel<T, V, K, K, SW, SH, false><<<blocks, kBlockSize, 0, stream>>>(a, x, w, bias, y);
  }
  return cudaGetLastError();
}

// The widest vector (<= max_v elements) that divides C and to which x and y are aligned.
int VectorWidth(const DepthwiseConvParams& p, int max_v, const void* x, const void* y, int element_size) {
  for (int v = max_v; v > 1; v /= 2) {
    const uintptr_t bytes = static_cast<uintptr_t>(v) * element_size;
    if (p.c % v == 0 && reinterpret_cast<uintptr_t>(x) % bytes == 0 && reinterpret_cast<uintptr_t>(y) % bytes == 0)
      return v;
  }
  return 1;
}

// The widest channel vector of the tiled kernel: 8 bytes for 3x3, 4 bytes for the larger filters, whose
// R x S x V weights would not fit in registers otherwise.
template <typename T>
constexpr int MaxVector(int k) {
  return (k == 3 ? 8 : 4) / static_cast<int>(sizeof(T));
}

template <typename T, int K, int SW, int SH>
cudaError_t LaunchTiledVector(const DepthwiseConvParams& p, int v, const T* x, const T* w, const T* bias, T* y,
                              float* sums, cudaStream_t stream) {
  if constexpr (MaxVector<T>(K) >= 4) {
    if (v == 4) return LaunchTiled<T, 4, K, SW, SH>(p, x, w, bias, y, sums, stream);
  }
  if constexpr (MaxVector<T>(K) >= 2) {
    if (v == 2) return LaunchTiled<T, 2, K, SW, SH>(p, x, w, bias, y, sums, stream);
  }
  return LaunchTiled<T, 1, K, SW, SH>(p, x, w, bias, y, sums, stream);
}

// Rows shift through registers (SH = stride_h) for 5x5 and 7x7 filters, stride_h 1 or 2, without
// dilation in H. 3x3 filters load every row per output row (measured on the H200 at batch 256:
// strips saved little there and their longer per-lane rows cost more on small maps).
template <typename T, int K, int SW>
cudaError_t LaunchTiledRows(const DepthwiseConvParams& p, int v, const T* x, const T* w, const T* bias, T* y,
                            float* sums, cudaStream_t stream) {
  if constexpr (K >= 5) {
    if (p.dilation_h == 1 && p.stride_h == 1) return LaunchTiledVector<T, K, SW, 1>(p, v, x, w, bias, y, sums, stream);
    if (p.dilation_h == 1 && p.stride_h == 2) return LaunchTiledVector<T, K, SW, 2>(p, v, x, w, bias, y, sums, stream);
  }
  return LaunchTiledVector<T, K, SW, 0>(p, v, x, w, bias, y, sums, stream);
}

template <typename T, int K>
cudaError_t LaunchTiledStride(const DepthwiseConvParams& p, int v, const T* x, const T* w, const T* bias, T* y,
                              float* sums, cudaStream_t stream) {
  if (p.stride_w == 1) return LaunchTiledRows<T, K, 1>(p, v, x, w, bias, y, sums, stream);
  return LaunchTiledRows<T, K, 2>(p, v, x, w, bias, y, sums, stream);
}

// Whether the tiled kernel computes p (else the generic one).
bool TiledShape(const DepthwiseConvParams& p) {
  return p.r == p.s && (p.r == 3 || p.r == 5 || p.r == 7) && p.dilation_w == 1 && (p.stride_w == 1 || p.stride_w == 2);
}

// `sums`: only for TiledShape(p) (DepthwiseConvNhwc checks).
template <typename T>
cudaError_t Launch(const DepthwiseConvParams& p, const void* x_bytes, const void* w_bytes, const void* bias_bytes,
                   void* y_bytes, float* sums, cudaStream_t stream) {
  const T* x = static_cast<const T*>(x_bytes);
  const T* w = static_cast<const T*>(w_bytes);
  const T* bias = static_cast<const T*>(bias_bytes);
  T* y = static_cast<T*>(y_bytes);
  if (TiledShape(p)) {
    const int v = VectorWidth(p, MaxVector<T>(p.r), x, y, sizeof(T));
    if (p.r == 3) return LaunchTiledStride<T, 3>(p, v, x, w, bias, y, sums, stream);
    if (p.r == 5) return LaunchTiledStride<T, 5>(p, v, x, w, bias, y, sums, stream);
    return LaunchTiledStride<T, 7>(p, v, x, w, bias, y, sums, stream);
  }
  const int per_image = p.out_h * p.out_w * p.c;
  const dim3 grid(GridSize(per_image), p.n < 65535 ? p.n : 65535);
  DepthwiseGenericKernel<T><<<grid, kBlockSize, 0, stream>>>(p, x, w, bias, y);
  return cudaGetLastError();
}

}  // namespace

bool DepthwiseConvSupported(const DepthwiseConvParams& p, const char** reason) {
  const auto fail = [reason](const char* why) {
    if (reason != nullptr) *reason = why;
    return false;
  };
  if (p.n < 1 || p.c < 1 || p.h < 1 || p.w < 1 || p.r < 1 || p.s < 1 || p.out_h < 1 || p.out_w < 1)
    return fail("a dimension is < 1");
  if (p.stride_h < 1 || p.stride_w < 1 || p.dilation_h < 1 || p.dilation_w < 1)
    return fail("a stride or dilation is < 1");
  if (p.pad_top < 0 || p.pad_left < 0 || p.pad_bottom < 0 || p.pad_right < 0) return fail("a pad is negative");
  constexpr int64_t kLimit = int64_t{1} << 31;
  const int64_t padded_h = int64_t{p.h} + p.pad_top + p.pad_bottom, padded_w = int64_t{p.w} + p.pad_left + p.pad_right;
  if (padded_h >= kLimit / 4 || padded_w >= kLimit / 4) return fail("padded height or width >= 2^29");
  const int64_t extent_h = int64_t{p.r - 1} * p.dilation_h + 1, extent_w = int64_t{p.s - 1} * p.dilation_w + 1;
  if (extent_h > padded_h || extent_w > padded_w) return fail("the dilated filter is larger than the padded input");
  if (p.out_h != (padded_h - extent_h) / p.stride_h + 1 || p.out_w != (padded_w - extent_w) / p.stride_w + 1)
    return fail("out_h / out_w do not match the convolution's output size");
  if (padded_h * padded_w >= kLimit || padded_h * padded_w * p.c >= kLimit ||
      int64_t{p.out_h} * p.out_w * p.c >= kLimit || int64_t{p.c} * p.r * p.s >= kLimit ||
      int64_t{p.n} * p.out_h >= kLimit)
    return fail("a padded image, an output image, the weights or n * out_h has >= 2^31 elements");
  if (p.c >= (1 << 24)) return fail("c >= 2^24");
  return true;
}

bool DepthwiseConvSumsChannels(const DepthwiseConvParams& p) { return TiledShape(p); }

cudaError_t DepthwiseConvNhwc(const DepthwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                              cudaStream_t stream, float* channel_sums) {
  if (!DepthwiseConvSupported(p) || x == nullptr || w == nullptr || y == nullptr) return cudaErrorInvalidValue;
  if (channel_sums != nullptr && !DepthwiseConvSumsChannels(p)) return cudaErrorInvalidValue;
  if (channel_sums == nullptr && p.kernel == DepthwiseConvParams::kSharedTiles && DepthwiseSharedTileShape(p))
    return DepthwiseConvSharedTile(p, x, w, bias, y, stream);
  return p.fp16 ? Launch<__half>(p, x, w, bias, y, channel_sums, stream)
                : Launch<float>(p, x, w, bias, y, channel_sums, stream);
}

}  // namespace kernels::cuda
