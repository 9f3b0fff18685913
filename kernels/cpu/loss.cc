// The CPU reference kernels of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (attributes and
// extents from ops/loss.h). Values are computed in double and stored in the input's dtype.
#include "ops/loss.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/float_values.h"
#include "kernels/cpu/kernel.h"

namespace kernels::cpu {
namespace {

// LogSoftmax over C of [N, C, D] values, in place.
void LogSoftmaxOverClasses(const ops::LossExtents& e, std::vector<double>& values) {
  if (values.empty()) return;  // an empty dim (C = 0 included): nothing to normalise
  for (int64_t n = 0; n < e.batch; ++n) {
    for (int64_t d = 0; d < e.spatial; ++d) {
      double* base = values.data() + n * e.classes * e.spatial + d;
      double max_value = -INFINITY;
      for (int64_t c = 0; c < e.classes; ++c) max_value = std::max(max_value, base[c * e.spatial]);
      double sum = 0;
      for (int64_t c = 0; c < e.classes; ++c) sum += std::exp(base[c * e.spatial] - max_value);
      const double log_sum = max_value + std::log(sum);
      for (int64_t c = 0; c < e.classes; ++c) base[c * e.spatial] -= log_sum;
    }
  }
}

// The loss of log-probabilities `log_prob` ([N, C, D]) against `target` ([N, D]), weighted and
// reduced as `attrs` says (mean divides by the sum of the weights that were applied).
absl::StatusOr<std::vector<double>> NegativeLogLikelihood(const std::vector<double>& log_prob,
                                                          const std::vector<int64_t>& target,
                                                          const std::vector<double>* weight, const ops::LossExtents& e,
                                                          const ops::LossAttrs& attrs) {
  std::vector<double> losses(target.size());
  double loss_sum = 0, weight_sum = 0;
  for (int64_t n = 0; n < e.batch; ++n) {
    for (int64_t d = 0; d < e.spatial; ++d) {
      const size_t at = static_cast<size_t>(n * e.spatial + d);
      const int64_t t = target[at];
      if (attrs.ignore_index && t == *attrs.ignore_index) continue;
      if (t < 0 || t >= e.classes) {
        return absl::InvalidArgumentError(
            absl::StrCat("target value ", t, " is outside [0, ", e.classes, ") and not ignore_index"));
      }
      const double w = weight != nullptr ? (*weight)[static_cast<size_t>(t)] : 1.0;
      losses[at] = -log_prob[static_cast<size_t>((n * e.classes + t) * e.spatial + d)] * w;
      loss_sum += losses[at];
      weight_sum += w;
    }
  }
  switch (attrs.reduction) {
    case ops::LossReduction::kNone: return losses;
    case ops::LossReduction::kSum: return std::vector<double>{loss_sum};
    case ops::LossReduction::kMean: return std::vector<double>{loss_sum / weight_sum};
  }
  return absl::InternalError("unknown reduction");
}

// Both ops: `softmax_first` applies LogSoftmax over C (SoftmaxCrossEntropyLoss) and writes it to
// output 1 when that output is requested.
absl::Status Loss(KernelContext& ctx, bool softmax_first) {
  const ir::Tensor* input = ctx.input(0);
  const ir::Tensor* target = ctx.input(1);
  ir::Tensor* loss = ctx.output(0);
  if (input == nullptr || target == nullptr || loss == nullptr) return absl::InvalidArgumentError("missing operand");
  absl::StatusOr<ops::LossAttrs> attrs = ops::ParseLossAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<ops::LossExtents> extents = ops::LossExtentsOf(input->shape(), target->shape());
  if (!extents.ok()) return extents.status();
  absl::StatusOr<std::vector<double>> values = ReadDoubles(*input);
  if (!values.ok()) return values.status();
  std::vector<double> weight;
  if (const ir::Tensor* w = ctx.input(2); w != nullptr) {
    if (w->num_elements() != extents->classes) {
      return absl::InvalidArgumentError(
          absl::StrCat("weight has ", w->num_elements(), " values for ", extents->classes, " classes"));
    }
    absl::StatusOr<std::vector<double>> w_values = ReadDoubles(*w);
    if (!w_values.ok()) return w_values.status();
    weight = *std::move(w_values);
  }
  if (softmax_first) {
    LogSoftmaxOverClasses(*extents, *values);
    if (ir::Tensor* log_prob = ctx.output(1); log_prob != nullptr) {
      if (absl::Status s = WriteDoubles(*values, *log_prob); !s.ok()) return s;
    }
  }
  absl::StatusOr<std::vector<double>> result = NegativeLogLikelihood(
      *values, target->ToInt64Vector(), ctx.input(2) != nullptr ? &weight : nullptr, *extents, *attrs);
  if (!result.ok()) return result.status();
  if (static_cast<int64_t>(result->size()) != loss->num_elements()) {
    return absl::InternalError("loss output size does not match the reduction");
  }
  return WriteDoubles(*result, *loss);
}

absl::Status NegativeLogLikelihoodLoss(KernelContext& ctx) { return Loss(ctx, /*softmax_first=*/false); }
absl::Status SoftmaxCrossEntropyLoss(KernelContext& ctx) { return Loss(ctx, /*softmax_first=*/true); }

}  // namespace

std::vector<KernelDef> LossKernels() {
  return {{"NegativeLogLikelihoodLoss", NegativeLogLikelihoodLoss},
          {"SoftmaxCrossEntropyLoss", SoftmaxCrossEntropyLoss}};
}

}  // namespace kernels::cpu
