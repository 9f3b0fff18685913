// The CPU reference kernel of Dropout (semantics and draws in ops/dropout.h): the identity with an
// all-true mask, or in training mode a numpy-compatible mask from kernels/cpu/mt19937.h.
#include "ops/dropout.h"

#include <cstring>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/elementwise_util.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/mt19937.h"

namespace kernels::cpu {
namespace {

using elementwise::ComputeType;
using elementwise::Convert;

// output = data; the mask (when requested) all true (all ones in the opset < 10 form, where the
// mask has data's dtype).
absl::Status RunIdentity(const ir::Tensor& x, ir::Tensor& y, ir::Tensor* mask) {
  if (x.raw_data() != y.raw_data() && x.byte_size() > 0) std::memcpy(y.raw_data(), x.raw_data(), x.byte_size());
  if (mask == nullptr) return absl::OkStatus();
  return DispatchNumeric(mask->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    T* m = mask->template data<T>();
    const T one = Convert<T>(1.0f);
    for (int64_t i = 0; i < mask->num_elements(); ++i) m[i] = one;
    return absl::OkStatus();
  });
}

// output = data * mask * scale with mask = draw >= ratio, one draw per element in order; the
// product keeps numpy's result for a dropped element (-0 for negative data, NaN for NaN or Inf).
absl::Status RunTraining(const ir::Tensor& x, ir::Tensor& y, ir::Tensor* mask, double ratio, uint32_t seed) {
  if (mask != nullptr && mask->dtype() != ir::DType::kBool) {
    return absl::InvalidArgumentError(
        absl::StrCat("Dropout: the training mode's mask must be bool, not ", ir::DTypeName(mask->dtype())));
  }
  Mt19937 rng(seed);
  return DispatchFloat(x.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const C scale = static_cast<C>(1.0 / (1.0 - ratio));
    const T* in = x.template data<T>();
    T* out = y.template data<T>();
    uint8_t* m = mask != nullptr ? mask->data<uint8_t>() : nullptr;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const bool keep = rng.NextDouble() >= ratio;
      out[i] = Convert<T>(static_cast<C>(in[i]) * static_cast<C>(keep ? 1 : 0) * scale);
      if (m != nullptr) m[i] = keep ? 1 : 0;
    }
    return absl::OkStatus();
  });
}

absl::Status Dropout(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> x = elementwise::RequireInput(ctx, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<ir::Tensor*> y = elementwise::RequireOutput(ctx, 0);
  if (!y.ok()) return y.status();
  if (absl::Status s = elementwise::ExpectSameLayout(ctx, **x, **y); !s.ok()) return s;
  ir::Tensor* mask = ctx.output(1);
  if (mask != nullptr && !mask->valid()) mask = nullptr;
  if (mask != nullptr && mask->num_elements() != (*x)->num_elements()) {
    return absl::InvalidArgumentError("Dropout: mask shape does not match data shape");
  }
  absl::StatusOr<bool> trains = ops::DropoutTrains(ctx.input(1), ctx.input(2));
  if (!trains.ok()) return absl::InvalidArgumentError(absl::StrCat("Dropout: ", trains.status().message()));
  if (!*trains) return RunIdentity(**x, **y, mask);
  absl::StatusOr<ops::DropoutAttrs> attrs = ops::ParseDropoutAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<double> ratio = ops::DropoutRatio(ctx.input(1));
  if (!ratio.ok()) return ratio.status();
  const uint32_t seed = attrs->seed ? *attrs->seed : static_cast<uint32_t>(std::random_device{}());
  return RunTraining(**x, **y, mask, *ratio, seed);
}

}  // namespace

std::vector<KernelDef> DropoutKernels() { return {{"Dropout", Dropout}}; }

}  // namespace kernels::cpu
