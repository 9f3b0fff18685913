// The ai.onnx.ml model ops that scikit-learn exports (skl2onnx) carry: LinearClassifier,
// LinearRegressor, SVMClassifier, SVMRegressor, TreeEnsembleClassifier and TreeEnsembleRegressor
// (opsets 1-3): their attributes parsed and checked once, and their type/shape inference. They run
// on the host (kernels/cpu/ml_models.cc) and compute what ONNX Runtime computes, including its
// two-class conventions (kernels/cpu/ml_scores.h).
#ifndef ONNXRUN_OPS_ML_MODELS_H_
#define ONNXRUN_OPS_ML_MODELS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/op_def.h"

namespace ops {

// post_transform: what turns raw scores into the output.
enum class PostTransform { kNone, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

// A classifier's labels: classlabels_int64s / classlabels_ints, or classlabels_strings.
struct ClassLabels {
  bool strings = false;
  std::vector<int64_t> ints;
  std::vector<std::string> names;
  size_t size() const { return strings ? names.size() : ints.size(); }
  ir::DType dtype() const { return strings ? ir::DType::kString : ir::DType::kInt64; }
};

absl::StatusOr<PostTransform> ParsePostTransform(const ir::Attributes& a);
// `ints_name`: classlabels_int64s (trees) or classlabels_ints (linear, SVM).
absl::StatusOr<ClassLabels> ParseClassLabels(const ir::Attributes& a, const char* ints_name, bool required);
// A float list attribute, or its *_as_tensor form (opset 3), as doubles.
std::vector<double> MlDoubles(const ir::Attributes& a, const std::string& name);

// LinearClassifier (classes = intercepts) and LinearRegressor (classes = targets): rows of
// `coefficients` [classes, features] and one intercept per class (none: zeros).
struct LinearModel {
  int64_t classes = 0, features = 0;
  int64_t score_columns = 0;  // classifier's Z: classes, or for one class 2 with labels and 1 without
  std::vector<double> coefficients, intercepts;
  ClassLabels labels;
  PostTransform post = PostTransform::kNone;
};
absl::StatusOr<LinearModel> ParseLinearClassifier(const ir::Node& node);
absl::StatusOr<LinearModel> ParseLinearRegressor(const ir::Node& node);

// SVMClassifier / SVMRegressor. With support vectors, `coefficients` are the dual coefficients
// ([classes - 1, vectors] for the classifier); without, one linear row per class.
struct SvmModel {
  enum Kernel { kLinear, kPoly, kRbf, kSigmoid } kernel = kLinear;
  double gamma = 0, coef0 = 0, degree = 0;
  int64_t vectors = 0, features = 0;
  std::vector<int64_t> vectors_per_class;  // classifier only
  std::vector<double> support_vectors, coefficients, rho, prob_a, prob_b;
  ClassLabels labels;
  PostTransform post = PostTransform::kNone;
  bool one_class = false;  // regressor only
  // Z's width: probabilities [classes], pair scores [classes * (classes - 1) / 2] or 2 for two classes.
  int64_t ScoreColumns() const;
};
absl::StatusOr<SvmModel> ParseSvmClassifier(const ir::Node& node);
absl::StatusOr<SvmModel> ParseSvmRegressor(const ir::Node& node);

// TreeEnsembleClassifier / TreeEnsembleRegressor as flat nodes: each tree is a maximal run of equal
// nodes_treeids, rooted at its first node; links are indices into the flat arrays.
struct Trees {
  // Branch modes as TreeEnsemble-5 numbers them (0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ); kLeaf.
  static constexpr int64_t kLeaf = 7;
  std::vector<int64_t> modes, features, true_next, false_next;
  std::vector<double> thresholds;
  std::vector<bool> missing_tracks_true;
  std::vector<std::vector<std::pair<int64_t, double>>> leaf_weights;  // per node: (target or class, weight)
  std::vector<int64_t> roots;
  std::vector<double> base_values;
  int64_t targets = 0;    // n_targets, or the number of class labels
  int64_t aggregate = 1;  // 0 average, 1 sum, 2 min, 3 max (the classifier always sums)
  PostTransform post = PostTransform::kNone;
  ClassLabels labels;        // classifier only
  bool binary_case = false;  // classifier: 2 labels, weights for one class id only
  bool weights_positive = true;
};
absl::StatusOr<Trees> ParseTreeClassifier(const ir::Node& node);
absl::StatusOr<Trees> ParseTreeRegressor(const ir::Node& node);

std::vector<OpDef> MlModelOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_ML_MODELS_H_
