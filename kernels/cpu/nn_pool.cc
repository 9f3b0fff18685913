// CPU kernels of MaxPool (with optional Indices), AveragePool, LpPool, GlobalAveragePool,
// GlobalMaxPool and GlobalLpPool: N-d and separable (the window reduced one spatial dim at a time,
// so a window of k1 x ... x kn taps costs about k1 + ... + kn operations per output rather than
// their product; a dim of 16 taps or more costs O(1) per element, by block prefix/suffix sums).
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/max_pool_2d.h"
#include "kernels/cpu/nn_util.h"
#include "ops/vision_attrs.h"

namespace kernels::cpu::nn {
namespace {

// One spatial dim of a pooling window over concrete extents: for output index o, the in-bounds
// taps are the input positions first[o] + t * dilation for t in [0, count[o]); padded[o] counts
// the taps inside the padded extent (the count_include_pad divisor factor).
struct DimTaps {
  std::vector<int64_t> first, count, padded;
  int64_t dilation = 1;
};

// Valid tap range [lo, hi) of a window starting at `start` (kernel k, dilation d, extent n).
inline void TapRange(int64_t start, int64_t k, int64_t d, int64_t n, int64_t& lo, int64_t& hi) {
  lo = start >= 0 ? 0 : (-start + d - 1) / d;
  hi = n - start <= 0 ? 0 : std::min(k, (n - start - 1) / d + 1);
  if (hi < lo) hi = lo;
}

std::vector<DimTaps> MakeTaps(const WindowGeometry& geo) {
  std::vector<DimTaps> dims(geo.kernel.size());
  for (size_t j = 0; j < dims.size(); ++j) {
    DimTaps& d = dims[j];
    d.dilation = geo.dilations[j];
    for (int64_t o = 0; o < geo.grid[j]; ++o) {
      const int64_t start = o * geo.strides[j] - geo.pad_begin[j];
      int64_t lo, hi, padded_lo, padded_hi;
      TapRange(start, geo.kernel[j], d.dilation, geo.image[j], lo, hi);
      TapRange(start + geo.pad_begin[j], geo.kernel[j], d.dilation, geo.image[j] + geo.pad_begin[j] + geo.pad_end[j],
               padded_lo, padded_hi);
      d.first.push_back(start + lo * d.dilation);
      d.count.push_back(hi - lo);
      d.padded.push_back(padded_hi - padded_lo);
    }
  }
  return dims;
}

struct PoolArgs {
  const ir::Tensor* x = nullptr;
  ir::Tensor* y = nullptr;
  WindowGeometry geo;
  int64_t planes = 0;  // N * C
};

absl::StatusOr<PoolArgs> ReadPoolArgs(const KernelContext& ctx) {
  PoolArgs a;
  a.x = ctx.input(0);
  a.y = ctx.output(0);
  if (a.x == nullptr || a.y == nullptr) return absl::InvalidArgumentError("X and Y are required");
  if (a.x->rank() < 3) {
    return absl::InvalidArgumentError(absl::StrCat("X must have rank >= 3 (N, C, spatial...), got ", a.x->rank()));
  }
  if (a.y->dtype() != a.x->dtype()) return absl::InvalidArgumentError("Y dtype differs from X");
  absl::StatusOr<WindowAttrs> w = ReadWindowAttrs(ctx.attrs(), static_cast<size_t>(a.x->rank() - 2), {});
  if (!w.ok()) return w.status();
  absl::StatusOr<WindowGeometry> geo = ForwardGeometry(*w, absl::MakeConstSpan(a.x->shape()).subspan(2));
  if (!geo.ok()) return geo.status();
  a.geo = *std::move(geo);
  std::vector<int64_t> y_shape = {a.x->shape()[0], a.x->shape()[1]};
  y_shape.insert(y_shape.end(), a.geo.grid.begin(), a.geo.grid.end());
  if (absl::Status s = ExpectShape(*a.y, y_shape, "Y"); !s.ok()) return s;
  a.planes = a.x->shape()[0] * a.x->shape()[1];
  return a;
}

// Separable pooling of one plane: the window reduction over one spatial dim at a time (the dims
// that shrink most first, so no intermediate is larger than the plane's input or output), each
// stage reducing one dim from image to grid extent. A stage's element is the reduction of a box of
// input taps: its value and, for max with indices, the plane offset of the chosen tap. Max ignores
// NaN taps and, among equal maxima, keeps the smallest offset (the first tap in row-major order),
// whatever the order of the stages.
// Windows of at least this many taps along a dim reduce in O(extent) per line (SeparablePool's
// StageLong) instead of scanning every tap.
constexpr int64_t kLongWindow = 16;

template <typename V, bool kMax>
class SeparablePool {
 public:
  SeparablePool(const WindowGeometry& geo, const std::vector<DimTaps>& taps, bool track_index)
      : geo_(geo), taps_(taps), track_index_(track_index) {}

