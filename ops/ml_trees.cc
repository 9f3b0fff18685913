// TreeEnsembleClassifier / TreeEnsembleRegressor (ai.onnx.ml 1 and 3): their nodes_* and
// class_* / target_* attributes as flat, checked trees (ops::Trees in ml_models.h).
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "ops/ml_models.h"

namespace ops {
namespace {

absl::StatusOr<int64_t> ModeCode(const std::string& mode) {
  static const std::map<std::string, int64_t>* const kModes =
      new std::map<std::string, int64_t>{{"BRANCH_LEQ", 0}, {"BRANCH_LT", 1},  {"BRANCH_GTE", 2},     {"BRANCH_GT", 3},
                                         {"BRANCH_EQ", 4},  {"BRANCH_NEQ", 5}, {"LEAF", Trees::kLeaf}};
  auto it = kModes->find(mode);
  if (it == kModes->end()) return absl::InvalidArgumentError(absl::StrCat("unknown nodes_modes entry '", mode, "'"));
  return it->second;
}

using NodeIndex = std::map<std::pair<int64_t, int64_t>, int64_t>;  // (tree id, node id) -> flat index

// Each maximal run of one nodes_treeids value is a tree, rooted at its first node (as ONNX Runtime).
absl::StatusOr<NodeIndex> IndexNodes(const std::vector<int64_t>& tree_ids, const std::vector<int64_t>& node_ids,
                                     Trees& t) {
  NodeIndex index;
  std::set<int64_t> finished;
  for (size_t i = 0; i < node_ids.size(); ++i) {
    if (i == 0 || tree_ids[i] != tree_ids[i - 1]) {
      if (!finished.insert(tree_ids[i]).second) {
        return absl::InvalidArgumentError(absl::StrCat("tree ", tree_ids[i], "'s nodes are not listed together"));
      }
      t.roots.push_back(static_cast<int64_t>(i));
    }
    if (!index.emplace(std::pair{tree_ids[i], node_ids[i]}, static_cast<int64_t>(i)).second) {
      return absl::InvalidArgumentError(absl::StrCat("tree ", tree_ids[i], " lists node ", node_ids[i], " twice"));
    }
  }
  return index;
}

absl::Status LinkBranches(const ir::Attributes& a, const std::vector<int64_t>& tree_ids, const NodeIndex& index,
                          Trees& t) {
  const std::vector<int64_t> true_ids = a.GetInts("nodes_truenodeids"), false_ids = a.GetInts("nodes_falsenodeids");
  const size_t n = t.modes.size();
  if (true_ids.size() != n || false_ids.size() != n) {
    return absl::InvalidArgumentError("nodes_truenodeids / nodes_falsenodeids need one entry per node");
  }
  t.true_next.assign(n, -1), t.false_next.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (t.modes[i] == Trees::kLeaf) continue;
    if (t.features[i] < 0) return absl::InvalidArgumentError("nodes_featureids holds a negative feature");
    for (auto [id, next] : {std::pair{true_ids[i], &t.true_next[i]}, std::pair{false_ids[i], &t.false_next[i]}}) {
      auto it = index.find({tree_ids[i], id});
      if (it == index.end() || it->second == static_cast<int64_t>(i)) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", i, " of tree ", tree_ids[i], " links to node ", id, ", which is not another node"));
      }
      *next = it->second;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<NodeIndex> ParseNodes(const ir::Attributes& a, Trees& t) {
  const std::vector<int64_t> tree_ids = a.GetInts("nodes_treeids"), node_ids = a.GetInts("nodes_nodeids");
  const std::vector<std::string> modes = a.GetStrings("nodes_modes");
  t.features = a.GetInts("nodes_featureids");
  t.thresholds = MlDoubles(a, "nodes_values");
  const size_t n = node_ids.size();
  if (n == 0) return absl::InvalidArgumentError("the ensemble has no nodes");
  if (tree_ids.size() != n || modes.size() != n || t.features.size() != n || t.thresholds.size() != n) {
    return absl::InvalidArgumentError("the nodes_* attributes differ in length");
  }
  for (const std::string& mode : modes) {
    absl::StatusOr<int64_t> code = ModeCode(mode);
    if (!code.ok()) return code.status();
    t.modes.push_back(*code);
  }
  const std::vector<int64_t> missing = a.GetInts("nodes_missing_value_tracks_true");
  t.missing_tracks_true.assign(n, false);
  for (size_t i = 0; i < missing.size() && i < n; ++i) t.missing_tracks_true[i] = missing[i] == 1;
  absl::StatusOr<NodeIndex> index = IndexNodes(tree_ids, node_ids, t);
  if (!index.ok()) return index.status();
  if (absl::Status s = LinkBranches(a, tree_ids, *index, t); !s.ok()) return s;
  return index;
}

// class_* or target_* entries onto their leaves (entries on branch nodes are ignored, as ORT does).
absl::Status AttachWeights(const ir::Attributes& a, const std::string& prefix, const NodeIndex& index, Trees& t) {
  const std::vector<int64_t> trees = a.GetInts(prefix + "_treeids"), nodes = a.GetInts(prefix + "_nodeids");
  const std::vector<int64_t> ids = a.GetInts(prefix + "_ids");
  const std::vector<double> weights = MlDoubles(a, prefix + "_weights");
  if (trees.size() != nodes.size() || ids.size() != nodes.size() || weights.size() != nodes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the ", prefix, "_* attributes differ in length"));
  }
  t.leaf_weights.assign(t.modes.size(), {});
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto it = index.find({trees[i], nodes[i]});
    if (it == index.end()) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, " entry ", i, " names node ", nodes[i], " of tree ",
                                                     trees[i], ", which does not exist"));
    }
    if (ids[i] < 0 || ids[i] >= t.targets) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, "_ids holds ", ids[i], ", outside the ", t.targets, " outputs"));
    }
    if (t.modes[it->second] == Trees::kLeaf) t.leaf_weights[it->second].emplace_back(ids[i], weights[i]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Trees> ParseTreeClassifier(const ir::Node& node) {
  const ir::Attributes& a = node.attrs;
  Trees t;
  absl::StatusOr<ClassLabels> labels = ParseClassLabels(a, "classlabels_int64s", true);
  if (!labels.ok()) return labels.status();
  t.labels = *std::move(labels);
  t.targets = static_cast<int64_t>(t.labels.size());
  if (t.targets < 1) return absl::InvalidArgumentError("TreeEnsembleClassifier needs class labels");
  absl::StatusOr<NodeIndex> index = ParseNodes(a, t);
  if (!index.ok()) return index.status();
  if (absl::Status s = AttachWeights(a, "class", *index, t); !s.ok()) return s;
  const std::vector<int64_t> class_ids = a.GetInts("class_ids");
  t.binary_case = t.targets == 2 && std::set<int64_t>(class_ids.begin(), class_ids.end()).size() == 1;
  for (double w : MlDoubles(a, "class_weights")) t.weights_positive = t.weights_positive && w >= 0;
  t.base_values = MlDoubles(a, "base_values");
  const size_t bases = t.base_values.size();
  if (bases != 0 && bases != t.labels.size() && !(t.targets == 2 && bases == 1)) {
    return absl::InvalidArgumentError("base_values needs one value per class");
  }
  absl::StatusOr<PostTransform> post = ParsePostTransform(a);
  if (!post.ok()) return post.status();
  t.post = *post;
  return t;
}

absl::StatusOr<Trees> ParseTreeRegressor(const ir::Node& node) {
  const ir::Attributes& a = node.attrs;
  Trees t;
  t.targets = a.GetInt("n_targets", 1);
  if (t.targets < 1) return absl::InvalidArgumentError("TreeEnsembleRegressor needs n_targets >= 1");
  absl::StatusOr<NodeIndex> index = ParseNodes(a, t);
  if (!index.ok()) return index.status();
  if (absl::Status s = AttachWeights(a, "target", *index, t); !s.ok()) return s;
  t.base_values = MlDoubles(a, "base_values");
  const int64_t bases = static_cast<int64_t>(t.base_values.size());
  if (bases != 0 && bases != t.targets) return absl::InvalidArgumentError("base_values needs one value per target");
  static const std::map<std::string, int64_t>* const kAggregates =
      new std::map<std::string, int64_t>{{"AVERAGE", 0}, {"SUM", 1}, {"MIN", 2}, {"MAX", 3}};
  auto it = kAggregates->find(a.GetString("aggregate_function", "SUM"));
  if (it == kAggregates->end()) return absl::InvalidArgumentError("unknown aggregate_function");
  t.aggregate = it->second;
  absl::StatusOr<PostTransform> post = ParsePostTransform(a);
  if (!post.ok()) return post.status();
  t.post = *post;
  return t;
}

}  // namespace ops
