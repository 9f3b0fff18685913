// The ops of ONNX's classical-ML domain (ai.onnx.ml, opsets 1-5): Binarizer, ArrayFeatureExtractor,
// LabelEncoder (1: classes_strings; 2-4: keys_* / values_*), TreeEnsemble (5) and the feature
// transforms (Normalizer, Scaler, Imputer, OneHotEncoder, CategoryMapper, FeatureVectorizer):
// attribute parsing and type/shape inference; the model ops (linear, SVM, tree ensembles) are in
// ops/ml_models.h. ZipMap makes a sequence of maps (ir::Tensor::Map), one per row; DictVectorizer
// and CastMap read a map (ml_maps.cc). They run on the host (kernels/cpu/ml_ops.cc,
// ml_transforms.cc, ml_models.cc, ml_maps.cc).
#ifndef ONNXRUN_OPS_ML_OPS_H_
#define ONNXRUN_OPS_ML_OPS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/op_def.h"

namespace ops {

// LabelEncoder's map from keys to values, each side strings or numbers (as doubles).
struct LabelEncoderMap {
  ir::DType key_dtype = ir::DType::kUndefined, value_dtype = ir::DType::kUndefined;
  std::vector<std::string> string_keys, string_values;
  std::vector<double> number_keys, number_values;
  std::string string_default;
  double number_default = 0;
};
// The map for an input of `input_dtype` (LabelEncoder-1 maps both ways, by the input's dtype).
absl::StatusOr<LabelEncoderMap> ParseLabelEncoder(const ir::Node& node, ir::DType input_dtype);

// TreeEnsemble's nodes and leaves (the trees are walked from tree_roots).
struct TreeEnsembleAttrs {
  std::vector<double> splits;
  std::vector<int64_t> feature_ids, modes, true_ids, false_ids, true_leafs, false_leafs;
  std::vector<bool> missing_tracks_true;
  std::vector<std::vector<double>> members;  // per node, the set of a MEMBER (mode 6) node
  std::vector<int64_t> leaf_target_ids, tree_roots;
  std::vector<double> leaf_weights;
  int64_t n_targets = 0;
  int64_t aggregate = 1;  // 0 average, 1 sum, 2 min, 3 max
};
absl::StatusOr<TreeEnsembleAttrs> ParseTreeEnsemble(const ir::Node& node);

// CastMap's attributes (ONNX's defaults: cast_to TO_FLOAT, map_form DENSE, max_map 1).
struct CastMapAttrs {
  ir::DType to = ir::DType::kFloat32;  // TO_FLOAT, TO_STRING, TO_INT64
  bool sparse = false;                 // SPARSE: key k's value at column k of [1, max_map]
  int64_t max_map = 1;
};
absl::StatusOr<CastMapAttrs> ParseCastMap(const ir::Attributes& a);

std::vector<OpDef> MlOpDefs();
std::vector<OpDef> MlMapOpDefs();  // ml_maps.cc: DictVectorizer, CastMap

}  // namespace ops

#endif  // ONNXRUN_OPS_ML_OPS_H_
