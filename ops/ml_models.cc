// ai.onnx.ml LinearClassifier/Regressor, SVMClassifier/Regressor, TreeEnsembleClassifier/Regressor:
// attribute parsing and inference (see ml_models.h).
#include "ops/ml_models.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using ir::DType;

absl::Status CheckFeatures(const InferContext& ctx, int64_t features) {
  const ir::TensorType& x = ctx.type(0);
  if (!x.shape) return absl::OkStatus();
  if (x.rank() < 1 || x.rank() > 2) return absl::InvalidArgumentError("X must be [N, features] or [features]");
  const ir::Dim& f = x.shape->back();
  if (features > 0 && f.known() && f.value != features) {
    return absl::InvalidArgumentError(absl::StrCat("X has ", f.value, " features; the model has ", features));
  }
  return absl::OkStatus();
}

ir::Dim Rows(const ir::TensorType& x) {
  if (!x.shape) return ir::Dim();
  return x.rank() == 1 ? ir::Dim(1) : (*x.shape)[0];
}

std::vector<ir::TensorType> LabelAndScores(const InferContext& ctx, const ClassLabels& labels, int64_t columns) {
  const ir::Dim rows = Rows(ctx.type(0));
  return {{labels.dtype(), ir::Shape{rows}}, {DType::kFloat32, ir::Shape{rows, ir::Dim(columns)}}};
}

absl::Status ExpectModelInput(const InferContext& ctx, bool float_only) {
  if (float_only) return ExpectDType(ctx, 0, {DType::kFloat32});
  return ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kInt64, DType::kInt32});
}

absl::StatusOr<std::vector<ir::TensorType>> InferLinearClassifier(const InferContext& ctx) {
  if (absl::Status s = ExpectModelInput(ctx, false); !s.ok()) return s;
  absl::StatusOr<LinearModel> m = ParseLinearClassifier(ctx.node);
  if (!m.ok()) return m.status();
  if (absl::Status s = CheckFeatures(ctx, m->features); !s.ok()) return s;
  return LabelAndScores(ctx, m->labels, m->score_columns);
}

absl::StatusOr<std::vector<ir::TensorType>> InferLinearRegressor(const InferContext& ctx) {
  if (absl::Status s = ExpectModelInput(ctx, true); !s.ok()) return s;
  absl::StatusOr<LinearModel> m = ParseLinearRegressor(ctx.node);
  if (!m.ok()) return m.status();
  if (absl::Status s = CheckFeatures(ctx, m->features); !s.ok()) return s;
  return std::vector<ir::TensorType>{{DType::kFloat32, ir::Shape{Rows(ctx.type(0)), ir::Dim(m->classes)}}};
}

absl::StatusOr<std::vector<ir::TensorType>> InferSvmClassifier(const InferContext& ctx) {
  if (absl::Status s = ExpectModelInput(ctx, false); !s.ok()) return s;
  absl::StatusOr<SvmModel> m = ParseSvmClassifier(ctx.node);
  if (!m.ok()) return m.status();
  if (absl::Status s = CheckFeatures(ctx, m->features); !s.ok()) return s;
  return LabelAndScores(ctx, m->labels, m->ScoreColumns());
}

absl::StatusOr<std::vector<ir::TensorType>> InferSvmRegressor(const InferContext& ctx) {
  if (absl::Status s = ExpectModelInput(ctx, true); !s.ok()) return s;
  absl::StatusOr<SvmModel> m = ParseSvmRegressor(ctx.node);
  if (!m.ok()) return m.status();
  if (absl::Status s = CheckFeatures(ctx, m->features); !s.ok()) return s;
  return std::vector<ir::TensorType>{{DType::kFloat32, ir::Shape{Rows(ctx.type(0)), ir::Dim(1)}}};
}

absl::StatusOr<std::vector<ir::TensorType>> InferTreeClassifier(const InferContext& ctx) {
  if (absl::Status s = ExpectModelInput(ctx, false); !s.ok()) return s;
  absl::StatusOr<Trees> t = ParseTreeClassifier(ctx.node);
  if (!t.ok()) return t.status();
  if (absl::Status s = CheckFeatures(ctx, 0); !s.ok()) return s;
  return LabelAndScores(ctx, t->labels, t->targets);
}

absl::StatusOr<std::vector<ir::TensorType>> InferTreeRegressor(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat64}); !s.ok()) return s;
  absl::StatusOr<Trees> t = ParseTreeRegressor(ctx.node);
  if (!t.ok()) return t.status();
  if (absl::Status s = CheckFeatures(ctx, 0); !s.ok()) return s;
  return std::vector<ir::TensorType>{{DType::kFloat32, ir::Shape{Rows(ctx.type(0)), ir::Dim(t->targets)}}};
}

