// The CPU kernels of ai.onnx.ml LinearClassifier, LinearRegressor, SVMClassifier and SVMRegressor
// (ops/ml_models.h), computing in double what ONNX Runtime computes (its conventions for one score
// and for two classes included). They run on the host on every backend.
#include "ops/ml_models.h"

#include <cmath>

#include "kernels/cpu/float_values.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/kernel_cache.h"
#include "kernels/cpu/ml_scores.h"

namespace kernels::cpu {
namespace {

using ml::LabelPick;
using ml::Rows;
using ops::PostTransform;

// Row r of X times each row of `weights` [outputs, features], plus bias[o] (or `shared_bias`).
std::vector<double> Linear(const Rows& x, int64_t r, const std::vector<double>& weights, int64_t outputs,
                           const std::vector<double>& bias) {
  std::vector<double> out(static_cast<size_t>(outputs));
  for (int64_t o = 0; o < outputs; ++o) {
    double sum = 0;
    for (int64_t f = 0; f < x.features; ++f) sum += x.row(r)[f] * weights[o * x.features + f];
    out[o] = sum + (bias.size() == 1 ? bias[0] : bias[o]);
  }
  return out;
}

absl::Status LinearClassifier(KernelContext& ctx) {
  absl::StatusOr<std::shared_ptr<const ops::LinearModel>> parsed =
      CachedForNode<ops::LinearModel>(ctx.cache, ctx.node, [&] { return ops::ParseLinearClassifier(ctx.node); });
  if (!parsed.ok()) return parsed.status();
  const ops::LinearModel* m = parsed->get();
  const Rows x = ml::ReadRows(*ctx.input(0));
  const int64_t columns = ctx.output(1)->shape().back();
  std::vector<double> z(static_cast<size_t>(x.count * columns));
  std::vector<LabelPick> picks(static_cast<size_t>(x.count));
  for (int64_t r = 0; r < x.count; ++r) {
    std::vector<double> scores = Linear(x, r, m->coefficients, m->classes, m->intercepts);
    double* out = z.data() + r * columns;
    if (m->classes > 1) {
      picks[r].index = ml::ArgMax(scores.data(), m->classes);
      ml::TransformRow(m->post, scores.data(), m->classes);
      std::copy(scores.begin(), scores.end(), out);
      continue;
    }
    picks[r].index = scores[0] > 0 ? 1 : 0;
    if (columns == 2) {
      ml::ExpandScore(m->post, scores[0], ml::SecondClass::kComplement, out);
    } else {  // one class and no labels: the raw score (only PROBIT applies)
      out[0] = m->post == PostTransform::kProbit ? ml::Probit(scores[0]) : scores[0];
    }
  }
  return ml::WriteClassifierOutputs(m->labels, picks, z, *ctx.output(0), *ctx.output(1));
}

absl::Status LinearRegressor(KernelContext& ctx) {
  absl::StatusOr<std::shared_ptr<const ops::LinearModel>> parsed =
      CachedForNode<ops::LinearModel>(ctx.cache, ctx.node, [&] { return ops::ParseLinearRegressor(ctx.node); });
  if (!parsed.ok()) return parsed.status();
  const ops::LinearModel* m = parsed->get();
  const Rows x = ml::ReadRows(*ctx.input(0));
  std::vector<double> y;
  for (int64_t r = 0; r < x.count; ++r) {
    std::vector<double> scores = Linear(x, r, m->coefficients, m->classes, m->intercepts);
    if (m->classes > 1 || m->post == PostTransform::kProbit) ml::TransformRow(m->post, scores.data(), m->classes);
    y.insert(y.end(), scores.begin(), scores.end());
  }
  return WriteDoubles(y, *ctx.output(0));
}

// The SVM kernel between row `x` and support vector `sv`.
double KernelValue(const ops::SvmModel& m, const double* x, const double* sv) {
  double dot = 0, distance = 0;
  for (int64_t f = 0; f < m.features; ++f) {
    dot += x[f] * sv[f];
    distance += (x[f] - sv[f]) * (x[f] - sv[f]);
  }
  switch (m.kernel) {
    case ops::SvmModel::kLinear: return dot;
    case ops::SvmModel::kPoly: return std::pow(m.gamma * dot + m.coef0, m.degree);
    case ops::SvmModel::kRbf: return std::exp(-m.gamma * distance);
    case ops::SvmModel::kSigmoid: return std::tanh(m.gamma * dot + m.coef0);
  }
  return 0;
}

std::vector<double> KernelValues(const ops::SvmModel& m, const double* x) {
  std::vector<double> k(static_cast<size_t>(m.vectors));
  for (int64_t v = 0; v < m.vectors; ++v) k[v] = KernelValue(m, x, m.support_vectors.data() + v * m.features);
  return k;
}

// libsvm's coupling of pairwise probabilities r[i][j] into class probabilities (as ORT runs it).
std::vector<double> CoupleProbabilities(const std::vector<std::vector<double>>& r) {
  const size_t k = r.size();
  std::vector<std::vector<double>> q(k, std::vector<double>(k));
  std::vector<double> p(k, 1.0 / k), qp(k);
  for (size_t t = 0; t < k; ++t) {
    for (size_t j = 0; j < k; ++j) {
      if (j == t) continue;
      q[t][t] += r[j][t] * r[j][t];
      q[t][j] = j < t ? q[j][t] : -r[j][t] * r[t][j];
    }
  }
  for (int iteration = 0; iteration < 100; ++iteration) {
    double pqp = 0, max_error = 0;
    for (size_t t = 0; t < k; ++t) {
      qp[t] = 0;
      for (size_t j = 0; j < k; ++j) qp[t] += q[t][j] * p[j];
      pqp += p[t] * qp[t];
    }
    for (size_t t = 0; t < k; ++t) max_error = std::max(max_error, std::abs(qp[t] - pqp));
    if (max_error < 0.005 / k) break;
    for (size_t t = 0; t < k; ++t) {
      const double diff = (pqp - qp[t]) / q[t][t];
      p[t] += diff;
      pqp = (pqp + diff * (diff * q[t][t] + 2 * qp[t])) / (1 + diff) / (1 + diff);
      for (size_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[t][j]) / (1 + diff);
        p[j] /= 1 + diff;
      }
    }
  }
  return p;
}

// One row of a support-vector classifier: the pair scores (i < j, in order) and the label by votes.
std::vector<double> PairScores(const ops::SvmModel& m, const double* x, LabelPick& pick) {
  const int64_t classes = static_cast<int64_t>(m.labels.size());
  const std::vector<double> k = KernelValues(m, x);
  std::vector<int64_t> starts(classes + 1, 0), votes(classes, 0);
  for (int64_t c = 0; c < classes; ++c) starts[c + 1] = starts[c] + m.vectors_per_class[c];
  std::vector<double> scores;
  for (int64_t i = 0; i < classes; ++i) {
    for (int64_t j = i + 1; j < classes; ++j) {
      double s = m.rho[scores.size()];
      for (int64_t v = starts[i]; v < starts[i + 1]; ++v) s += m.coefficients[(j - 1) * m.vectors + v] * k[v];
      for (int64_t v = starts[j]; v < starts[j + 1]; ++v) s += m.coefficients[i * m.vectors + v] * k[v];
      ++votes[s > 0 ? i : j];
      scores.push_back(s);
    }
  }
  pick.index = 0;
  for (int64_t c = 1; c < classes; ++c) {
    if (votes[c] > votes[pick.index]) pick.index = c;
  }
  return scores;
}

std::vector<double> PairProbabilities(const ops::SvmModel& m, const std::vector<double>& scores) {
  const size_t classes = m.labels.size();
  std::vector<std::vector<double>> r(classes, std::vector<double>(classes));
  size_t pair = 0;
  for (size_t i = 0; i < classes; ++i) {
    for (size_t j = i + 1; j < classes; ++j, ++pair) {
      const double p = 1 - ml::Logistic(scores[pair] * m.prob_a[pair] + m.prob_b[pair]);
      r[i][j] = std::min(std::max(p, 1e-7), 1 - 1e-7);
      r[j][i] = 1 - r[i][j];
    }
  }
  return CoupleProbabilities(r);
}

// Support vectors: probabilities, pair scores, or [-s, s]-style columns for two classes.
std::vector<double> SupportVectorRow(const ops::SvmModel& m, const double* x, LabelPick& pick) {
  std::vector<double> scores = PairScores(m, x, pick);
  if (!m.prob_a.empty()) {
    std::vector<double> p = PairProbabilities(m, scores);
    ml::TransformRow(m.post, p.data(), static_cast<int64_t>(p.size()));
    return p;
  }
  if (scores.size() > 1) {
    ml::TransformRow(m.post, scores.data(), static_cast<int64_t>(scores.size()));
    return scores;
  }
  std::vector<double> two(2);
  const bool negate = m.post == PostTransform::kNone;  // ORT: [-s, s] raw, [1 - s, s] otherwise
  ml::ExpandScore(m.post, scores[0], negate ? ml::SecondClass::kNegation : ml::SecondClass::kComplement, two.data());
  return two;
}

// No support vectors: a linear score per class plus rho[0]; ORT's label rule for two classes.
std::vector<double> LinearSvmRow(const ops::SvmModel& m, const Rows& x, int64_t r, LabelPick& pick) {
  const int64_t classes = static_cast<int64_t>(m.labels.size());
  std::vector<double> scores = Linear(x, r, m.coefficients, classes, {m.rho[0]});
  pick.index = classes == 1 ? 0 : ml::ArgMax(scores.data(), classes);
  if (classes == 2 && m.prob_a.empty()) {
    const bool all_positive =
        std::all_of(m.coefficients.begin(), m.coefficients.end(), [](double c) { return c >= 0; });
    const double best = std::max(scores[0], scores[1]);
    if ((all_positive && best >= 0.5) || (!all_positive && best > 0)) pick.index = 1;
  }
  if (classes > 1 || m.post == PostTransform::kProbit) ml::TransformRow(m.post, scores.data(), classes);
  return scores;
}

absl::Status SvmClassifier(KernelContext& ctx) {
  absl::StatusOr<std::shared_ptr<const ops::SvmModel>> parsed =
      CachedForNode<ops::SvmModel>(ctx.cache, ctx.node, [&] { return ops::ParseSvmClassifier(ctx.node); });
  if (!parsed.ok()) return parsed.status();
  const ops::SvmModel* m = parsed->get();
  const Rows x = ml::ReadRows(*ctx.input(0));
  if (x.features != m->features) return absl::InvalidArgumentError("X's feature count differs from the model's");
  std::vector<double> z;
  std::vector<LabelPick> picks(static_cast<size_t>(x.count));
  for (int64_t r = 0; r < x.count; ++r) {
    const std::vector<double> row =
        m->vectors > 0 ? SupportVectorRow(*m, x.row(r), picks[r]) : LinearSvmRow(*m, x, r, picks[r]);
    z.insert(z.end(), row.begin(), row.end());
  }
  return ml::WriteClassifierOutputs(m->labels, picks, z, *ctx.output(0), *ctx.output(1));
}

absl::Status SvmRegressor(KernelContext& ctx) {
  absl::StatusOr<std::shared_ptr<const ops::SvmModel>> parsed =
      CachedForNode<ops::SvmModel>(ctx.cache, ctx.node, [&] { return ops::ParseSvmRegressor(ctx.node); });
  if (!parsed.ok()) return parsed.status();
  const ops::SvmModel* m = parsed->get();
  const Rows x = ml::ReadRows(*ctx.input(0));
  if (x.features != m->features) return absl::InvalidArgumentError("X's feature count differs from the model's");
  std::vector<double> y(static_cast<size_t>(x.count));
  for (int64_t r = 0; r < x.count; ++r) {
    if (m->vectors > 0) {
      const std::vector<double> k = KernelValues(*m, x.row(r));
      for (int64_t v = 0; v < m->vectors; ++v) y[r] += m->coefficients[v] * k[v];
      y[r] += m->rho[0];
    } else {
      y[r] = Linear(x, r, m->coefficients, 1, {m->rho[0]})[0];
    }
    if (m->one_class) y[r] = y[r] > 0 ? 1 : -1;  // post_transform does not apply (as in ORT)
  }
  return WriteDoubles(y, *ctx.output(0));
}

}  // namespace

std::vector<KernelDef> MlModelKernels() {
  return {
      {"ai.onnx.ml.LinearClassifier", LinearClassifier},
      {"ai.onnx.ml.LinearRegressor", LinearRegressor},
      {"ai.onnx.ml.SVMClassifier", SvmClassifier},
      {"ai.onnx.ml.SVMRegressor", SvmRegressor},
  };
}

}  // namespace kernels::cpu
