// Shared helpers of the nn-family CPU kernels: window attributes and geometry, BLAS gemm
// wrappers, im2col/col2im and float16 staging.
#include "kernels/cpu/nn_util.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cpu/parallel.h"

namespace kernels::cpu::nn {
namespace {

using ops::ParseAutoPad;
using ops::ReadInts;

absl::Status CheckBlasDim(int64_t v) {
  if (v < 0 || v > INT_MAX) {
    return absl::InvalidArgumentError(absl::StrCat("matrix dim ", v, " out of BLAS range"));
  }
  return absl::OkStatus();
}

absl::Status CheckGemmDims(int64_t m, int64_t n, int64_t k) {
  for (int64_t v : {m, n, k}) {
    if (absl::Status s = CheckBlasDim(v); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// OpenBLAS's own threads spin in sched_yield between calls, taking the cores from ParallelFor's
// workers: gemms run on one BLAS thread each, split across the pool by SplitGemm. The setting is
// process-wide (an application's own OpenBLAS calls become single-threaded too).
void UseOneBlasThread() {
  static const bool once = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)once;
}

// How a gemm is split across ParallelFor's threads: along the columns of C (chunks of whole
// cache lines) when there are enough, otherwise along its rows; small gemms stay whole.
struct GemmSplit {
  bool along_n = true;
  int64_t min_chunk = 0;
};

GemmSplit SplitGemm(int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kMinParallelMacs = int64_t{1} << 18;
  const int64_t threads = ParallelThreads();
  if (threads == 1 || m * n * k < kMinParallelMacs * 2) return {true, n};
  if (n >= 64 * threads) return {true, ((n + threads - 1) / threads + 15) / 16 * 16};
  if (m >= 16 * threads) return {false, (m + threads - 1) / threads};
  return {true, n};
}

// Shared body of Im2Col (kToCol) and Col2Im. Walks every (channel, kernel tap) row of the column
// matrix; within a row, every grid line along the last dim, whose valid range is computed once.
template <typename T, bool kToCol>
void Transfer(const T* src, int64_t channels, const WindowGeometry& geo, T* dst) {
  const size_t nd = geo.kernel.size();
  const size_t last = nd - 1;
  const int64_t kernel_size = Product(geo.kernel);
  const int64_t grid_size = Product(geo.grid);
  const int64_t image_size = Product(geo.image);
  const int64_t grid_last = geo.grid[last];
  const int64_t image_last = geo.image[last];
  const int64_t stride_last = geo.strides[last];
  const int64_t lines = grid_last == 0 ? 0 : grid_size / grid_last;
  std::vector<int64_t> image_stride(nd, 1);
  for (size_t j = last; j-- > 0;) image_stride[j] = image_stride[j + 1] * geo.image[j + 1];

  std::vector<int64_t> tap(nd, 0), line(nd, 0);
  for (int64_t c = 0; c < channels; ++c) {
    std::fill(tap.begin(), tap.end(), 0);
    for (int64_t k = 0; k < kernel_size; ++k) {
      const int64_t row = (c * kernel_size + k) * grid_size;
      const int64_t image_base = c * image_size;
      const int64_t offset_last = tap[last] * geo.dilations[last] - geo.pad_begin[last];
      // Grid points g with 0 <= g * stride + offset_last < image_last.
      int64_t lo = offset_last >= 0 ? 0 : (-offset_last + stride_last - 1) / stride_last;
      int64_t hi = image_last - offset_last <= 0 ? 0 : (image_last - offset_last - 1) / stride_last + 1;
      lo = std::min(lo, grid_last);
      hi = std::clamp(hi, lo, grid_last);
      std::fill(line.begin(), line.end(), 0);
      for (int64_t l = 0; l < lines; ++l) {
        int64_t image_offset = image_base;
        bool inside = true;
        for (size_t j = 0; j < last; ++j) {
          const int64_t p = line[j] * geo.strides[j] + tap[j] * geo.dilations[j] - geo.pad_begin[j];
          if (p < 0 || p >= geo.image[j]) {
            inside = false;
            break;
          }
          image_offset += p * image_stride[j];
        }
        const int64_t col_offset = row + l * grid_last;
        if constexpr (kToCol) {
          T* out = dst + col_offset;
          if (!inside) {
            std::fill(out, out + grid_last, T{});
          } else {
            const T* in = src + image_offset + offset_last;
            std::fill(out, out + lo, T{});
            if (stride_last == 1) {
              std::copy(in + lo, in + hi, out + lo);
            } else {
              for (int64_t g = lo; g < hi; ++g) out[g] = in[g * stride_last];
            }
            std::fill(out + hi, out + grid_last, T{});
          }
        } else if (inside) {
          const T* in = src + col_offset;
          T* out = dst + image_offset + offset_last;
          for (int64_t g = lo; g < hi; ++g) out[g * stride_last] += in[g];
        }
        for (size_t j = last; j-- > 0;) {  // next line
          if (++line[j] < geo.grid[j]) break;
          line[j] = 0;
        }
      }
      for (size_t j = nd; j-- > 0;) {  // next tap
        if (++tap[j] < geo.kernel[j]) break;
        tap[j] = 0;
      }
    }
  }
}

}  // namespace

absl::StatusOr<WindowAttrs> ReadWindowAttrs(const ir::Attributes& attrs, size_t spatial,
                                            absl::Span<const int64_t> kernel_from_weights) {
  std::optional<std::vector<int64_t>> weights_kernel;
  if (!kernel_from_weights.empty()) weights_kernel.emplace(kernel_from_weights.begin(), kernel_from_weights.end());
  absl::StatusOr<ops::Window> window = ops::ReadWindow(attrs, spatial, weights_kernel, !weights_kernel);
  if (!window.ok()) return window.status();
  WindowAttrs w;
  w.auto_pad = window->auto_pad;
  w.kernel = *std::move(window->kernel);  // present: given, or required
  w.strides = std::move(window->strides);
  w.dilations = std::move(window->dilations);
  w.pads = std::move(window->pads);
  w.ceil_mode = window->ceil_mode;
  return w;
}

absl::StatusOr<WindowGeometry> ForwardGeometry(const WindowAttrs& w, absl::Span<const int64_t> input_spatial) {
  const size_t nd = w.kernel.size();
  if (input_spatial.size() != nd) {
    return absl::InvalidArgumentError("input spatial rank does not match the kernel");
  }
  WindowGeometry geo;
  geo.image.assign(input_spatial.begin(), input_spatial.end());
  geo.kernel = w.kernel;
  geo.strides = w.strides;
  geo.dilations = w.dilations;
  for (size_t i = 0; i < nd; ++i) {
    const int64_t in = input_spatial[i], s = w.strides[i];
    const int64_t dk = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t out, pb, pe;
    if (w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower) {
      out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + dk - in);
      pb = w.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
      pe = total - pb;
    } else {
      const bool valid = w.auto_pad == AutoPad::kValid;
      pb = valid ? 0 : w.pads[i];
      pe = valid ? 0 : w.pads[i + nd];
      const int64_t span = in + pb + pe - dk;
      if (span < 0) {
        return absl::InvalidArgumentError(absl::StrCat("window of extent ", dk, " exceeds the padded input extent ",
                                                       in + pb + pe, " in spatial dim ", i));
      }
      out = (w.ceil_mode ? (span + s - 1) / s : span / s) + 1;
      if (w.ceil_mode && (out - 1) * s >= in + pb) --out;  // last window must start in the input
    }
    geo.grid.push_back(out);
    geo.pad_begin.push_back(pb);
    geo.pad_end.push_back(pe);
  }
  return geo;
}

int64_t Product(absl::Span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

absl::Status ExpectShape(const ir::Tensor& t, absl::Span<const int64_t> shape, const char* what) {
  if (!std::equal(t.shape().begin(), t.shape().end(), shape.begin(), shape.end())) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has shape ", ir::ShapeToString(t.shape()), ", expected ", ir::ShapeToString(shape)));
  }
  return absl::OkStatus();
}

namespace {

void BlasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
              int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void BlasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
              int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// C[j] = alpha * (a . column j of op(B)) + beta * C[j] for one row a of length k: every output
// summed in the same order, so that equal columns of op(B) give bit-equal outputs (BLAS kernels sum a
// chunk's tail columns in another order than its body, and a softmax over logits of 1e19 turns those
// last bits into different probabilities: ONNX's light resnet50). Split over columns only.
template <typename T>
void RowTimesMatrix(bool trans_b, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c) {
  constexpr int kLanes = 8;
  auto finish = [&](int64_t j, T sum) { c[j] = alpha * sum + (beta == T{0} ? T{0} : beta * c[j]); };
  ParallelFor(n, ItemsForWork(k, int64_t{1} << 15), [&](int64_t begin, int64_t end) {
    if (trans_b) {  // B is [n, k]: one dot product per output, in kLanes partial sums
      for (int64_t j = begin; j < end; ++j) {
        const T* row = b + j * k;
        T lanes[kLanes] = {};
        int64_t i = 0;
        for (; i + kLanes <= k; i += kLanes) {
          for (int l = 0; l < kLanes; ++l) lanes[l] += a[i + l] * row[i + l];
        }
        for (int l = 0; i < k; ++i, ++l) lanes[l] += a[i] * row[i];
        T sum = T{0};
        for (int l = 0; l < kLanes; ++l) sum += lanes[l];
        finish(j, sum);
      }
      return;
    }
    std::vector<T> sums(end - begin, T{0});  // B is [k, n]: rows of B added in order
    for (int64_t i = 0; i < k; ++i) {
      const T* row = b + i * n + begin;
      const T ai = a[i];
      for (int64_t j = 0; j < end - begin; ++j) sums[j] += ai * row[j];
    }
    for (int64_t j = begin; j < end; ++j) finish(j, sums[j - begin]);
  });
}

// Row-major C = alpha op(A) op(B) + beta C, split across ParallelFor's threads by SplitGemm (one
// row of A: RowTimesMatrix).
template <typename T>
absl::Status SplitBlasGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b,
                           T beta, T* c) {
  if (absl::Status s = CheckGemmDims(m, n, k); !s.ok()) return s;
  if (m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) {
    for (int64_t i = 0; i < m * n; ++i) c[i] = beta == 0 ? T{0} : c[i] * beta;
    return absl::OkStatus();
  }
  if (m == 1) {  // op(A) is one row: k contiguous elements either way
    RowTimesMatrix(trans_b, n, k, alpha, a, b, beta, c);
    return absl::OkStatus();
  }
  UseOneBlasThread();
  const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
  const auto ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
  const GemmSplit split = SplitGemm(m, n, k);
  if (split.along_n) {
    ParallelFor(n, split.min_chunk, [&](int64_t begin, int64_t end) {
      BlasGemm(ta, tb, m, end - begin, k, alpha, a, lda, b + (trans_b ? begin * k : begin), ldb, beta, c + begin, n);
    });
  } else {
    ParallelFor(m, split.min_chunk, [&](int64_t begin, int64_t end) {
      BlasGemm(ta, tb, end - begin, n, k, alpha, a + (trans_a ? begin : begin * k), lda, b, ldb, beta, c + begin * n,
               n);
    });
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  const float* b, float beta, float* c) {
  return SplitBlasGemm(trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
}

absl::Status Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                  const double* b, double beta, double* c) {
  return SplitBlasGemm(trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
}

namespace {

// Transfer over channel ranges on ParallelFor's threads (channels are independent).
template <typename T, bool kToCol>
void ParallelTransfer(const T* src, int64_t channels, const WindowGeometry& geo, T* dst) {
  constexpr int64_t kMinElementsPerChunk = 1 << 15;
  const int64_t col_rows = Product(geo.kernel) * Product(geo.grid), image = Product(geo.image);
  ParallelFor(channels, ItemsForWork(col_rows, kMinElementsPerChunk), [&](int64_t begin, int64_t end) {
    const int64_t src_step = kToCol ? image : col_rows, dst_step = kToCol ? col_rows : image;
    Transfer<T, kToCol>(src + begin * src_step, end - begin, geo, dst + begin * dst_step);
  });
}

}  // namespace

template <typename T>
void Im2Col(const T* image, int64_t channels, const WindowGeometry& geo, T* col) {
  ParallelTransfer<T, true>(image, channels, geo, col);
}

template <typename T>
void Col2Im(const T* col, int64_t channels, const WindowGeometry& geo, T* image) {
  ParallelTransfer<T, false>(col, channels, geo, image);
}

template void Im2Col<float>(const float*, int64_t, const WindowGeometry&, float*);
template void Im2Col<double>(const double*, int64_t, const WindowGeometry&, double*);
template void Col2Im<float>(const float*, int64_t, const WindowGeometry&, float*);
template void Col2Im<double>(const double*, int64_t, const WindowGeometry&, double*);

namespace {

bool IsHalfLike(const ir::Tensor* t) {
  return t != nullptr && (t->dtype() == ir::DType::kFloat16 || t->dtype() == ir::DType::kBFloat16);
}

template <typename T>
void Widen(const ir::Tensor& from, float* to) {
  const T* src = from.data<T>();
  for (int64_t j = 0; j < from.num_elements(); ++j) to[j] = static_cast<float>(src[j]);
}

template <typename T>
void Narrow(const ir::Tensor& from, ir::Tensor& to) {
  const float* src = from.data<float>();
  T* dst = to.data<T>();
  for (int64_t j = 0; j < from.num_elements(); ++j) dst[j] = T(src[j]);
}

}  // namespace

bool IsHalf(const KernelContext& ctx) { return IsHalfLike(ctx.input(0)); }

absl::Status RunAsFloat32(KernelContext& ctx, KernelFn fn) {
  std::vector<ir::Tensor> inputs(ctx.inputs.size()), outputs(ctx.outputs.size());
  KernelContext f32{ctx.node, ctx.inputs, ctx.outputs};
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const ir::Tensor* t = ctx.inputs[i];
    if (!IsHalfLike(t)) continue;
    absl::StatusOr<ir::Tensor> copy = ir::Tensor::Create(ir::DType::kFloat32, t->shape());
    if (!copy.ok()) return copy.status();
    if (t->dtype() == ir::DType::kFloat16) {
      Widen<ir::Half>(*t, copy->data<float>());
    } else {
      Widen<ir::BFloat16>(*t, copy->data<float>());
    }
    inputs[i] = *std::move(copy);
    f32.inputs[i] = &inputs[i];
  }
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    const ir::Tensor* t = ctx.outputs[i];
    if (!IsHalfLike(t)) continue;
    absl::StatusOr<ir::Tensor> copy = ir::Tensor::Create(ir::DType::kFloat32, t->shape());
    if (!copy.ok()) return copy.status();
    outputs[i] = *std::move(copy);
    f32.outputs[i] = &outputs[i];
  }
  if (absl::Status s = fn(f32); !s.ok()) return s;
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    if (!outputs[i].valid()) continue;
    if (ctx.outputs[i]->dtype() == ir::DType::kFloat16) {
      Narrow<ir::Half>(outputs[i], *ctx.outputs[i]);
    } else {
      Narrow<ir::BFloat16>(outputs[i], *ctx.outputs[i]);
    }
  }
  return absl::OkStatus();
}

}  // namespace kernels::cpu::nn
