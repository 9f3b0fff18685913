// Owns the CPU kernels of Det (LU decomposition with partial pivoting, in double),
// LpNormalization (x / ||x||_p along an axis; a zero norm gives 0) and MeanVarianceNormalization
// ((x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) over `axes`, as ONNX's function body defines it).
#include "ops/math_norm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/elementwise_util.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

using elementwise::Convert;

absl::Status CheckIO(const KernelContext& ctx) {
  if (ctx.input(0) == nullptr || ctx.output(0) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": missing input or output"));
  }
  if (ctx.input(0)->dtype() != ctx.output(0)->dtype()) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type, ": output dtype differs from the input's"));
  }
  return absl::OkStatus();
}

// The determinant of the n x n row-major matrix `a` (overwritten).
double Determinant(std::vector<double>& a, int64_t n) {
  double det = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < n; ++r) {
      if (std::abs(a[r * n + c]) > std::abs(a[pivot * n + c])) pivot = r;
    }
    if (a[pivot * n + c] == 0) return 0;
    if (pivot != c) {
      for (int64_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[pivot * n + k]);
      det = -det;
    }
    const double p = a[c * n + c];
    det *= p;
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / p;
      for (int64_t k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
    }
  }
  return det;
}

absl::Status Det(KernelContext& ctx) {
  if (absl::Status s = CheckIO(ctx); !s.ok()) return s;
  const ir::Tensor& x = *ctx.input(0);
  ir::Tensor& y = *ctx.output(0);
  if (x.rank() < 2 || x.shape()[x.rank() - 1] != x.shape()[x.rank() - 2]) {
    return absl::InvalidArgumentError("Det: input must be [..., M, M]");
  }
  const int64_t n = x.shape()[x.rank() - 1];
  const int64_t batch = y.num_elements();
  if (batch * n * n != x.num_elements()) return absl::InvalidArgumentError("Det: output shape mismatch");
  return DispatchFloat(x.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    std::vector<double> a(n * n);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < n * n; ++i) a[i] = Convert<double>(in[b * n * n + i]);
      y.data<T>()[b] = Convert<T>(Determinant(a, n));
    }
    return absl::OkStatus();
  });
}

absl::Status LpNormalization(KernelContext& ctx) {
  if (absl::Status s = CheckIO(ctx); !s.ok()) return s;
  const ir::Tensor& x = *ctx.input(0);
  ir::Tensor& y = *ctx.output(0);
  if (x.num_elements() != y.num_elements()) return absl::InvalidArgumentError("LpNormalization: output shape mismatch");
  absl::StatusOr<ops::LpNormalizationAttrs> attrs = ops::ParseLpNormalizationAttrs(ctx.node, x.rank());
  if (!attrs.ok()) return attrs.status();
  int64_t outer = 1, n = x.shape()[attrs->axis], inner = 1;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (d < attrs->axis) outer *= x.shape()[d];
    if (d > attrs->axis) inner *= x.shape()[d];
  }
  return DispatchFloat(x.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        double norm = 0;
        for (int64_t k = 0; k < n; ++k) {
          const double v = Convert<double>(in[base + k * inner]);
          norm += attrs->p == 1 ? std::abs(v) : v * v;
        }
        if (attrs->p == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < n; ++k) {
          const double v = Convert<double>(in[base + k * inner]);
          out[base + k * inner] = Convert<T>(norm == 0 ? 0.0 : v / norm);
        }
      }
    }
    return absl::OkStatus();
  });
}

// For each element of `shape` (row-major), the index of its group: the element with the masked
// axes set to 0, numbered over the unmasked axes.
std::vector<int64_t> GroupIndices(const std::vector<int64_t>& shape, const std::vector<bool>& mask,
                                  int64_t num_elements, int64_t* num_groups) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> strides(rank, 0);
  int64_t groups = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (mask[d]) continue;
    strides[d] = groups;
    groups *= shape[d];
  }
  *num_groups = groups;
  std::vector<int64_t> group(num_elements), index(rank, 0);
  int64_t g = 0;
  for (int64_t i = 0; i < num_elements; ++i) {
    group[i] = g;
    for (int64_t d = rank - 1; d >= 0; --d) {
      g += strides[d];
      if (++index[d] < shape[d]) break;
      g -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return group;
}

absl::Status MeanVarianceNormalization(KernelContext& ctx) {
  if (absl::Status s = CheckIO(ctx); !s.ok()) return s;
  const ir::Tensor& x = *ctx.input(0);
  ir::Tensor& y = *ctx.output(0);
  if (x.num_elements() != y.num_elements()) {
    return absl::InvalidArgumentError("MeanVarianceNormalization: output shape mismatch");
  }
  absl::StatusOr<std::vector<bool>> mask = ops::MvnAxesMask(ctx.node, x.rank());
  if (!mask.ok()) return mask.status();
  int64_t num_groups = 0;
  const std::vector<int64_t> group = GroupIndices(x.shape(), *mask, x.num_elements(), &num_groups);
  return DispatchFloat(x.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    std::vector<double> sum(num_groups, 0), sum_sq(num_groups, 0), count(num_groups, 0);
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const double v = Convert<double>(in[i]);
      sum[group[i]] += v;
      sum_sq[group[i]] += v * v;
      count[group[i]] += 1;
    }
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const int64_t g = group[i];
      const double mean = sum[g] / count[g];
      const double variance = std::max(0.0, sum_sq[g] / count[g] - mean * mean);
      out[i] = Convert<T>((Convert<double>(in[i]) - mean) / (std::sqrt(variance) + 1e-9));
    }
    return absl::OkStatus();
  });
}

}  // namespace

std::vector<KernelDef> MathNormKernels() {
  return {
      {"Det", Det},
      {"LpNormalization", LpNormalization},
      {"MeanVarianceNormalization", MeanVarianceNormalization},
  };
}

}  // namespace kernels::cpu