absl::Status ReadKernel(const ir::Attributes& a, SvmModel& m) {
  static const std::map<std::string, SvmModel::Kernel>* const kKernels =
      new std::map<std::string, SvmModel::Kernel>{{"LINEAR", SvmModel::kLinear},
                                                  {"POLY", SvmModel::kPoly},
                                                  {"RBF", SvmModel::kRbf},
                                                  {"SIGMOID", SvmModel::kSigmoid}};
  const std::string name = a.GetString("kernel_type", "LINEAR");
  auto it = kKernels->find(name);
  if (it == kKernels->end()) return absl::InvalidArgumentError(absl::StrCat("unknown kernel_type '", name, "'"));
  m.kernel = it->second;
  const std::vector<float> params = a.GetFloats("kernel_params");
  if (!params.empty()) m.gamma = params[0];
  if (params.size() > 1) m.coef0 = params[1];
  if (params.size() > 2) m.degree = params[2];
  return absl::OkStatus();
}

absl::StatusOr<SvmModel> ParseSvmCommon(const ir::Node& node) {
  const ir::Attributes& a = node.attrs;
  SvmModel m;
  if (absl::Status s = ReadKernel(a, m); !s.ok()) return s;
  absl::StatusOr<PostTransform> post = ParsePostTransform(a);
  if (!post.ok()) return post.status();
  m.post = *post;
  for (auto [name, to] : {std::pair{"support_vectors", &m.support_vectors}, std::pair{"coefficients", &m.coefficients},
                          std::pair{"rho", &m.rho}, std::pair{"prob_a", &m.prob_a}, std::pair{"prob_b", &m.prob_b}}) {
    *to = MlDoubles(a, name);
  }
  if (m.rho.empty()) return absl::InvalidArgumentError("the SVM needs rho");
  if (m.prob_a.size() != m.prob_b.size()) return absl::InvalidArgumentError("prob_a and prob_b differ in length");
  return m;
}

}  // namespace

absl::StatusOr<PostTransform> ParsePostTransform(const ir::Attributes& a) {
  static const std::map<std::string, PostTransform>* const kNames =
      new std::map<std::string, PostTransform>{{"NONE", PostTransform::kNone},
                                               {"SOFTMAX", PostTransform::kSoftmax},
                                               {"LOGISTIC", PostTransform::kLogistic},
                                               {"SOFTMAX_ZERO", PostTransform::kSoftmaxZero},
                                               {"PROBIT", PostTransform::kProbit}};
  const std::string name = a.GetString("post_transform", "NONE");
  auto it = kNames->find(name);
  if (it == kNames->end()) return absl::InvalidArgumentError(absl::StrCat("unknown post_transform '", name, "'"));
  return it->second;
}

absl::StatusOr<ClassLabels> ParseClassLabels(const ir::Attributes& a, const char* ints_name, bool required) {
  ClassLabels labels;
  const bool has_ints = a.Has(ints_name), has_strings = a.Has("classlabels_strings");
  if (has_ints && has_strings) {
    return absl::InvalidArgumentError(absl::StrCat("give ", ints_name, " or classlabels_strings, not both"));
  }
  if (required && !has_ints && !has_strings) {
    return absl::InvalidArgumentError(absl::StrCat("needs ", ints_name, " or classlabels_strings"));
  }
  labels.strings = has_strings;
  labels.ints = a.GetInts(ints_name);
  labels.names = a.GetStrings("classlabels_strings");
  return labels;
}

std::vector<double> MlDoubles(const ir::Attributes& a, const std::string& name) {
  std::vector<double> out;
  if (const ir::Tensor* t = a.GetTensor(name + "_as_tensor")) {
    for (int64_t i = 0; i < t->num_elements(); ++i) out.push_back(t->GetAsDouble(i));
    return out;
  }
  for (float v : a.GetFloats(name)) out.push_back(v);
  return out;
}

int64_t SvmModel::ScoreColumns() const {
  const int64_t classes = static_cast<int64_t>(labels.size());
  if (vectors == 0 || !prob_a.empty()) return classes;   // a score or a probability per class
  return classes > 2 ? classes * (classes - 1) / 2 : 2;  // a score per pair of classes; [-s, s] for two
}

absl::StatusOr<LinearModel> ParseLinearClassifier(const ir::Node& node) {
  LinearModel m;
  m.coefficients = MlDoubles(node.attrs, "coefficients");
  m.intercepts = MlDoubles(node.attrs, "intercepts");
  m.classes = static_cast<int64_t>(m.intercepts.size());
  if (m.classes < 1) return absl::InvalidArgumentError("LinearClassifier needs intercepts (one per class)");
  if (m.coefficients.empty() || m.coefficients.size() % m.classes != 0) {
    return absl::InvalidArgumentError("LinearClassifier's coefficients are not [classes, features]");
  }
  m.features = static_cast<int64_t>(m.coefficients.size()) / m.classes;
  absl::StatusOr<ClassLabels> labels = ParseClassLabels(node.attrs, "classlabels_ints", false);
  if (!labels.ok()) return labels.status();
  m.labels = *std::move(labels);
  const int64_t count = static_cast<int64_t>(m.labels.size());
  if (m.classes > 1 ? count < m.classes : count != 0 && count != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("LinearClassifier has ", m.classes, " classes and ", count, " labels"));
  }
  m.score_columns = m.classes > 1 ? m.classes : count == 2 ? 2 : 1;
  if (count == 0) m.labels.ints = {0, 1};  // one class, no labels: the label is 1 or 0
  absl::StatusOr<PostTransform> post = ParsePostTransform(node.attrs);
  if (!post.ok()) return post.status();
  m.post = *post;
  return m;
}