  // Reduces the plane `in` (row-major image dims) into `out` (grid dims), `out_index` when tracked.
  absl::Status Run(const V* in, std::vector<V>& out, std::vector<int64_t>& out_index) {
    const size_t nd = geo_.kernel.size();
    std::vector<int64_t> shape = geo_.image;
    cur_.assign(in, in + Product(shape));
    if (track_index_) {
      cur_index_.resize(cur_.size());
      for (size_t i = 0; i < cur_index_.size(); ++i) cur_index_[i] = static_cast<int64_t>(i);
    }
    std::vector<size_t> order(nd);
    for (size_t j = 0; j < nd; ++j) order[j] = j;
    auto ratio = [&](size_t j) { return geo_.image[j] == 0 ? 0.0 : static_cast<double>(geo_.grid[j]) / geo_.image[j]; };
    std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return ratio(i) < ratio(j); });
    for (size_t j : order) {
      const int64_t outer = Product(absl::MakeConstSpan(shape).subspan(0, j));
      const int64_t inner = Product(absl::MakeConstSpan(shape).subspan(j + 1));
      if (geo_.grid[j] > 0 && outer > std::numeric_limits<int64_t>::max() / geo_.grid[j]) {
        return absl::ResourceExhaustedError("pooling buffer too large");
      }
      absl::StatusOr<std::vector<V>> next = ScratchBuffer<V>(outer * geo_.grid[j], inner);
      if (!next.ok()) return next.status();
      next_ = *std::move(next);
      if (track_index_) next_index_.assign(next_.size(), kNoTap);
      Stage(taps_[j], outer, shape[j], geo_.grid[j], inner, geo_.kernel[j]);
      std::swap(cur_, next_);
      std::swap(cur_index_, next_index_);
      shape[j] = geo_.grid[j];
    }
    out = std::move(cur_);
    out_index = std::move(cur_index_);
    return absl::OkStatus();
  }

  static constexpr int64_t kNoTap = std::numeric_limits<int64_t>::max();

  // The reduction's starting value: neutral for max (NaN taps never win a strict >) and sum.
  static V Init() {
    if constexpr (!kMax) {
      return V{0};
    } else if constexpr (std::numeric_limits<V>::has_infinity) {
      return -std::numeric_limits<V>::infinity();
    } else {
      return std::numeric_limits<V>::lowest();
    }
  }

