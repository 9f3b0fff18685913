// Depthwise 2-D convolution on NHWC for 5x5 and 7x7 filters from input tiles in shared memory
// (depthwise_conv_shared.h): a block stages the input rows a few output rows read (a run of output
// columns, 32 channel vectors), then each thread computes 4 adjacent outputs of one output row for
// its channel vector from there, its filter in registers. The register-tiled kernel keeps R input
// rows per thread in registers instead and needs 118-254 registers for these filters.
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/channel_vectors.h"
#include "kernels/cuda/depthwise_conv_shared.h"
#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"

namespace kernels::cuda {
namespace {

// 128 threads, 5 resident blocks (at most 102 registers), 40 KiB tiles: on the H200 faster than 256 x 3
// x 48 KiB and 128 x 6 x 32 KiB on every EfficientNet-B0 / ConvNeXt layer measured but one (batch 256:
// 56x56x144 stride 2 0.347 -> 0.250 ms, 7x7x1152 0.110 -> 0.075; batch 32: ConvNeXt's 56x56x96 7x7
// 0.143 -> 0.100), since blocks loading their tiles overlap more blocks computing.
constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kThreadCols = 4;                          // adjacent output columns per thread
constexpr int kMaxBlockGroups = 8;                      // column groups (of kThreadCols) per block at stride 1
constexpr int kMaxTileBytes = 40 * 1024;                // shared memory of one block's input tile
constexpr int kBlocksPerSm = 5;                         // resident blocks assumed when spreading work
constexpr int kTilesPerBlockTarget = 4 * kBlocksPerSm;  // blocks per SM to aim for before looping

// A block: image n, channel chunk (32 vectors of V channels), column tile, and `tiles_per_block`
// consecutive row tiles computed in turn (its filter loaded once for all of them).
struct SharedArgs {
  int c, h, w, out_h, out_w, pad_top, pad_left;
  int tile_rows;         // output rows per row tile
  int block_groups;      // column groups per column tile
  int in_rows, in_cols;  // the input tile in shared memory, pixels
  int chunks, column_tiles, row_tiles, tiles_per_block, row_groups;
  int activation;
  bool wide_loads;  // stage the tile with 16-byte loads (StageTileWide)
};

// Stages the tile with 16-byte loads (a.wide_loads: C * sizeof(T) a multiple of 16 and x 16-byte
// aligned): 8 lanes per pixel's 128-byte chunk row, a warp 4 pixels per load; channels past C zero.
template <typename T>
__device__ __forceinline__ void StageTileWide(const SharedArgs& a, const T* __restrict__ x_image, void* tile,
                                              int ih_first, int iw_first, int c_first) {
  constexpr int kPerLoad = 16 / sizeof(T);
  const int part = threadIdx.x % 8;  // the 16-byte part of the pixel's chunk row
  const int c = c_first + part * kPerLoad;
  const bool channels_inside = c < a.c;  // whole 16-byte parts: C is a multiple of kPerLoad
  const int pixels = a.in_rows * a.in_cols;
  uint4* out = static_cast<uint4*>(tile);
  int row = threadIdx.x / 8 / a.in_cols, col = threadIdx.x / 8 % a.in_cols;  // pixel threadIdx.x / 8
  const int step_rows = kThreads / 8 / a.in_cols, step_cols = kThreads / 8 % a.in_cols;
  for (int px = threadIdx.x / 8; px < pixels; px += kThreads / 8) {
    const int ih = ih_first + row, iw = iw_first + col;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (channels_inside && static_cast<unsigned>(ih) < static_cast<unsigned>(a.h) &&
        static_cast<unsigned>(iw) < static_cast<unsigned>(a.w))
      v = __ldg(reinterpret_cast<const uint4*>(x_image + (static_cast<int64_t>(ih) * a.w + iw) * a.c + c));
    out[px * 8 + part] = v;
    row += step_rows, col += step_cols;
    if (col >= a.in_cols) col -= a.in_cols, ++row;
  }
}

// Resident blocks the kernel is compiled for: kBlocksPerSm unless the filter alone would need more
// registers (7x7 with two float16 channels: 98 floats).
constexpr int MinBlocksPerSm(int k, int v) { return k * k * v > 64 ? 1 : kBlocksPerSm; }

template <typename T, int V, int K, int STRIDE>
__global__ void __launch_bounds__(kThreads, MinBlocksPerSm(K, V))
    DepthwiseSharedKernel(SharedArgs a, const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                          T* __restrict__ y) {
  using Vec = typename Packed<T, V>::Type;
  constexpr int NC = (kThreadCols - 1) * STRIDE + K;  // input columns of one thread's outputs
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Vec* tile = reinterpret_cast<Vec*>(shared_bytes);  // [in_rows][in_cols][32 lanes]

  int64_t block = blockIdx.x;
  const int chunk = static_cast<int>(block % a.chunks);
  block /= a.chunks;
  const int column_tile = static_cast<int>(block % a.column_tiles);
  block /= a.column_tiles;
  const int row_group = static_cast<int>(block % a.row_groups);
  const int n = static_cast<int>(block / a.row_groups);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int c0 = (chunk * 32 + lane) * V;
  const bool active = c0 < a.c;

  float wr[K][K][V], b[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    b[v] = active && bias != nullptr ? ToFloat(bias[c0 + v]) : 0.f;
#pragma unroll
    for (int r = 0; r < K; ++r)
#pragma unroll
      for (int s = 0; s < K; ++s) wr[r][s][v] = active ? ToFloat(w[((c0 + v) * K + r) * K + s]) : 0.f;
  }

  const T* x_image = x + static_cast<int64_t>(n) * a.h * a.w * a.c;
  const T* xn = x_image + c0;
  T* yn = y + static_cast<int64_t>(n) * a.out_h * a.out_w * a.c + c0;
  const int ow_first = column_tile * a.block_groups * kThreadCols;
  const int iw_first = ow_first * STRIDE - a.pad_left;
  const int items = a.tile_rows * a.block_groups;
  const int first_tile = row_group * a.tiles_per_block;
  const int end_tile = min(a.row_tiles, first_tile + a.tiles_per_block);
  for (int t = first_tile; t < end_tile; ++t) {
    const int oh_first = t * a.tile_rows;
    const int ih_first = oh_first * STRIDE - a.pad_top;
    __syncthreads();  // the previous tile's readers are done with it
    if (a.wide_loads) {
      StageTileWide<T>(a, x_image, tile, ih_first, iw_first, chunk * 32 * V);
    } else {
      for (int row = 0; row < a.in_rows; ++row) {
        const int ih = ih_first + row;
        const bool row_inside = active && static_cast<unsigned>(ih) < static_cast<unsigned>(a.h);
        for (int col = warp; col < a.in_cols; col += kWarps) {
          const int iw = iw_first + col;
          Vec v{};
          if (row_inside && static_cast<unsigned>(iw) < static_cast<unsigned>(a.w))
            v = LoadPacked<T, V>(xn + (static_cast<int64_t>(ih) * a.w + iw) * a.c);
          tile[(row * a.in_cols + col) * 32 + lane] = v;
        }
      }
    }
    __syncthreads();
    if (!active) continue;
    for (int item = warp; item < items; item += kWarps) {
      const int row = item / a.block_groups;
      const int oh = oh_first + row;
      const int group_col = (item % a.block_groups) * kThreadCols;
      const int ow = ow_first + group_col;
      if (oh >= a.out_h) break;  // items run row by row: the rest lie below the image too
      if (ow >= a.out_w) continue;
      float acc[kThreadCols][V];
#pragma unroll
      for (int u = 0; u < kThreadCols; ++u)
#pragma unroll
        for (int v = 0; v < V; ++v) acc[u][v] = b[v];
      const Vec* in_row = tile + (row * STRIDE * a.in_cols + group_col * STRIDE) * 32 + lane;
#pragma unroll
      for (int r = 0; r < K; ++r) {
#pragma unroll
        for (int j = 0; j < NC; ++j) {
          float in[V];
          Unpack(in_row[(r * a.in_cols + j) * 32], in);
#pragma unroll
          for (int u = 0; u < kThreadCols; ++u) {
            const int s = j - u * STRIDE;  // the filter column input column j meets at output u
            if (s < 0 || s >= K) continue;
#pragma unroll
            for (int v = 0; v < V; ++v) acc[u][v] = fmaf(in[v], wr[r][s][v], acc[u][v]);
          }
        }
      }
      T* out = yn + (static_cast<int64_t>(oh) * a.out_w + ow) * a.c;
#pragma unroll
      for (int u = 0; u < kThreadCols; ++u) {
        if (ow + u >= a.out_w) break;
#pragma unroll
        for (int v = 0; v < V; ++v) acc[u][v] = ApplyConvActivation(a.activation, acc[u][v]);
        StoreVec<T, V>(out + u * a.c, acc[u]);
      }
    }
  }
}

// The tile geometry of p with V-channel vectors of `vector_bytes` bytes: the most output rows per
// row tile whose input rows fit kMaxTileBytes; 0 rows when not even one does.
SharedArgs Geometry(const DepthwiseConvParams& p, int v, int vector_bytes, int resident_blocks) {
  SharedArgs a{};
  a.c = p.c, a.h = p.h, a.w = p.w, a.out_h = p.out_h, a.out_w = p.out_w;
  a.pad_top = p.pad_top, a.pad_left = p.pad_left, a.activation = p.activation;
  const int column_groups = static_cast<int>(CeilDiv(p.out_w, kThreadCols));
  // Narrower column tiles at stride 2, whose input tiles are twice as wide: more output rows fit.
  a.column_tiles = static_cast<int>(CeilDiv(column_groups, kMaxBlockGroups / p.stride_w));
  a.block_groups = static_cast<int>(CeilDiv(column_groups, a.column_tiles));
  a.in_cols = (a.block_groups * kThreadCols - 1) * p.stride_w + p.s;
  const int64_t row_bytes = int64_t{a.in_cols} * 32 * vector_bytes;
  const int64_t fitting_rows = kMaxTileBytes / row_bytes;
  a.tile_rows =
      fitting_rows < p.r ? 0 : static_cast<int>(std::min<int64_t>((fitting_rows - p.r) / p.stride_h + 1, p.out_h));
  if (a.tile_rows == 0) return a;
  a.in_rows = (a.tile_rows - 1) * p.stride_h + p.r;
  a.chunks = static_cast<int>(CeilDiv(p.c / v, 32));
  a.row_tiles = static_cast<int>(CeilDiv(p.out_h, a.tile_rows));
  const int64_t tiles = int64_t{p.n} * a.chunks * a.column_tiles * a.row_tiles;
  const int64_t wanted_blocks = int64_t{resident_blocks} * kTilesPerBlockTarget / kBlocksPerSm;
  a.tiles_per_block =
      static_cast<int>(std::clamp<int64_t>(tiles / std::max<int64_t>(wanted_blocks, 1), 1, a.row_tiles));
  a.row_groups = static_cast<int>(CeilDiv(a.row_tiles, a.tiles_per_block));
  return a;
}

template <typename T, int V, int K, int STRIDE>
cudaError_t LaunchShared(const DepthwiseConvParams& p, const T* x, const T* w, const T* bias, T* y,
                         cudaStream_t stream) {
  int sms = 0;
  if (cudaError_t e = DeviceMultiprocessors(&sms); e != cudaSuccess) return e;
  SharedArgs a = Geometry(p, V, sizeof(typename Packed<T, V>::Type), sms * kBlocksPerSm);
  if (a.tile_rows == 0) return cudaErrorInvalidValue;
  const int64_t blocks = int64_t{p.n} * a.row_groups * a.column_tiles * a.chunks;
  if (blocks > (int64_t{1} << 31) - 1) return cudaErrorInvalidValue;
  const size_t shared = size_t{a.in_rows} * a.in_cols * 32 * sizeof(typename Packed<T, V>::Type);
  a.wide_loads = 32 * sizeof(typename Packed<T, V>::Type) == 128 && p.c * sizeof(T) % 16 == 0 &&
                 reinterpret_cast<uintptr_t>(x) % 16 == 0;
  DepthwiseSharedKernel<T, V, K, STRIDE><<<static_cast<unsigned>(blocks), kThreads, shared, stream>>>(a, x, w, bias, y);
  return cudaGetLastError();
}

template <typename T, int V, int K>
cudaError_t LaunchStride(const DepthwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                         cudaStream_t stream) {
  const auto* xt = static_cast<const T*>(x);
  const auto* wt = static_cast<const T*>(w);
  const auto* bt = static_cast<const T*>(bias);
  auto* yt = static_cast<T*>(y);
  if (p.stride_h == 1) return LaunchShared<T, V, K, 1>(p, xt, wt, bt, yt, stream);
  return LaunchShared<T, V, K, 2>(p, xt, wt, bt, yt, stream);
}

template <typename T, int V>
cudaError_t LaunchFilter(const DepthwiseConvParams& p, const void* x, const void* w, const void* bias, void* y,
                         cudaStream_t stream) {
  if (p.r == 5) return LaunchStride<T, V, 5>(p, x, w, bias, y, stream);
  return LaunchStride<T, V, 7>(p, x, w, bias, y, stream);
}

// Two float16 channels per vector where C and the addresses allow (a warp's tile row is then 128
// bytes), else one.
bool PairsHalves(const DepthwiseConvParams& p, const void* x, const void* y) {
  return p.fp16 && p.c % 2 == 0 && reinterpret_cast<uintptr_t>(x) % 4 == 0 && reinterpret_cast<uintptr_t>(y) % 4 == 0;
}

}  // namespace

bool DepthwiseSharedTileShape(const DepthwiseConvParams& p) {
  if (p.r != p.s || (p.r != 5 && p.r != 7) || p.dilation_h != 1 || p.dilation_w != 1) return false;
  if (p.stride_h != p.stride_w || (p.stride_h != 1 && p.stride_h != 2)) return false;
  const SharedArgs a = Geometry(p, 1, 4, 1);  // the most chunks (one channel per vector)
  // The grid is at most one block per tile (LaunchShared's 2^31 - 1 blocks).
  return a.tile_rows > 0 && int64_t{p.n} * a.chunks * a.column_tiles * a.row_tiles < (int64_t{1} << 31);
}

bool DepthwiseConvSharedTilesFit(const DepthwiseConvParams& p) {
  int sms = 0;
  if (!DepthwiseConvSupported(p) || !DepthwiseSharedTileShape(p) || DeviceMultiprocessors(&sms) != cudaSuccess)
    return false;
  const SharedArgs a = Geometry(p, p.fp16 ? 2 : 1, 4, sms * kBlocksPerSm);
  return int64_t{p.n} * a.chunks * a.column_tiles * a.row_tiles >= sms;
}

cudaError_t DepthwiseConvSharedTile(const DepthwiseConvParams& p, const void* x, const void* w, const void* bias,
                                    void* y, cudaStream_t stream) {
  if (!DepthwiseSharedTileShape(p)) return cudaErrorInvalidValue;
  if (PairsHalves(p, x, y)) return LaunchFilter<__half, 2>(p, x, w, bias, y, stream);
  if (p.fp16) return LaunchFilter<__half, 1>(p, x, w, bias, y, stream);
  return LaunchFilter<float, 1>(p, x, w, bias, y, stream);
}

}  // namespace kernels::cuda