absl::StatusOr<LinearModel> ParseLinearRegressor(const ir::Node& node) {
  LinearModel m;
  m.classes = node.attrs.GetInt("targets", 1);
  m.coefficients = MlDoubles(node.attrs, "coefficients");
  if (m.classes < 1 || m.coefficients.empty() || m.coefficients.size() % m.classes != 0) {
    return absl::InvalidArgumentError("LinearRegressor's coefficients are not [targets, features]");
  }
  m.features = static_cast<int64_t>(m.coefficients.size()) / m.classes;
  m.intercepts = MlDoubles(node.attrs, "intercepts");
  // ONNX Runtime uses the intercepts only when there is one per target.
  if (static_cast<int64_t>(m.intercepts.size()) != m.classes) m.intercepts.assign(m.classes, 0.0);
  absl::StatusOr<PostTransform> post = ParsePostTransform(node.attrs);
  if (!post.ok()) return post.status();
  m.post = *post;
  return m;
}

absl::StatusOr<SvmModel> ParseSvmClassifier(const ir::Node& node) {
  absl::StatusOr<SvmModel> m = ParseSvmCommon(node);
  if (!m.ok()) return m.status();
  absl::StatusOr<ClassLabels> labels = ParseClassLabels(node.attrs, "classlabels_ints", true);
  if (!labels.ok()) return labels.status();
  m->labels = *std::move(labels);
  const int64_t classes = static_cast<int64_t>(m->labels.size());
  if (classes < 1) return absl::InvalidArgumentError("SVMClassifier needs class labels");
  m->vectors_per_class = node.attrs.GetInts("vectors_per_class");
  for (int64_t v : m->vectors_per_class) {
    if (v < 0) return absl::InvalidArgumentError("vectors_per_class holds a negative count");
    m->vectors += v;
  }
  if (m->vectors == 0) {  // linear: one row of coefficients per class, rho[0] added to each
    m->kernel = SvmModel::kLinear;
    if (m->coefficients.size() % classes != 0 || m->coefficients.empty()) {
      return absl::InvalidArgumentError("SVMClassifier's coefficients are not [classes, features]");
    }
    m->features = static_cast<int64_t>(m->coefficients.size()) / classes;
    return m;
  }
  if (static_cast<int64_t>(m->vectors_per_class.size()) != classes || m->support_vectors.size() % m->vectors != 0 ||
      m->support_vectors.empty()) {
    return absl::InvalidArgumentError("SVMClassifier's vectors_per_class, labels and support_vectors disagree");
  }
  m->features = static_cast<int64_t>(m->support_vectors.size()) / m->vectors;
  const size_t pairs = static_cast<size_t>(classes * (classes - 1) / 2);
  if (m->coefficients.size() != static_cast<size_t>((classes - 1) * m->vectors) || m->rho.size() < pairs ||
      (!m->prob_a.empty() && m->prob_a.size() < pairs)) {
    return absl::InvalidArgumentError("SVMClassifier's coefficients, rho or prob_a do not match its classes");
  }
  return m;
}

absl::StatusOr<SvmModel> ParseSvmRegressor(const ir::Node& node) {
  absl::StatusOr<SvmModel> m = ParseSvmCommon(node);
  if (!m.ok()) return m.status();
  m->vectors = node.attrs.GetInt("n_supports", 0);
  m->one_class = node.attrs.GetInt("one_class", 0) != 0;
  if (m->vectors < 0) return absl::InvalidArgumentError("n_supports is negative");
  if (m->vectors == 0) {
    m->kernel = SvmModel::kLinear;
    m->features = static_cast<int64_t>(m->coefficients.size());
  } else {
    if (m->support_vectors.size() % m->vectors != 0 || m->coefficients.size() != static_cast<size_t>(m->vectors)) {
      return absl::InvalidArgumentError("SVMRegressor's support_vectors and coefficients do not match n_supports");
    }
    m->features = static_cast<int64_t>(m->support_vectors.size()) / m->vectors;
  }
  if (m->features < 1) return absl::InvalidArgumentError("SVMRegressor has no coefficients");
  return m;
}

std::vector<OpDef> MlModelOpDefs() {
  return {
      {"ai.onnx.ml.LinearClassifier", 1, 1, InferLinearClassifier, false, true},
      {"ai.onnx.ml.LinearRegressor", 1, 1, InferLinearRegressor},
      {"ai.onnx.ml.SVMClassifier", 1, 1, InferSvmClassifier, false, true},
      {"ai.onnx.ml.SVMRegressor", 1, 1, InferSvmRegressor},
      {"ai.onnx.ml.TreeEnsembleClassifier", 1, 1, InferTreeClassifier, false, true},
      {"ai.onnx.ml.TreeEnsembleRegressor", 1, 1, InferTreeRegressor},
  };
}

}  // namespace ops
