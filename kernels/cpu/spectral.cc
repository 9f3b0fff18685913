// The CPU reference kernels of DFT (the inverse one-sided form, irfft, included), STFT and
// MelWeightMatrix (extents and scalar inputs from ops/spectral.h). Transforms are direct sums in
// double over a table of the n-th roots of unity; the work is bounded by ops::kMaxDftWork.
#include "ops/spectral.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "absl/status/status.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/tensor_ops_util.h"

namespace kernels::cpu {
namespace {

using Complex = std::complex<double>;

// exp(-2πi j / n) for j < n (the forward transform's roots; the inverse uses their conjugates).
std::vector<Complex> RootsOfUnity(int64_t n) {
  std::vector<Complex> roots(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    const double angle = -2 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
    roots[static_cast<size_t>(j)] = Complex(std::cos(angle), std::sin(angle));
  }
  return roots;
}

// Point k of the n-point transform of samples[0..count) (zero beyond), forward or inverse (scaled
// by 1/n).
Complex TransformPoint(const std::vector<Complex>& samples, int64_t count, int64_t k, const std::vector<Complex>& roots,
                       bool inverse) {
  const int64_t n = static_cast<int64_t>(roots.size());
  Complex sum = 0;
  for (int64_t m = 0; m < count; ++m) {
    const Complex root = roots[static_cast<size_t>((k * m) % n)];
    sum += samples[static_cast<size_t>(m)] * (inverse ? std::conj(root) : root);
  }
  return inverse ? sum / static_cast<double>(n) : sum;
}

// Point t of the real n-point inverse of the Hermitian spectrum whose first `count` points are
// half[0..count) (count <= n / 2 + 1; zero beyond): (1/n) sum_k c_k Re(X_k e^{2πi k t / n}) with
// c_k = 2 for the points that stand for a conjugate pair, 1 for X_0 and (n even) X_{n/2}, as
// numpy's irfft computes it (the imaginary parts of those two are ignored).
double RealInversePoint(const std::vector<Complex>& half, int64_t count, int64_t t, const std::vector<Complex>& roots) {
  const int64_t n = static_cast<int64_t>(roots.size());
  double sum = 0;
  for (int64_t k = 0; k < count; ++k) {
    const double weight = k == 0 || 2 * k == n ? 1.0 : 2.0;
    sum += weight * (half[static_cast<size_t>(k)] * std::conj(roots[static_cast<size_t>((k * t) % n)])).real();
  }
  return sum / static_cast<double>(n);
}

template <typename T>
Complex SampleAt(const T* data, int64_t at, int64_t components) {
  const double re = static_cast<double>(data[at * components]);
  return Complex(re, components == 2 ? static_cast<double>(data[at * components + 1]) : 0.0);
}

absl::Status DftKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  const ir::Tensor& x = *ctx.input(0);
  absl::StatusOr<ops::DftExtents> e = ops::DftExtentsOf(ctx.node, x.shape(), ctx.input(1), ctx.input(2));
  if (!e.ok()) return e.status();
  ir::Tensor* y = ctx.output(0);
  const int64_t out_components = e->real_output ? 1 : 2;
  if (y == nullptr || y->num_elements() != e->outer * e->bins * e->inner * out_components) {
    return absl::InternalError("DFT output does not match its extents");
  }
  const std::vector<Complex> roots = RootsOfUnity(e->dft_length);
  const int64_t count = std::min(e->length, e->real_output ? e->dft_length / 2 + 1 : e->dft_length);
  return DispatchFloat(x.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* in = x.template data<T>();
    T* out = y->template data<T>();
    std::vector<Complex> line(static_cast<size_t>(count));
    for (int64_t o = 0; o < e->outer; ++o) {
      for (int64_t i = 0; i < e->inner; ++i) {
        for (int64_t m = 0; m < count; ++m) {
          line[static_cast<size_t>(m)] = SampleAt(in, (o * e->length + m) * e->inner + i, e->components);
        }
        if (e->real_output) {
          for (int64_t t = 0; t < e->bins; ++t) {
            out[(o * e->bins + t) * e->inner + i] = static_cast<T>(RealInversePoint(line, count, t, roots));
          }
          continue;
        }
        for (int64_t k = 0; k < e->bins; ++k) {
          const Complex v = TransformPoint(line, count, k, roots, e->inverse);
          const int64_t at = ((o * e->bins + k) * e->inner + i) * 2;
          out[at] = static_cast<T>(v.real());
          out[at + 1] = static_cast<T>(v.imag());
        }
      }
    }
    return absl::OkStatus();
  });
}

