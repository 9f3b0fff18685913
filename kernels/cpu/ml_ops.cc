// The CPU kernels of the ai.onnx.ml ops (ops/ml_ops.h): Binarizer, ArrayFeatureExtractor,
// LabelEncoder and TreeEnsemble. Small per-element loops; they run on the host on every backend.
#include "ops/ml_ops.h"

#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/float_values.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/kernel_cache.h"
#include "kernels/cpu/ml_scores.h"

namespace kernels::cpu {
namespace {

absl::Status Binarizer(KernelContext& ctx) {
  const ir::Tensor& x = *ctx.input(0);
  const double threshold = ctx.attrs().GetFloat("threshold", 0.0f);
  return DispatchNumeric(x.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
    for (int64_t i = 0; i < x.num_elements(); ++i)
      out[i] = static_cast<T>(static_cast<double>(in[i]) > threshold ? 1.0 : 0.0);
    return absl::OkStatus();
  });
}

// Y[..., j] = X[..., indices[j]] along X's last axis.
absl::Status ArrayFeatureExtractor(KernelContext& ctx) {
  const ir::Tensor& x = *ctx.input(0);
  const ir::Tensor& indices = *ctx.input(1);
  const int64_t width = x.shape().back(), count = indices.num_elements();
  const int64_t rows = width == 0 ? 0 : x.num_elements() / width;
  for (int64_t j = 0; j < count; ++j) {
    if (indices.GetAsInt64(j) < 0 || indices.GetAsInt64(j) >= width) {
      return absl::InvalidArgumentError(
          absl::StrCat("index ", indices.GetAsInt64(j), " is outside X's last axis of ", width));
    }
  }
  ir::Tensor& y = *ctx.output(0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < count; ++j) y.CopyElementFrom(x, r * width + indices.GetAsInt64(j), r * count + j);
  }
  return absl::OkStatus();
}

// Where each input element goes in LabelEncoder's values (-1: the default).
std::vector<int64_t> LabelIndices(const ir::Tensor& x, const ops::LabelEncoderMap& m) {
  std::vector<int64_t> found(x.num_elements(), -1);
  if (m.key_dtype == ir::DType::kString) {
    std::unordered_map<std::string, int64_t> index;
    for (size_t k = m.string_keys.size(); k-- > 0;) index[m.string_keys[k]] = static_cast<int64_t>(k);
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      auto it = index.find(x.strings()[i]);
      if (it != index.end()) found[i] = it->second;
    }
    return found;
  }
  std::map<double, int64_t> index;
  int64_t nan_key = -1;
  for (size_t k = m.number_keys.size(); k-- > 0;) {
    if (std::isnan(m.number_keys[k])) {
      nan_key = static_cast<int64_t>(k);
    } else {
      index[m.number_keys[k]] = static_cast<int64_t>(k);
    }
  }
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const double v = x.GetAsDouble(i);
    auto it = std::isnan(v) ? index.end() : index.find(v);
    found[i] = std::isnan(v) ? nan_key : it != index.end() ? it->second : -1;
  }
  return found;
}

absl::Status LabelEncoder(KernelContext& ctx) {
  const ir::Tensor& x = *ctx.input(0);
  absl::StatusOr<std::shared_ptr<const ops::LabelEncoderMap>> parsed = CachedForNode<ops::LabelEncoderMap>(
      ctx.cache, ctx.node, [&] { return ops::ParseLabelEncoder(ctx.node, x.dtype()); });
  if (!parsed.ok()) return parsed.status();
  const ops::LabelEncoderMap* map = parsed->get();
  const std::vector<int64_t> found = LabelIndices(x, *map);
  ir::Tensor& y = *ctx.output(0);
  if (map->value_dtype == ir::DType::kString) {
    for (size_t i = 0; i < found.size(); ++i) {
      y.mutable_strings()[i] = found[i] < 0 ? map->string_default : map->string_values[found[i]];
    }
    return absl::OkStatus();
  }
  return DispatchNumeric(y.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    T* out = y.data<T>();
    for (size_t i = 0; i < found.size(); ++i) {
      out[i] = static_cast<T>(found[i] < 0 ? map->number_default : map->number_values[found[i]]);
    }
    return absl::OkStatus();
  });
}

