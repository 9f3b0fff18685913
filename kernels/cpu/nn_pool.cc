// CPU kernels of MaxPool (with optional Indices), AveragePool, GlobalAveragePool and
// GlobalMaxPool: N-d, direct loops over each window's in-bounds taps.
#include <algorithm>
#include <limits>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/nn_util.h"

namespace kernels::cpu::nn {
namespace {

// Per spatial dim and output index: the in-bounds input positions of the window, and how many
// taps fall inside the padded extent (the count_include_pad divisor factor).
struct PoolPlan {
  std::vector<std::vector<std::vector<int64_t>>> taps;  // [dim][out] -> positions
  std::vector<std::vector<int64_t>> padded_count;       // [dim][out]
  std::vector<int64_t> in_stride;                       // row-major strides of the input plane
  std::vector<int64_t> col_stride;                      // column-major strides (storage_order 1)
};

PoolPlan MakePlan(const WindowGeometry& geo) {
  const size_t nd = geo.kernel.size();
  PoolPlan plan;
  plan.taps.resize(nd);
  plan.padded_count.resize(nd);
  plan.in_stride.assign(nd, 1);
  plan.col_stride.assign(nd, 1);
  for (size_t j = nd; j-- > 1;) plan.in_stride[j - 1] = plan.in_stride[j] * geo.image[j];
  for (size_t j = 1; j < nd; ++j) plan.col_stride[j] = plan.col_stride[j - 1] * geo.image[j - 1];
  for (size_t j = 0; j < nd; ++j) {
    for (int64_t o = 0; o < geo.grid[j]; ++o) {
      std::vector<int64_t> positions;
      int64_t padded = 0;
      for (int64_t k = 0; k < geo.kernel[j]; ++k) {
        const int64_t p = o * geo.strides[j] + k * geo.dilations[j] - geo.pad_begin[j];
        if (p >= -geo.pad_begin[j] && p < geo.image[j] + geo.pad_end[j]) ++padded;
        if (p >= 0 && p < geo.image[j]) positions.push_back(p);
      }
      plan.taps[j].push_back(std::move(positions));
      plan.padded_count[j].push_back(padded);
    }
  }
  return plan;
}

// Calls visit(row_major_offset, col_major_offset) for every in-bounds tap of the window at
// output multi-index `out`.
template <typename Visit>
void ForEachTap(const PoolPlan& plan, const std::vector<int64_t>& out, Visit&& visit) {
  const size_t nd = out.size();
  absl::InlinedVector<const std::vector<int64_t>*, 4> lists(nd);
  for (size_t j = 0; j < nd; ++j) {
    lists[j] = &plan.taps[j][out[j]];
    if (lists[j]->empty()) return;
  }
  absl::InlinedVector<size_t, 4> t(nd, 0);
  while (true) {
    int64_t row = 0, col = 0;
    for (size_t j = 0; j < nd; ++j) {
      row += (*lists[j])[t[j]] * plan.in_stride[j];
      col += (*lists[j])[t[j]] * plan.col_stride[j];
    }
    visit(row, col);
    size_t j = nd;
    while (j-- > 0) {
      if (++t[j] < lists[j]->size()) break;
      t[j] = 0;
    }
    if (j == static_cast<size_t>(-1)) return;
  }
}

// Advances a multi-index over `dims`; false after the last.
bool NextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (size_t j = idx.size(); j-- > 0;) {
    if (++idx[j] < dims[j]) return true;
    idx[j] = 0;
  }
  return false;
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

// 1-D and 2-D geometry as 2-D (a 1-D op gets a leading spatial dim of extent 1); false for 3-D+.
bool As2D(const WindowGeometry& geo, WindowGeometry& g2) {
  const size_t nd = geo.kernel.size();
  if (nd > 2) return false;
  g2 = geo;
  if (nd == 1) {
    for (auto* v : {&g2.image, &g2.grid, &g2.kernel, &g2.strides, &g2.dilations}) {
      v->insert(v->begin(), 1);
    }
    g2.pad_begin.insert(g2.pad_begin.begin(), 0);
    g2.pad_end.insert(g2.pad_end.begin(), 0);
  }
  return true;
}

// Valid tap range [lo, hi) of a window starting at `start` (kernel k, dilation d, extent n).
inline void TapRange(int64_t start, int64_t k, int64_t d, int64_t n, int64_t& lo, int64_t& hi) {
  lo = start >= 0 ? 0 : (-start + d - 1) / d;
  hi = n - start <= 0 ? 0 : std::min(k, (n - start - 1) / d + 1);
  if (hi < lo) hi = lo;
}

// Plain-loop 2-D pooling of every plane: max (with optional argmax index) or average.
template <typename T, bool kMax>
void Pool2D(const T* x, int64_t planes, const WindowGeometry& g, bool count_include_pad, bool column_major, T* y,
            int64_t* indices) {
  const int64_t ih = g.image[0], iw = g.image[1], oh = g.grid[0], ow = g.grid[1];
  const int64_t kh = g.kernel[0], kw = g.kernel[1], sh = g.strides[0], sw = g.strides[1];
  const int64_t dh = g.dilations[0], dw = g.dilations[1], pt = g.pad_begin[0], pl = g.pad_begin[1];
  const int64_t in_size = ih * iw, out_size = oh * ow;
  for (int64_t p = 0; p < planes; ++p) {
    const T* xp = x + p * in_size;
    for (int64_t r = 0; r < oh; ++r) {
      const int64_t h0 = r * sh - pt;
      int64_t hlo, hhi;
      TapRange(h0, kh, dh, ih, hlo, hhi);
      int64_t hpad = 0;
      for (int64_t a = 0; a < kh; ++a) {
        const int64_t hpos = h0 + a * dh;
        hpad += hpos >= -pt && hpos < ih + g.pad_end[0];
      }
      for (int64_t c = 0; c < ow; ++c) {
        const int64_t w0 = c * sw - pl;
        int64_t wlo, whi;
        TapRange(w0, kw, dw, iw, wlo, whi);
        const int64_t o = p * out_size + r * ow + c;
        if constexpr (kMax) {
          Acc<T> best = std::numeric_limits<Acc<T>>::lowest();
          int64_t best_h = -1, best_w = -1;
          for (int64_t a = hlo; a < hhi; ++a) {
            const T* row = xp + (h0 + a * dh) * iw + w0;
            for (int64_t b = wlo; b < whi; ++b) {
              const Acc<T> v = static_cast<Acc<T>>(row[b * dw]);
              if (best_h < 0 || v > best) {
                best = v;
                best_h = h0 + a * dh;
                best_w = w0 + b * dw;
              }
            }
          }
          y[o] = static_cast<T>(best);
          if (indices != nullptr) {
            const int64_t off = best_h < 0 ? 0 : column_major ? best_w * ih + best_h : best_h * iw + best_w;
            indices[o] = p * in_size + off;
          }
        } else {
          double sum = 0;
          for (int64_t a = hlo; a < hhi; ++a) {
            const T* row = xp + (h0 + a * dh) * iw + w0;
            for (int64_t b = wlo; b < whi; ++b) sum += static_cast<double>(row[b * dw]);
          }
          int64_t count;
          if (count_include_pad) {
            int64_t wpad = 0;
            for (int64_t b = 0; b < kw; ++b) {
              const int64_t wpos = w0 + b * dw;
              wpad += wpos >= -pl && wpos < iw + g.pad_end[1];
            }
            count = hpad * wpad;
          } else {
            count = (hhi - hlo) * (whi - wlo);
          }
          y[o] = static_cast<T>(count > 0 ? sum / count : 0.0);
        }
      }
    }
  }
}

// The N-d (not 2-D) pooling loop: visit(plane's input, plane, flat output index, output
// position) for every output element, planes outermost.
template <typename T, typename Visit>
void ForEachOutputNd(const PoolArgs& a, Visit visit) {
  const int64_t in_size = Product(a.geo.image), out_size = Product(a.geo.grid);
  const T* x = a.x->data<T>();
  std::vector<int64_t> out(a.geo.grid.size(), 0);
  for (int64_t p = 0; p < a.planes; ++p) {
    std::fill(out.begin(), out.end(), 0);
    for (int64_t o = 0; o < out_size; ++o) {
      visit(x + p * in_size, p, p * out_size + o, out);
      NextIndex(out, a.geo.grid);
    }
  }
}

template <typename T>
absl::Status MaxPoolTyped(const PoolArgs& a, ir::Tensor* indices, bool column_major) {
  int64_t* ind = indices != nullptr ? indices->data<int64_t>() : nullptr;
  if (WindowGeometry g2; As2D(a.geo, g2)) {
    Pool2D<T, true>(a.x->data<T>(), a.planes, g2, false, column_major, a.y->data<T>(), ind);
    return absl::OkStatus();
  }
  const PoolPlan plan = MakePlan(a.geo);
  const int64_t in_size = Product(a.geo.image);
  T* y = a.y->data<T>();
  ForEachOutputNd<T>(a, [&](const T* xp, int64_t p, int64_t o, const std::vector<int64_t>& out) {
    Acc<T> best = std::numeric_limits<Acc<T>>::lowest();
    int64_t best_row = -1, best_col = -1;
    ForEachTap(plan, out, [&](int64_t row, int64_t col) {
      const Acc<T> v = static_cast<Acc<T>>(xp[row]);
      if (best_row < 0 || v > best) {
        best = v;
        best_row = row;
        best_col = col;
      }
    });
    y[o] = static_cast<T>(best);
    if (ind != nullptr) ind[o] = p * in_size + std::max<int64_t>(0, column_major ? best_col : best_row);
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status AveragePoolTyped(const PoolArgs& a, bool count_include_pad) {
  if (WindowGeometry g2; As2D(a.geo, g2)) {
    Pool2D<T, false>(a.x->data<T>(), a.planes, g2, count_include_pad, false, a.y->data<T>(), nullptr);
    return absl::OkStatus();
  }
  const PoolPlan plan = MakePlan(a.geo);
  T* y = a.y->data<T>();
  ForEachOutputNd<T>(a, [&](const T* xp, int64_t, int64_t o, const std::vector<int64_t>& out) {
    double sum = 0;
    int64_t count = 1;
    for (size_t j = 0; j < out.size(); ++j) {
      count *= count_include_pad ? plan.padded_count[j][out[j]] : static_cast<int64_t>(plan.taps[j][out[j]].size());
    }
    ForEachTap(plan, out, [&](int64_t row, int64_t) { sum += static_cast<double>(xp[row]); });
    y[o] = static_cast<T>(count > 0 ? sum / count : 0.0);
  });
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

absl::Status GlobalAveragePool(KernelContext& ctx) {
  if (absl::Status s = CheckGlobalShapes(ctx.input(0), ctx.output(0)); !s.ok()) return s;
  return DispatchFloat(ctx.input(0)->dtype(),
                       [&](auto tag) { return GlobalPoolTyped<decltype(tag), false>(*ctx.input(0), *ctx.output(0)); });
}

absl::Status GlobalMaxPool(KernelContext& ctx) {
  if (absl::Status s = CheckGlobalShapes(ctx.input(0), ctx.output(0)); !s.ok()) return s;
  return DispatchNumeric(ctx.input(0)->dtype(),
                         [&](auto tag) { return GlobalPoolTyped<decltype(tag), true>(*ctx.input(0), *ctx.output(0)); });
}

}  // namespace kernels::cpu::nn
