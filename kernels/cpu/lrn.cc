// The CPU reference kernel of LRN (attributes from ops/lrn.h), computed in double for every float
// dtype.
#include "ops/lrn.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

template <typename T>
void Normalize(const T* x, T* y, int64_t batch, int64_t channels, int64_t spatial, const ops::LrnAttrs& a) {
  for (int64_t n = 0; n < batch; ++n) {
    const T* xn = x + n * channels * spatial;
    T* yn = y + n * channels * spatial;
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t first = std::max<int64_t>(0, c - a.before());
      const int64_t last = std::min<int64_t>(channels - 1, c + a.after());
      for (int64_t s = 0; s < spatial; ++s) {
        double square_sum = 0;
        for (int64_t i = first; i <= last; ++i) {
          const double v = static_cast<double>(static_cast<float>(xn[i * spatial + s]));
          square_sum += v * v;
        }
        const double scale = std::pow(a.bias + a.alpha / static_cast<double>(a.size) * square_sum, a.beta);
        yn[c * spatial + s] = static_cast<T>(static_cast<float>(static_cast<double>(xn[c * spatial + s]) / scale));
      }
    }
  }
}

absl::Status Lrn(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  ir::Tensor* y = ctx.output(0);
  if (x == nullptr || y == nullptr) return absl::InvalidArgumentError("missing operand");
  absl::StatusOr<ops::LrnAttrs> attrs = ops::ParseLrnAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const std::vector<int64_t>& dims = x->shape();
  if (dims.size() < 2) return absl::InvalidArgumentError("LRN needs rank >= 2");
  int64_t spatial = 1;
  for (size_t d = 2; d < dims.size(); ++d) spatial *= dims[d];
  return DispatchFloat(x->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    Normalize<T>(x->template data<T>(), y->template data<T>(), dims[0], dims[1], spatial, *attrs);
    return absl::OkStatus();
  });
}

}  // namespace

std::vector<KernelDef> LrnKernels() { return {{"LRN", Lrn}}; }

}  // namespace kernels::cpu
