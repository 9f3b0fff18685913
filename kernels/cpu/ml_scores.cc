// Score transforms and label outputs of the ai.onnx.ml model kernels (see ml_scores.h).
#include "kernels/cpu/ml_scores.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/float_values.h"

namespace kernels::cpu::ml {

Rows ReadRows(const ir::Tensor& x) {
  Rows rows;
  rows.features = x.rank() == 0 ? 1 : x.shape().back();
  rows.count = x.rank() <= 1 ? 1 : x.shape()[0];
  rows.values.resize(static_cast<size_t>(x.num_elements()));
  for (int64_t i = 0; i < x.num_elements(); ++i) rows.values[i] = x.GetAsDouble(i);
  return rows;
}

double Logistic(double x) {
  const double v = 1.0 / (1.0 + std::exp(-std::abs(x)));
  return x < 0 ? 1.0 - v : v;
}

double Probit(double x) {
  const float y = 2.0f * static_cast<float>(x) - 1.0f;  // in float, as ORT: it matters near 0.5
  const float sign = y < 0 ? -1.0f : 1.0f;
  const float lg = std::log((1.0f - y) * (1.0f + y));
  const float a = 2.0f / (static_cast<float>(M_PI) * 0.147f) + 0.5f * lg;
  const float b = (1.0f / 0.147f) * lg;
  const float erfinv = sign * std::sqrt(-a + std::sqrt(a * a - b));
  return static_cast<float>(M_SQRT2) * erfinv;
}

namespace {

void Softmax(double* row, int64_t n, bool keep_zeros) {
  double max = std::numeric_limits<double>::lowest(), sum = 0;
  for (int64_t i = 0; i < n; ++i) max = std::max(max, row[i]);
  for (int64_t i = 0; i < n; ++i) {
    if (keep_zeros && std::abs(row[i]) <= 1e-7) {  // SOFTMAX_ZERO: a zero score stays (about) zero
      row[i] *= std::exp(-max);
      continue;
    }
    row[i] = std::exp(row[i] - max);
    sum += row[i];
  }
  for (int64_t i = 0; i < n; ++i) row[i] /= sum;
}

}  // namespace

void TransformRow(ops::PostTransform post, double* row, int64_t n) {
  switch (post) {
    case ops::PostTransform::kNone: return;
    case ops::PostTransform::kSoftmax: return Softmax(row, n, false);
    case ops::PostTransform::kSoftmaxZero: return Softmax(row, n, true);
    case ops::PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) row[i] = Logistic(row[i]);
      return;
    case ops::PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) row[i] = Probit(row[i]);
      return;
  }
}

void ExpandScore(ops::PostTransform post, double s, SecondClass form, double* out2) {
  const bool logistic = post == ops::PostTransform::kLogistic;
  if (post == ops::PostTransform::kProbit || form == SecondClass::kNone) {
    out2[0] = post == ops::PostTransform::kProbit ? Probit(s) : s;
    out2[1] = 0;
  } else if (form == SecondClass::kComplement) {
    out2[1] = logistic ? Logistic(s) : s;
    out2[0] = 1 - out2[1];
  } else {
    out2[0] = logistic ? Logistic(-s) : -s;
    out2[1] = logistic ? Logistic(s) : s;
  }
}

absl::Status WriteLabels(const ops::ClassLabels& labels, const std::vector<LabelPick>& picks, ir::Tensor& y) {
  if (y.num_elements() != static_cast<int64_t>(picks.size())) {
    return absl::InvalidArgumentError("the label output's size does not match the rows");
  }
  for (size_t r = 0; r < picks.size(); ++r) {
    const int64_t i = picks[r].index;
    if (i < 0 || i >= static_cast<int64_t>(labels.size())) {
      return absl::InvalidArgumentError(absl::StrCat("class ", i, " has no label"));
    }
    if (labels.strings) {
      y.mutable_strings()[r] = labels.names[i];
    } else {
      y.data<int64_t>()[r] = picks[r].literal ? i : labels.ints[i];
    }
  }
  return absl::OkStatus();
}

absl::Status WriteClassifierOutputs(const ops::ClassLabels& labels, const std::vector<LabelPick>& picks,
                                    const std::vector<double>& scores, ir::Tensor& y, ir::Tensor& z) {
  if (absl::Status s = WriteLabels(labels, picks, y); !s.ok()) return s;
  return WriteDoubles(scores, z);
}

bool BranchTakesTrue(int64_t mode, double v, double split) {
  switch (mode) {
    case 0: return v <= split;
    case 1: return v < split;
    case 2: return v >= split;
    case 3: return v > split;
    case 4: return v == split;
    default: return v != split;
  }
}

int64_t ArgMax(const double* values, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (values[i] > values[best]) best = i;
  }
  return best;
}

}  // namespace kernels::cpu::ml
