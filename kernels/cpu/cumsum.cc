// The CPU reference kernel of CumSum and CumProd (attributes and axis from ops/cumsum.h). Float16
// accumulates in float; integers wrap modulo 2^bits like Add and Mul.
#include "ops/cumsum.h"

#include <type_traits>

#include "absl/status/status.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

// The accumulator of T: float for float16, unsigned for integers (wrapping, no signed overflow).
template <typename T, typename = void>
struct AccumulatorOf {
  using type = T;
};
template <typename T>
struct AccumulatorOf<T, std::enable_if_t<ir::kIsHalfLike<T>>> {
  using type = float;
};
template <typename T>
struct AccumulatorOf<T, std::enable_if_t<std::is_integral_v<T>>> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using Accumulator = typename AccumulatorOf<T>::type;

template <typename T>
void Scan(const T* x, T* y, const ops::ScanExtents& e, const ops::CumSumAttrs& attrs, bool product) {
  using Acc = Accumulator<T>;
  for (int64_t o = 0; o < e.outer; ++o) {
    for (int64_t i = 0; i < e.inner; ++i) {
      const int64_t base = o * e.length * e.inner + i;
      Acc sum = product ? Acc{1} : Acc{};
      auto combine = [product](Acc a, Acc b) { return static_cast<Acc>(product ? a * b : a + b); };
      for (int64_t step = 0; step < e.length; ++step) {
        const int64_t k = attrs.reverse ? e.length - 1 - step : step;
        const int64_t at = base + k * e.inner;
        const Acc value = static_cast<Acc>(x[at]);
        if (!attrs.exclusive) sum = combine(sum, value);
        y[at] = static_cast<T>(sum);
        if (attrs.exclusive) sum = combine(sum, value);
      }
    }
  }
}

absl::Status CumSum(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* axis_input = ctx.input(1);
  ir::Tensor* y = ctx.output(0);
  if (x == nullptr || axis_input == nullptr || y == nullptr) return absl::InvalidArgumentError("missing operand");
  absl::StatusOr<ops::CumSumAttrs> attrs = ops::ParseCumSumAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<int64_t> axis = ops::CumSumAxis(*axis_input, static_cast<int64_t>(x->shape().size()));
  if (!axis.ok()) return axis.status();
  const ops::ScanExtents extents = ops::ScanExtentsOf(x->shape(), *axis);
  return DispatchNumeric(x->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    Scan<T>(x->template data<T>(), y->template data<T>(), extents, *attrs, ctx.node.op_type == "CumProd");
    return absl::OkStatus();
  });
}

}  // namespace

std::vector<KernelDef> CumSumKernels() { return {{"CumSum", CumSum}, {"CumProd", CumSum}}; }

}  // namespace kernels::cpu