absl::Status StftKernel(KernelContext& ctx) {
  if (absl::Status s = RequireInput(ctx, 0); !s.ok()) return s;
  if (absl::Status s = RequireInput(ctx, 1); !s.ok()) return s;
  const ir::Tensor& signal = *ctx.input(0);
  const ir::Tensor* window = ctx.input(2);
  absl::StatusOr<ops::StftExtents> e = ops::StftExtentsOf(ctx.node, signal.shape(), *ctx.input(1),
                                                          window != nullptr ? &window->shape() : nullptr, ctx.input(3));
  if (!e.ok()) return e.status();
  if (absl::Status s = CheckOutput(ctx, 0, signal.dtype(), {e->batch, e->frames, e->bins, 2}); !s.ok()) return s;
  const std::vector<Complex> roots = RootsOfUnity(e->frame_length);
  return DispatchFloat(signal.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* in = signal.template data<T>();
    const T* w = window != nullptr ? window->template data<T>() : nullptr;
    T* out = ctx.output(0)->template data<T>();
    std::vector<Complex> frame(static_cast<size_t>(e->frame_length));
    for (int64_t b = 0; b < e->batch; ++b) {
      for (int64_t f = 0; f < e->frames; ++f) {
        for (int64_t m = 0; m < e->frame_length; ++m) {
          const Complex v = SampleAt(in, b * e->length + f * e->frame_step + m, e->components);
          frame[static_cast<size_t>(m)] = w != nullptr ? v * static_cast<double>(w[m]) : v;
        }
        for (int64_t k = 0; k < e->bins; ++k) {
          const Complex v = TransformPoint(frame, e->frame_length, k, roots, /*inverse=*/false);
          const int64_t at = ((b * e->frames + f) * e->bins + k) * 2;
          out[at] = static_cast<T>(v.real());
          out[at + 1] = static_cast<T>(v.imag());
        }
      }
    }
    return absl::OkStatus();
  });
}

// Triangular filters over the spectrogram bins, num_mel_bins + 2 edges spaced evenly on the mel scale
// (mel = 2595 log10(1 + hz / 700)) between the edges, each edge mapped to bin
// floor((dft_length + 1) hz / sample_rate): the construction of ONNX's reference.
std::vector<double> MelWeights(const ops::MelParams& p) {
  const int64_t spectrogram_bins = p.dft_length / 2 + 1;
  const double low_mel = 2595 * std::log10(1 + p.lower_edge_hertz / 700);
  const double high_mel = 2595 * std::log10(1 + p.upper_edge_hertz / 700);
  const double mel_step = (high_mel - low_mel) / static_cast<double>(p.num_mel_bins + 2);
  std::vector<int64_t> edges(static_cast<size_t>(p.num_mel_bins + 2));
  for (size_t i = 0; i < edges.size(); ++i) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * mel_step + low_mel) / 2595) - 1);
    edges[i] = static_cast<int64_t>(
        std::floor(static_cast<double>(p.dft_length + 1) * hz / static_cast<double>(p.sample_rate)));
  }
  std::vector<double> weights(static_cast<size_t>(spectrogram_bins * p.num_mel_bins));
  auto set = [&](int64_t bin, int64_t mel, double value) {
    if (bin >= 0 && bin < spectrogram_bins) weights[static_cast<size_t>(bin * p.num_mel_bins + mel)] = value;
  };
  for (int64_t i = 0; i < p.num_mel_bins; ++i) {
    const int64_t low = edges[static_cast<size_t>(i)], center = edges[static_cast<size_t>(i + 1)],
                  high = edges[static_cast<size_t>(i + 2)];
    if (center == low) {
      set(center, i, 1);
    } else {
      for (int64_t j = std::max<int64_t>(low, 0); j <= center && j < spectrogram_bins; ++j) {
        set(j, i, static_cast<double>(j - low) / static_cast<double>(center - low));
      }
    }
    for (int64_t j = std::max<int64_t>(center, 0); j < high && j < spectrogram_bins; ++j) {
      set(j, i, static_cast<double>(high - j) / static_cast<double>(high - center));
    }
  }
  return weights;
}

absl::Status MelWeightMatrixKernel(KernelContext& ctx) {
  for (size_t i = 0; i < 5; ++i) {
    if (absl::Status s = RequireInput(ctx, i); !s.ok()) return s;
  }
  absl::StatusOr<ops::MelParams> p = ops::MelParamsOf(ctx.node, ctx.inputs);
  if (!p.ok()) return p.status();
  if (absl::Status s = CheckOutput(ctx, 0, p->dtype, {p->dft_length / 2 + 1, p->num_mel_bins}); !s.ok()) return s;
  const std::vector<double> weights = MelWeights(*p);
  return DispatchFloat(p->dtype, [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    T* out = ctx.output(0)->template data<T>();
    for (size_t i = 0; i < weights.size(); ++i) out[i] = static_cast<T>(weights[i]);
    return absl::OkStatus();
  });
}

}  // namespace

std::vector<KernelDef> SpectralKernels() {
  return {{"DFT", DftKernel}, {"STFT", StftKernel}, {"MelWeightMatrix", MelWeightMatrixKernel}};
}

}  // namespace kernels::cpu