 private:
  // next_[a, o, i] = reduce over taps t of cur_[a, first[o] + t * dilation, i].
  void Stage(const DimTaps& d, int64_t outer, int64_t extent, int64_t grid, int64_t inner, int64_t kernel) {
    if (kernel >= kLongWindow) return StageLong(d, outer, extent, grid, inner, kernel);
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t o = 0; o < grid; ++o) {
        V* dst = next_.data() + (a * grid + o) * inner;
        int64_t* dst_index = track_index_ ? next_index_.data() + (a * grid + o) * inner : nullptr;
        std::fill(dst, dst + inner, Init());
        for (int64_t t = 0; t < d.count[o]; ++t) {
          const int64_t src_offset = (a * extent + d.first[o] + t * d.dilation) * inner;
          const V* src = cur_.data() + src_offset;
          if constexpr (kMax) {
            if (dst_index != nullptr) {
              const int64_t* src_index = cur_index_.data() + src_offset;
              for (int64_t i = 0; i < inner; ++i) {
                if (src[i] > dst[i] || (src[i] == dst[i] && src_index[i] < dst_index[i])) {
                  dst[i] = src[i];
                  dst_index[i] = src_index[i];
                }
              }
            } else {
              for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] > dst[i] ? src[i] : dst[i];
            }
          } else {
            for (int64_t i = 0; i < inner; ++i) dst[i] += src[i];
          }
        }
      }
    }
  }

  // A partial reduction: for max, the value and the offset ordering equal values (kNoTap: none);
  // for sums, the sum (index unused).
  struct Entry {
    V value;
    int64_t index;
  };
  // Max: the larger value (a NaN y never wins; x is never NaN), then the smaller index. Sum: x + y.
  static Entry Combine(const Entry& x, const Entry& y) {
    if constexpr (kMax) {
      return y.value > x.value || (y.value == x.value && y.index < x.index) ? y : x;
    } else {
      return {x.value + y.value, 0};
    }
  }

  // A stage in O(extent + grid) per line (van Herk / Gil-Werman) rather than O(grid * kernel):
  // along each residue class of the line modulo the dilation, reductions of blocks of `kernel`
  // taps from each block's start (prefix) and to its end (suffix). A full window spans at most two
  // blocks (the suffix of one and the prefix of the next); a window clipped by the image starts at
  // a block's start or ends at the class's last tap. Max gives the same results as Stage (Combine
  // is a total order, so the maximum does not depend on how taps are grouped); sums add at most
  // `kernel` taps per partial sum, as Stage does, in another order.
  void StageLong(const DimTaps& d, int64_t outer, int64_t extent, int64_t grid, int64_t inner, int64_t kernel) {
    const int64_t dil = d.dilation;
    const Entry none{Init(), kNoTap};
    std::vector<Entry> line(extent), prefix(extent), suffix(extent);
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t p = 0; p < extent; ++p) {
          const int64_t src = (a * extent + p) * inner + i;
          line[p] = {cur_[src], track_index_ ? cur_index_[src] : p};
        }
        for (int64_t r = 0; r < std::min(dil, extent); ++r) {
          const int64_t m = (extent - r + dil - 1) / dil;  // taps in this residue class
          for (int64_t q = 0; q < m; ++q) {
            const int64_t p = r + q * dil;
            prefix[p] = Combine(q % kernel == 0 ? none : prefix[p - dil], line[p]);
          }
          for (int64_t q = m; q-- > 0;) {
            const int64_t p = r + q * dil;
            suffix[p] = Combine(q % kernel == kernel - 1 || q == m - 1 ? none : suffix[p + dil], line[p]);
          }
        }
        for (int64_t o = 0; o < grid; ++o) {
          Entry best = none;
          if (d.count[o] > 0) {
            const int64_t p0 = d.first[o], p1 = p0 + (d.count[o] - 1) * dil;
            const int64_t q0 = p0 / dil, q1 = p1 / dil, m = (extent - p0 % dil + dil - 1) / dil;
            if (q0 / kernel != q1 / kernel) {
              best = Combine(suffix[p0], prefix[p1]);
            } else if (q0 % kernel == 0) {
              best = prefix[p1];
            } else if (q1 == m - 1 || q1 % kernel == kernel - 1) {
              best = suffix[p0];
            } else {  // not reached for pooling windows; kept exact regardless
              for (int64_t p = p0; p <= p1; p += dil) best = Combine(best, line[p]);
            }
          }
          const int64_t dst = (a * grid + o) * inner + i;
          next_[dst] = best.value;
          if (track_index_) next_index_[dst] = best.index;
        }
      }
    }
  }

  const WindowGeometry& geo_;
  const std::vector<DimTaps>& taps_;
  const bool track_index_;
  std::vector<V> cur_, next_;
  std::vector<int64_t> cur_index_, next_index_;
};

// Calls visit(flat output index within the plane, output multi-index) for every output position.
template <typename Visit>
void ForEachOutput(const std::vector<int64_t>& grid, Visit&& visit) {
  const int64_t size = Product(grid);
  std::vector<int64_t> out(grid.size(), 0);
  for (int64_t o = 0; o < size; ++o) {
    visit(o, out);
    for (size_t j = out.size(); j-- > 0;) {
      if (++out[j] < grid[j]) break;
      out[j] = 0;
    }
  }
}

