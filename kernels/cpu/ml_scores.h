// What the ai.onnx.ml model kernels share: their input read as rows of doubles, post_transform as
// ONNX Runtime applies it (its logistic, probit approximation, softmax and SOFTMAX_ZERO, and how it
// turns one two-class score into two columns), label outputs (int64 or string) and the tree
// ensembles' branch comparison.
#ifndef ONNXRUN_KERNELS_CPU_ML_SCORES_H_
#define ONNXRUN_KERNELS_CPU_ML_SCORES_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "ir/tensor.h"
#include "ops/ml_models.h"

namespace kernels::cpu::ml {

// X ([N, F] or [F]: one row) of any numeric dtype, as doubles.
struct Rows {
  int64_t count = 0, features = 0;
  std::vector<double> values;
  const double* row(int64_t r) const { return values.data() + r * features; }
};
Rows ReadRows(const ir::Tensor& x);

double Logistic(double x);
// sqrt(2) * erfinv(2x - 1) with ONNX Runtime's approximation of erfinv (Winitzki's, in float).
double Probit(double x);
// post_transform on a row of two or more scores, in place.
void TransformRow(ops::PostTransform post, double* row, int64_t n);

// How one score of a two-class model becomes two columns (ONNX Runtime's write_scores):
enum class SecondClass {
  kNone,        // [s, 0]: only the first column means something
  kComplement,  // [1 - s, s] (LOGISTIC: [1 - L(s), L(s)])
  kNegation,    // [-s, s]    (LOGISTIC: [L(-s), L(s)])
};
// PROBIT writes [P(s), 0] in every form.
void ExpandScore(ops::PostTransform post, double s, SecondClass form, double* out2);

// A label per row: an index into `labels`, or with `literal` the index itself as the int64 label
// (ONNX Runtime's two-class tree ensembles whose weights name both classes answer 1 or 0).
struct LabelPick {
  int64_t index = 0;
  bool literal = false;
};
absl::Status WriteLabels(const ops::ClassLabels& labels, const std::vector<LabelPick>& picks, ir::Tensor& y);
// A classifier's two outputs: the labels (WriteLabels) and the scores, row after row.
absl::Status WriteClassifierOutputs(const ops::ClassLabels& labels, const std::vector<LabelPick>& picks,
                                    const std::vector<double>& scores, ir::Tensor& y, ir::Tensor& z);

// A tree node's comparison of `v` with its split for branch modes 0-5 (LEQ, LT, GTE, GT, EQ, NEQ, as
// TreeEnsemble-5 numbers them; the legacy ensembles' mode strings map to the same numbers).
bool BranchTakesTrue(int64_t mode, double v, double split);

// The first index of the largest value.
int64_t ArgMax(const double* values, int64_t n);

}  // namespace kernels::cpu::ml

#endif  // ONNXRUN_KERNELS_CPU_ML_SCORES_H_
