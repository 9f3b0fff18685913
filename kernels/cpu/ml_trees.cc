// The CPU kernels of ai.onnx.ml TreeEnsembleClassifier and TreeEnsembleRegressor (ops/ml_models.h):
// each row walks every tree to a leaf; the leaves' weights are summed (or averaged, or their min /
// max taken) per class or target, then base_values and post_transform apply as ONNX Runtime
// applies them, including its two-class rules. They run on the host on every backend.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/float_values.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/kernel_cache.h"
#include "kernels/cpu/ml_scores.h"
#include "ops/ml_models.h"

namespace kernels::cpu {
namespace {

using ml::LabelPick;
using ops::Trees;

bool GoesTrue(const Trees& t, int64_t n, double v) {
  return (std::isnan(v) && t.missing_tracks_true[n]) || ml::BranchTakesTrue(t.modes[n], v, t.thresholds[n]);
}

// The leaf `row` reaches from `root`; an error for a feature X lacks or a walk longer than the
// node count (the links form a cycle).
absl::StatusOr<int64_t> LeafOf(const Trees& t, int64_t root, const double* row, int64_t features) {
  int64_t node = root;
  for (size_t steps = 0; steps <= t.modes.size(); ++steps) {
    if (t.modes[node] == Trees::kLeaf) return node;
    if (t.features[node] >= features) {
      return absl::InvalidArgumentError(
          absl::StrCat("a tree node reads feature ", t.features[node], "; X has ", features));
    }
    node = GoesTrue(t, node, row[t.features[node]]) ? t.true_next[node] : t.false_next[node];
  }
  return absl::InvalidArgumentError("the trees' node links form a cycle");
}

// Per class or target: the combined weights of the leaves one row reaches, and whether any leaf
// named it.
struct Scores {
  std::vector<double> value;
  std::vector<bool> has;
  double At(int64_t i) const { return has[i] ? value[i] : 0.0; }  // ORT writes an unnamed one as 0
};

absl::StatusOr<Scores> Accumulate(const Trees& t, const double* row, int64_t features) {
  Scores s{std::vector<double>(t.targets, 0.0), std::vector<bool>(t.targets, false)};
  const bool single = t.targets == 1 && t.labels.size() == 0;  // a one-target regressor
  for (int64_t root : t.roots) {
    absl::StatusOr<int64_t> leaf = LeafOf(t, root, row, features);
    if (!leaf.ok()) return leaf.status();
    std::vector<std::pair<int64_t, double>> weights = t.leaf_weights[*leaf];
    if (single) {  // one target: the leaf's first weight, or its nodes_values entry when it has none
      weights = {{0, weights.empty() ? t.thresholds[*leaf] : weights[0].second}};
    }
    for (auto [target, w] : weights) {
      double& v = s.value[target];
      v = !s.has[target] || t.aggregate <= 1 ? (s.has[target] ? v + w : w)
          : t.aggregate == 2                 ? std::min(v, w)
                                             : std::max(v, w);
      s.has[target] = true;
    }
  }
  return s;
}

absl::Status TreeEnsembleRegressor(KernelContext& ctx) {
  absl::StatusOr<std::shared_ptr<const Trees>> parsed =
      CachedForNode<Trees>(ctx.cache, ctx.node, [&] { return ops::ParseTreeRegressor(ctx.node); });
  if (!parsed.ok()) return parsed.status();
  const Trees* t = parsed->get();
  const ml::Rows x = ml::ReadRows(*ctx.input(0));
  const double trees = static_cast<double>(t->roots.size());
  std::vector<double> y;
  for (int64_t r = 0; r < x.count; ++r) {
    absl::StatusOr<Scores> s = Accumulate(*t, x.row(r), x.features);
    if (!s.ok()) return s.status();
    std::vector<double> row(t->targets);
    for (int64_t i = 0; i < t->targets; ++i) {
      if (!s->has[i]) continue;  // no leaf named this target: 0, without base_values (as ORT)
      row[i] =
          (t->aggregate == 0 ? s->value[i] / trees : s->value[i]) + (t->base_values.empty() ? 0 : t->base_values[i]);
    }
    // One target: only PROBIT applies (ORT ignores the other transforms there).
    if (t->targets > 1 || t->post == ops::PostTransform::kProbit) ml::TransformRow(t->post, row.data(), t->targets);
    y.insert(y.end(), row.begin(), row.end());
  }
  return WriteDoubles(y, *ctx.output(0));
}

// Two classes (ORT's rules): base_values folded in, the label from the positive class's score
// against 0.5 (all weights positive) or 0, and the columns from one or both scores.
LabelPick TwoClassRow(const Trees& t, Scores& s, double* z) {
  ml::SecondClass form = ml::SecondClass::kNone;
  bool one_score = false;
  if (t.base_values.size() == 2) {
    if (s.has[1]) {  // the trees' own class-1 sum is replaced, as ORT does
      s.value[1] = t.base_values[1] + s.At(0);
      s.value[0] = -s.value[1];
    } else {
      s.value[0] += t.base_values[0];
    }
  } else {
    if (t.base_values.size() == 1) s.value[0] += t.base_values[0];
    if (t.base_values.empty()) form = ml::SecondClass::kNegation;
    one_score = !s.has[1];
  }
  const double positive = s.has[1] ? s.value[1] : s.At(0);
  LabelPick pick;
  if (t.binary_case) {
    pick.index = positive > (t.weights_positive ? 0.5 : 0.0) ? 1 : 0;
    form = t.weights_positive ? ml::SecondClass::kComplement : ml::SecondClass::kNegation;
  } else {
    pick = {positive > 0 ? 1 : 0, true};
  }
  if (one_score) {
    ml::ExpandScore(t.post, s.At(0), form, z);
  } else {
    z[0] = s.At(0), z[1] = s.At(1);
    ml::TransformRow(t.post, z, 2);
  }
  return pick;
}

LabelPick ManyClassRow(const Trees& t, Scores& s, double* z) {
  for (size_t k = 0; k < t.base_values.size(); ++k) {
    s.value[k] = s.has[k] ? s.value[k] + t.base_values[k] : t.base_values[k];
    s.has[k] = true;
  }
  LabelPick pick;  // the largest score among the classes some leaf (or a base value) named
  for (int64_t k = 0; k < t.targets; ++k) {
    z[k] = s.At(k);
    if (s.has[k] && (!s.has[pick.index] || s.value[k] > s.value[pick.index])) pick.index = k;
  }
  ml::TransformRow(t.post, z, t.targets);
  return pick;
}

absl::Status TreeEnsembleClassifier(KernelContext& ctx) {
  absl::StatusOr<std::shared_ptr<const Trees>> parsed =
      CachedForNode<Trees>(ctx.cache, ctx.node, [&] { return ops::ParseTreeClassifier(ctx.node); });
  if (!parsed.ok()) return parsed.status();
  const Trees* t = parsed->get();
  const ml::Rows x = ml::ReadRows(*ctx.input(0));
  std::vector<double> z(static_cast<size_t>(x.count * t->targets));
  std::vector<LabelPick> picks(static_cast<size_t>(x.count));
  for (int64_t r = 0; r < x.count; ++r) {
    absl::StatusOr<Scores> s = Accumulate(*t, x.row(r), x.features);
    if (!s.ok()) return s.status();
    double* row = z.data() + r * t->targets;
    picks[r] = t->targets == 2 ? TwoClassRow(*t, *s, row) : ManyClassRow(*t, *s, row);
  }
  return ml::WriteClassifierOutputs(t->labels, picks, z, *ctx.output(0), *ctx.output(1));
}

}  // namespace

std::vector<KernelDef> MlTreeKernels() {
  return {
      {"ai.onnx.ml.TreeEnsembleClassifier", TreeEnsembleClassifier},
      {"ai.onnx.ml.TreeEnsembleRegressor", TreeEnsembleRegressor},
  };
}

}  // namespace kernels::cpu