// Row-major plane offset of a tap given per-dim positions, and its column-major equivalent.
int64_t ColumnMajorOffset(int64_t row_offset, const std::vector<int64_t>& image) {
  int64_t col = 0, stride = 1;
  std::vector<int64_t> pos(image.size());
  for (size_t j = image.size(); j-- > 0;) {
    pos[j] = row_offset % image[j];
    row_offset /= image[j];
  }
  for (size_t j = 0; j < image.size(); ++j) {
    col += pos[j] * stride;
    stride *= image[j];
  }
  return col;
}

// Max pooling with the results of a direct row-major scan that starts from the window's first
// in-bounds tap and replaces the best on a strict >: an empty window gives lowest() (index offset
// 0); a window whose first tap is NaN gives NaN (at that tap); otherwise the maximum of the non-NaN
// taps, at the first of its taps.
template <typename T>
absl::Status MaxPoolTyped(const PoolArgs& a, ir::Tensor* indices, bool column_major) {
  using V = Acc<T>;
  const std::vector<DimTaps> taps = MakeTaps(a.geo);
  const int64_t in_size = Product(a.geo.image), out_size = Product(a.geo.grid);
  const size_t nd = a.geo.kernel.size();
  std::vector<int64_t> in_stride(nd, 1);
  for (size_t j = nd; j-- > 1;) in_stride[j - 1] = in_stride[j] * a.geo.image[j];
  SeparablePool<V, true> pool(a.geo, taps, indices != nullptr);
  std::vector<V> plane(in_size), out;
  std::vector<int64_t> out_index;
  const T* x = a.x->data<T>();
  T* y = a.y->data<T>();
  int64_t* ind = indices != nullptr ? indices->data<int64_t>() : nullptr;
  for (int64_t p = 0; p < a.planes; ++p) {
    for (int64_t i = 0; i < in_size; ++i) plane[i] = static_cast<V>(x[p * in_size + i]);
    if (absl::Status s = pool.Run(plane.data(), out, out_index); !s.ok()) return s;
    ForEachOutput(a.geo.grid, [&](int64_t o, const std::vector<int64_t>& pos) {
      V value = out[o];
      int64_t offset = ind != nullptr ? out_index[o] : 0;
      bool empty = false;
      int64_t first = 0;
      for (size_t j = 0; j < nd; ++j) {
        empty = empty || taps[j].count[pos[j]] == 0;
        first += taps[j].first[pos[j]] * in_stride[j];
      }
      if (empty) {
        value = std::numeric_limits<V>::lowest();
        offset = 0;
      } else if (plane[first] != plane[first]) {  // NaN first tap
        value = plane[first];
        offset = first;
      }
      y[p * out_size + o] = static_cast<T>(value);
      if (ind != nullptr)
        ind[p * out_size + o] = p * in_size + (column_major ? ColumnMajorOffset(offset, a.geo.image) : offset);
    });
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status AveragePoolTyped(const PoolArgs& a, bool count_include_pad) {
  const std::vector<DimTaps> taps = MakeTaps(a.geo);
  const int64_t in_size = Product(a.geo.image), out_size = Product(a.geo.grid);
  SeparablePool<double, false> pool(a.geo, taps, false);
  std::vector<double> plane(in_size), out;
  std::vector<int64_t> unused;
  const T* x = a.x->data<T>();
  T* y = a.y->data<T>();
  for (int64_t p = 0; p < a.planes; ++p) {
    for (int64_t i = 0; i < in_size; ++i) plane[i] = static_cast<double>(x[p * in_size + i]);
    if (absl::Status s = pool.Run(plane.data(), out, unused); !s.ok()) return s;
    ForEachOutput(a.geo.grid, [&](int64_t o, const std::vector<int64_t>& pos) {
      int64_t count = 1;
      for (size_t j = 0; j < pos.size(); ++j)
        count *= count_include_pad ? taps[j].padded[pos[j]] : taps[j].count[pos[j]];
      y[p * out_size + o] = static_cast<T>(count > 0 ? out[o] / count : 0.0);
    });
  }
  return absl::OkStatus();
}

// |v|^p, exactly for the common p.
double PowAbs(double v, int64_t p) {
  const double a = std::fabs(v);
  return p == 1 ? a : p == 2 ? a * a : std::pow(a, static_cast<double>(p));
}

// s^(1/p).
double Root(double s, int64_t p) { return p == 1 ? s : p == 2 ? std::sqrt(s) : std::pow(s, 1.0 / p); }

// LpPool: (sum of |x|^p over the window's in-bounds taps)^(1/p).
template <typename T>
absl::Status LpPoolTyped(const PoolArgs& a, int64_t power) {
  const std::vector<DimTaps> taps = MakeTaps(a.geo);
  const int64_t in_size = Product(a.geo.image), out_size = Product(a.geo.grid);
  SeparablePool<double, false> pool(a.geo, taps, false);
  std::vector<double> plane(in_size), out;
  std::vector<int64_t> unused;
  const T* x = a.x->data<T>();
  T* y = a.y->data<T>();
  for (int64_t p = 0; p < a.planes; ++p) {
    for (int64_t i = 0; i < in_size; ++i) plane[i] = PowAbs(static_cast<double>(x[p * in_size + i]), power);
    if (absl::Status s = pool.Run(plane.data(), out, unused); !s.ok()) return s;
    for (int64_t o = 0; o < out_size; ++o) y[p * out_size + o] = static_cast<T>(Root(out[o], power));
  }
  return absl::OkStatus();
}

// Output shape of a global pool: [N, C, 1, ...].
absl::Status CheckGlobalShapes(const ir::Tensor* x, const ir::Tensor* y) {
  if (x == nullptr || y == nullptr) return absl::InvalidArgumentError("X and Y are required");
  if (x->rank() < 2) return absl::InvalidArgumentError("X must have rank >= 2");
  if (y->dtype() != x->dtype()) return absl::InvalidArgumentError("Y dtype differs from X");
  std::vector<int64_t> y_shape(x->shape().size(), 1);
  y_shape[0] = x->shape()[0];
  y_shape[1] = x->shape()[1];
  return ExpectShape(*y, y_shape, "Y");
}

template <typename T, bool kMax>
absl::Status GlobalPoolTyped(const ir::Tensor& x, ir::Tensor& y) {
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t size = planes == 0 ? 0 : x.num_elements() / planes;
  const T* in = x.data<T>();
  T* out = y.data<T>();
  for (int64_t p = 0; p < planes; ++p) {
    const T* xp = in + p * size;
    if constexpr (kMax) {
      Acc<T> best = std::numeric_limits<Acc<T>>::lowest();
      for (int64_t i = 0; i < size; ++i) best = std::max(best, static_cast<Acc<T>>(xp[i]));
      out[p] = static_cast<T>(best);
    } else {
      double sum = 0;
      for (int64_t i = 0; i < size; ++i) sum += static_cast<double>(xp[i]);
      out[p] = static_cast<T>(size > 0 ? sum / size : 0.0);
    }
  }
  return absl::OkStatus();
}

// GlobalAveragePool of a float32 [N, C, H, W] value stored channels-last (from the CPU executor):
// per channel the same double sum, in the same order, as GlobalPoolTyped.
void GlobalAveragePoolChannelsLast(const ir::Tensor& x, ir::Tensor& y) {
  const int64_t batch = x.shape()[0], channels = x.shape()[1], size = x.shape()[2] * x.shape()[3];
  std::vector<double> sums(static_cast<size_t>(channels));
  for (int64_t n = 0; n < batch; ++n) {
    std::fill(sums.begin(), sums.end(), 0.0);
    const float* in = x.data<float>() + n * size * channels;
    for (int64_t i = 0; i < size; ++i) {
      for (int64_t c = 0; c < channels; ++c) sums[c] += static_cast<double>(in[i * channels + c]);
    }
    for (int64_t c = 0; c < channels; ++c) {
      y.data<float>()[n * channels + c] = static_cast<float>(size > 0 ? sums[c] / size : 0.0);
    }
  }
}

}  // namespace

absl::Status MaxPool(KernelContext& ctx) {
  absl::StatusOr<PoolArgs> args = ReadPoolArgs(ctx);
  if (!args.ok()) return args.status();
  ir::Tensor* indices = ctx.output(1);
  if (indices != nullptr) {
    if (indices->dtype() != ir::DType::kInt64) {
      return absl::InvalidArgumentError("Indices must be int64");
    }
    if (absl::Status s = ExpectShape(*indices, args->y->shape(), "Indices"); !s.ok()) return s;
  }
  // The plain-scan 2-D path for short windows; long ones (up to a whole map) stay separable, whose
  // long stages take O(extent) per line where the scan takes O(kernel) per output.
  const std::vector<int64_t>& kernel = args->geo.kernel;
  if (indices == nullptr && args->x->dtype() == ir::DType::kFloat32 && kernel.size() == 2 &&
      std::max(kernel[0], kernel[1]) < kLongWindow) {
    MaxPool2dFloat(args->x->data<float>(), args->planes, args->geo, args->y->data<float>());
    return absl::OkStatus();
  }
  const bool column_major = ctx.attrs().GetInt("storage_order", 0) != 0;
  return DispatchNumeric(args->x->dtype(),
                         [&](auto tag) { return MaxPoolTyped<decltype(tag)>(*args, indices, column_major); });
}

absl::Status AveragePool(KernelContext& ctx) {
  absl::StatusOr<PoolArgs> args = ReadPoolArgs(ctx);
  if (!args.ok()) return args.status();
  const bool count_include_pad = ctx.attrs().GetInt("count_include_pad", 0) != 0;
  return DispatchFloat(args->x->dtype(),
                       [&](auto tag) { return AveragePoolTyped<decltype(tag)>(*args, count_include_pad); });
}

absl::Status LpPool(KernelContext& ctx) {
  absl::StatusOr<int64_t> power = ops::ParseLpPoolP(ctx.node);
  if (!power.ok()) return power.status();
  absl::StatusOr<PoolArgs> args = ReadPoolArgs(ctx);
  if (!args.ok()) return args.status();
  return DispatchFloat(args->x->dtype(), [&](auto tag) { return LpPoolTyped<decltype(tag)>(*args, *power); });
}

absl::Status GlobalLpPool(KernelContext& ctx) {
  absl::StatusOr<int64_t> power = ops::ParseLpPoolP(ctx.node);
  if (!power.ok()) return power.status();
  if (absl::Status s = CheckGlobalShapes(ctx.input(0), ctx.output(0)); !s.ok()) return s;
  const ir::Tensor& x = *ctx.input(0);
  ir::Tensor& y = *ctx.output(0);
  return DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const int64_t planes = x.shape()[0] * x.shape()[1];
    const int64_t size = planes == 0 ? 0 : x.num_elements() / planes;
    for (int64_t p = 0; p < planes; ++p) {
      double sum = 0;
      for (int64_t i = 0; i < size; ++i) sum += PowAbs(static_cast<double>(x.data<T>()[p * size + i]), *power);
      y.data<T>()[p] = static_cast<T>(Root(sum, *power));
    }
    return absl::OkStatus();
  });
}

absl::Status GlobalAveragePool(KernelContext& ctx) {
  if (absl::Status s = CheckGlobalShapes(ctx.input(0), ctx.output(0)); !s.ok()) return s;
  if ((ctx.channels_last_inputs & 1) != 0) {
    GlobalAveragePoolChannelsLast(*ctx.input(0), *ctx.output(0));
    return absl::OkStatus();
  }
  return DispatchFloat(ctx.input(0)->dtype(),
                       [&](auto tag) { return GlobalPoolTyped<decltype(tag), false>(*ctx.input(0), *ctx.output(0)); });
}

absl::Status GlobalMaxPool(KernelContext& ctx) {
  if (absl::Status s = CheckGlobalShapes(ctx.input(0), ctx.output(0)); !s.ok()) return s;
  return DispatchNumeric(ctx.input(0)->dtype(),
                         [&](auto tag) { return GlobalPoolTyped<decltype(tag), true>(*ctx.input(0), *ctx.output(0)); });
}

}  // namespace kernels::cpu::nn