// Whether a TreeEnsemble node sends `v` to its true branch.
bool TakesTrueBranch(const ops::TreeEnsembleAttrs& t, int64_t n, double v) {
  if (std::isnan(v) && t.missing_tracks_true[n]) return true;
  if (t.modes[n] != 6) return ml::BranchTakesTrue(t.modes[n], v, t.splits[n]);
  for (double member : t.members[n]) {  // MEMBER: v is in the node's set
    if (member == v) return true;
  }
  return false;
}

// The leaf a row reaches from `root`; an error for a walk longer than the node count (a cycle).
absl::StatusOr<int64_t> LeafOf(const ops::TreeEnsembleAttrs& t, int64_t root, const double* row, int64_t features) {
  int64_t node = root;
  if (t.true_leafs[root] != 0 && t.false_leafs[root] != 0 && t.true_ids[root] == t.false_ids[root]) {
    return t.true_ids[root];  // a tree that is one leaf
  }
  for (size_t steps = 0; steps <= t.modes.size(); ++steps) {
    if (t.feature_ids[node] >= features) return absl::InvalidArgumentError("a node reads a feature X does not have");
    const bool to_true = TakesTrueBranch(t, node, row[t.feature_ids[node]]);
    const int64_t next = to_true ? t.true_ids[node] : t.false_ids[node];
    if ((to_true ? t.true_leafs[node] : t.false_leafs[node]) != 0) return next;
    node = next;
  }
  return absl::InvalidArgumentError("the trees' node links form a cycle");
}

absl::Status TreeEnsemble(KernelContext& ctx) {
  absl::StatusOr<std::shared_ptr<const ops::TreeEnsembleAttrs>> parsed =
      CachedForNode<ops::TreeEnsembleAttrs>(ctx.cache, ctx.node, [&] { return ops::ParseTreeEnsemble(ctx.node); });
  if (!parsed.ok()) return parsed.status();
  const ops::TreeEnsembleAttrs* attrs = parsed->get();
  const ops::TreeEnsembleAttrs& t = *attrs;
  absl::StatusOr<std::vector<double>> x = ReadDoubles(*ctx.input(0));
  if (!x.ok()) return x.status();
  const int64_t rows = ctx.input(0)->shape()[0], features = ctx.input(0)->shape()[1];
  const double start = t.aggregate == 2   ? std::numeric_limits<double>::max()
                       : t.aggregate == 3 ? std::numeric_limits<double>::lowest()
                                          : 0.0;
  std::vector<double> y(rows * t.n_targets, start);
  const double trees = static_cast<double>(t.tree_roots.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t root : t.tree_roots) {
      absl::StatusOr<int64_t> leaf = LeafOf(t, root, x->data() + r * features, features);
      if (!leaf.ok()) return leaf.status();
      double& out = y[r * t.n_targets + t.leaf_target_ids[*leaf]];
      const double w = t.leaf_weights[*leaf];
      out = t.aggregate == 0   ? out + w / trees
            : t.aggregate == 1 ? out + w
            : t.aggregate == 2 ? std::min(out, w)
                               : std::max(out, w);
    }
  }
  return WriteDoubles(y, *ctx.output(0));
}

}  // namespace

std::vector<KernelDef> MlKernels() {
  return {
      {"ai.onnx.ml.Binarizer", Binarizer},
      {"ai.onnx.ml.ArrayFeatureExtractor", ArrayFeatureExtractor},
      {"ai.onnx.ml.LabelEncoder", LabelEncoder},
      {"ai.onnx.ml.TreeEnsemble", TreeEnsemble},
  };
}

}  // namespace kernels::cpu
