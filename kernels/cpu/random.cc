// The CPU reference kernels of the random generator ops (semantics in ops/random.h): uniform and
// normal draws, Bernoulli and Multinomial samples, from numpy's legacy generator
// (kernels/cpu/mt19937.h), seeded by the node's `seed` or afresh on every run.
#include "ops/random.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/elementwise_util.h"
#include "kernels/cpu/float_values.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/mt19937.h"

namespace kernels::cpu {
namespace {

using elementwise::Convert;

// The parsed attributes and a generator seeded as they say.
struct Draw {
  ops::RandomAttrs attrs;
  Mt19937 rng;
};

absl::StatusOr<Draw> StartDraw(const KernelContext& ctx) {
  const ir::Tensor* in = ctx.input(0);
  absl::StatusOr<ops::RandomAttrs> attrs =
      ops::ParseRandomAttrs(ctx.node, in != nullptr ? in->dtype() : ir::DType::kFloat32);
  if (!attrs.ok()) return attrs.status();
  const uint32_t seed = attrs->seed ? *attrs->seed : static_cast<uint32_t>(std::random_device{}());
  return Draw{*attrs, Mt19937(seed)};
}

// Fills output 0 with next() per element, in order, converted to its dtype.
template <typename Next>
absl::Status FillOutput(const KernelContext& ctx, Next&& next) {
  absl::StatusOr<ir::Tensor*> y = elementwise::RequireOutput(ctx, 0);
  if (!y.ok()) return y.status();
  return DispatchNumeric((*y)->dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    T* out = (*y)->template data<T>();
    for (int64_t i = 0; i < (*y)->num_elements(); ++i) out[i] = Convert<T>(next(i));
    return absl::OkStatus();
  });
}

// RandomUniform, RandomUniformLike: low + u * (high - low), as numpy's rand scaled.
absl::Status Uniform(KernelContext& ctx) {
  absl::StatusOr<Draw> d = StartDraw(ctx);
  if (!d.ok()) return d.status();
  return FillOutput(ctx, [&](int64_t) { return d->rng.NextDouble() * (d->attrs.high - d->attrs.low) + d->attrs.low; });
}

// RandomNormal, RandomNormalLike: mean + scale * z, as numpy's randn scaled.
absl::Status Normal(KernelContext& ctx) {
  absl::StatusOr<Draw> d = StartDraw(ctx);
  if (!d.ok()) return d.status();
  return FillOutput(ctx, [&](int64_t) { return d->rng.NextGauss() * d->attrs.scale + d->attrs.mean; });
}

// Bernoulli: 1 with probability x[i], one numpy binomial(1, x[i]) draw per element.
absl::Status Bernoulli(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> x = elementwise::RequireInput(ctx, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<double>> p = ReadDoubles(**x);
  if (!p.ok()) return p.status();
  for (size_t i = 0; i < p->size(); ++i) {
    if (!((*p)[i] >= 0 && (*p)[i] <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Bernoulli: probability ", (*p)[i], " at index ", i, " is outside [0, 1]"));
    }
  }
  absl::StatusOr<Draw> d = StartDraw(ctx);
  if (!d.ok()) return d.status();
  return FillOutput(ctx, [&](int64_t i) { return static_cast<double>(d->rng.NextBernoulli((*p)[i])); });
}

// The cumulative softmax of one row of unnormalised log-probabilities; an error for NaN or an
// all -inf row.
absl::StatusOr<std::vector<double>> CumulativeProbabilities(const double* logits, int64_t classes) {
  const double top = *std::max_element(logits, logits + classes);
  if (std::isnan(top) || std::isinf(top)) {
    return absl::InvalidArgumentError(absl::StrCat("Multinomial: a row's largest log-probability is ", top));
  }
  std::vector<double> cdf(classes);
  double total = 0;
  for (int64_t c = 0; c < classes; ++c) {
    if (std::isnan(logits[c])) return absl::InvalidArgumentError("Multinomial: a log-probability is NaN");
    total += std::exp(logits[c] - top);
    cdf[c] = total;
  }
  return cdf;
}

// Multinomial: per row of [batch, classes] log-probabilities, sample_size class indices, each the
// first class whose cumulative probability exceeds a uniform draw.
absl::Status Multinomial(KernelContext& ctx) {
  absl::StatusOr<const ir::Tensor*> x = elementwise::RequireInput(ctx, 0);
  if (!x.ok()) return x.status();
  if ((*x)->rank() != 2 || (*x)->shape()[1] < 1) {
    return absl::InvalidArgumentError("Multinomial: input must be [batch_size, class_size] with a class");
  }
  absl::StatusOr<std::vector<double>> logits = ReadDoubles(**x);
  if (!logits.ok()) return logits.status();
  absl::StatusOr<Draw> d = StartDraw(ctx);
  if (!d.ok()) return d.status();
  const int64_t classes = (*x)->shape()[1], samples = d->attrs.sample_size;
  std::vector<double> cdf;
  absl::Status row_error;
  absl::Status s = FillOutput(ctx, [&](int64_t i) -> double {
    if (i % samples == 0) {
      absl::StatusOr<std::vector<double>> row =
          CumulativeProbabilities(logits->data() + (i / samples) * classes, classes);
      if (!row.ok()) {
        row_error.Update(row.status());
        cdf.assign(classes, 1.0);
      } else {
        cdf = *std::move(row);
      }
    }
    const double target = d->rng.NextDouble() * cdf.back();
    return static_cast<double>(std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin());
  });
  return row_error.ok() ? s : row_error;
}

}  // namespace

std::vector<KernelDef> RandomKernels() {
  return {{"RandomUniform", Uniform},   {"RandomUniformLike", Uniform}, {"RandomNormal", Normal},
          {"RandomNormalLike", Normal}, {"Bernoulli", Bernoulli},       {"Multinomial", Multinomial}};
}

}  // namespace kernels::cpu
