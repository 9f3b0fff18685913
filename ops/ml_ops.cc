// ai.onnx.ml Binarizer, ArrayFeatureExtractor, LabelEncoder, TreeEnsemble and the feature transforms
// (Normalizer, Scaler, Imputer, OneHotEncoder, CategoryMapper, FeatureVectorizer) and ZipMap:
// attribute parsing and inference (see ml_ops.h).
#include "ops/ml_ops.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/ml_models.h"

namespace ops {
namespace {

using ir::DType;

// One side of LabelEncoder's map (keys or values) from its attribute forms.
struct MapSide {
  DType dtype = DType::kUndefined;
  std::vector<std::string> strings;
  std::vector<double> numbers;
};

absl::StatusOr<MapSide> ReadSide(const ir::Attributes& a, const std::string& side) {
  MapSide out;
  if (a.Has(side + "_strings")) {
    out.dtype = DType::kString;
    out.strings = a.GetStrings(side + "_strings");
  } else if (a.Has(side + "_int64s")) {
    out.dtype = DType::kInt64;
    for (int64_t v : a.GetInts(side + "_int64s")) out.numbers.push_back(static_cast<double>(v));
  } else if (a.Has(side + "_floats")) {
    out.dtype = DType::kFloat32;
    for (float v : a.GetFloats(side + "_floats")) out.numbers.push_back(v);
  } else if (const ir::Tensor* t = a.GetTensor(side + "_tensor")) {
    out.dtype = t->dtype();
    if (t->dtype() == DType::kString) {
      out.strings.assign(t->strings(), t->strings() + t->num_elements());
    } else {
      for (int64_t i = 0; i < t->num_elements(); ++i) out.numbers.push_back(t->GetAsDouble(i));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("LabelEncoder needs ", side, "_strings, ", side, "_int64s, ", side,
                                                   "_floats or ", side, "_tensor"));
  }
  return out;
}

size_t SideSize(const MapSide& s) { return s.dtype == DType::kString ? s.strings.size() : s.numbers.size(); }

// LabelEncoder-1: classes_strings maps strings to their index, or indices to strings.
absl::StatusOr<LabelEncoderMap> ParseClassesForm(const ir::Node& node, DType input_dtype) {
  LabelEncoderMap m;
  const std::vector<std::string> classes = node.attrs.GetStrings("classes_strings");
  std::vector<double> indices;
  for (size_t i = 0; i < classes.size(); ++i) indices.push_back(static_cast<double>(i));
  if (input_dtype == DType::kString) {
    m.key_dtype = DType::kString, m.value_dtype = DType::kInt64;
    m.string_keys = classes, m.number_values = indices;
  } else {
    m.key_dtype = DType::kInt64, m.value_dtype = DType::kString;
    m.number_keys = indices, m.string_values = classes;
  }
  m.string_default = node.attrs.GetString("default_string", "_Unused");
  m.number_default = static_cast<double>(node.attrs.GetInt("default_int64", -1));
  return m;
}

absl::Status ReadDefault(const ir::Attributes& a, LabelEncoderMap& m) {
  m.string_default = a.GetString("default_string", "_Unused");
  m.number_default = m.value_dtype == DType::kFloat32 ? a.GetFloat("default_float", -0.0f)
                                                      : static_cast<double>(a.GetInt("default_int64", -1));
  if (const ir::Tensor* t = a.GetTensor("default_tensor")) {
    if (t->num_elements() != 1 || t->dtype() != m.value_dtype) {
      return absl::InvalidArgumentError("LabelEncoder's default_tensor must hold one value of the values' type");
    }
    if (t->dtype() == DType::kString) {
      m.string_default = t->strings()[0];
    } else {
      m.number_default = t->GetAsDouble(0);
    }
  } else if (a.Has("values_tensor") && ir::IsFloatingPoint(m.value_dtype)) {
    m.number_default = -0.0;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ir::TensorType>> InferLabelEncoder(const InferContext& ctx) {
  absl::StatusOr<LabelEncoderMap> map = ParseLabelEncoder(ctx.node, ctx.type(0).dtype);
  if (!map.ok()) return map.status();
  const DType input = ctx.type(0).dtype;
  const bool keys_match = input == map->key_dtype || (input == DType::kInt32 && map->key_dtype == DType::kInt64) ||
                          (input == DType::kFloat64 && map->key_dtype == DType::kFloat32);
  if (!keys_match) {
    return absl::InvalidArgumentError(
        absl::StrCat("input of dtype ", ir::DTypeName(input), " for keys of dtype ", ir::DTypeName(map->key_dtype)));
  }
  return std::vector<ir::TensorType>{{map->value_dtype, ctx.type(0).shape}};
}

absl::StatusOr<std::vector<ir::TensorType>> InferBinarizer(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kInt64, DType::kInt32}); !s.ok()) {
    return s;
  }
  return SameAsInput0(ctx);
}

// [..., F] and indices -> [..., n] (a 1-D X gives [1, n], as ONNX Runtime does).
absl::StatusOr<std::vector<ir::TensorType>> InferArrayFeatureExtractor(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 1, {DType::kInt64}); !s.ok()) return s;
  const ir::TensorType& x = ctx.type(0);
  const ir::TensorType& indices = ctx.type(1);
  if (!x.shape || !indices.shape) return std::vector<ir::TensorType>{{x.dtype, std::nullopt}};
  if (x.rank() < 1) return absl::InvalidArgumentError("X must have rank >= 1");
  ir::Dim count(1);
  for (const ir::Dim& d : *indices.shape)
    count = d.known() && count.known() ? ir::Dim(count.value * d.value) : ir::Dim();
  ir::Shape out = x.rank() == 1 ? ir::Shape{ir::Dim(1)} : ir::Shape(x.shape->begin(), x.shape->end() - 1);
  out.push_back(count);
  return std::vector<ir::TensorType>{{x.dtype, out}};
}

absl::StatusOr<std::vector<ir::TensorType>> InferTreeEnsemble(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16}); !s.ok()) return s;
  absl::StatusOr<TreeEnsembleAttrs> attrs = ParseTreeEnsemble(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const ir::TensorType& x = ctx.type(0);
  if (x.shape && x.rank() != 2) return absl::InvalidArgumentError("X must be [N, features]");
  const ir::Dim rows = x.shape ? (*x.shape)[0] : ir::Dim();
  return std::vector<ir::TensorType>{{x.dtype, ir::Shape{rows, ir::Dim(attrs->n_targets)}}};
}

// Normalizer, Scaler: float [N, C] or [C] from any numeric input.
absl::StatusOr<std::vector<ir::TensorType>> InferFloatRows(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kInt64, DType::kInt32}); !s.ok()) {
    return s;
  }
  return std::vector<ir::TensorType>{{DType::kFloat32, ctx.type(0).shape}};
}

absl::StatusOr<std::vector<ir::TensorType>> InferNormalizer(const InferContext& ctx) {
  const ir::TensorType& x = ctx.type(0);
  if (x.shape && (x.rank() < 1 || x.rank() > 2))
    return absl::InvalidArgumentError("Normalizer's X must be [N, C] or [C]");
  return InferFloatRows(ctx);
}

absl::StatusOr<std::vector<ir::TensorType>> InferImputer(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32, DType::kInt64}); !s.ok()) return s;
  const bool floats = ctx.type(0).dtype == DType::kFloat32;
  if (floats ? ctx.attrs().GetFloats("imputed_value_floats").empty()
             : ctx.attrs().GetInts("imputed_value_int64s").empty()) {
    return absl::InvalidArgumentError(absl::StrCat("Imputer needs imputed_value_", floats ? "floats" : "int64s",
                                                   " for its ", floats ? "float" : "int64", " input"));
  }
  return SameAsInput0(ctx);
}

// X's shape + [categories], float.
absl::StatusOr<std::vector<ir::TensorType>> InferOneHotEncoder(const InferContext& ctx) {
  const DType input = ctx.type(0).dtype;
  const bool strings = ctx.attrs().Has("cats_strings");
  if (strings == ctx.attrs().Has("cats_int64s")) {
    return absl::InvalidArgumentError("OneHotEncoder needs cats_int64s or cats_strings (one of them)");
  }
  if (strings != (input == DType::kString)) {
    return absl::InvalidArgumentError(absl::StrCat("OneHotEncoder with ", strings ? "string" : "integer",
                                                   " categories cannot encode ", ir::DTypeName(input)));
  }
  if (!strings) {
    if (absl::Status s = ExpectDType(ctx, 0, {DType::kInt64, DType::kInt32, DType::kFloat32, DType::kFloat64});
        !s.ok()) {
      return s;
    }
  }
  const int64_t count = static_cast<int64_t>(strings ? ctx.attrs().GetStrings("cats_strings").size()
                                                     : ctx.attrs().GetInts("cats_int64s").size());
  std::optional<ir::Shape> shape = ctx.type(0).shape;
  if (shape) shape->push_back(ir::Dim(count));
  return std::vector<ir::TensorType>{{DType::kFloat32, shape}};
}

absl::StatusOr<std::vector<ir::TensorType>> InferCategoryMapper(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kString, DType::kInt64}); !s.ok()) return s;
  if (ctx.attrs().GetStrings("cats_strings").size() != ctx.attrs().GetInts("cats_int64s").size()) {
    return absl::InvalidArgumentError("CategoryMapper's cats_strings and cats_int64s differ in length");
  }
  const DType out = ctx.type(0).dtype == DType::kString ? DType::kInt64 : DType::kString;
  return std::vector<ir::TensorType>{{out, ctx.type(0).shape}};
}

// Inputs of one numeric type, each [N, ...] (or [C]: one row) -> float [N, sum(inputdimensions)].
absl::StatusOr<std::vector<ir::TensorType>> InferFeatureVectorizer(const InferContext& ctx) {
  const std::vector<int64_t> dims = ctx.attrs().GetInts("inputdimensions");
  if (dims.size() != ctx.num_inputs()) {
    return absl::InvalidArgumentError("FeatureVectorizer needs one inputdimensions entry per input");
  }
  int64_t width = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (absl::Status s = ExpectDType(ctx, i, {DType::kFloat32, DType::kFloat64, DType::kInt64, DType::kInt32});
        !s.ok()) {
      return s;
    }
    if (ctx.type(i).dtype != ctx.type(0).dtype)
      return absl::InvalidArgumentError("FeatureVectorizer's inputs differ in type");
    if (dims[i] < 0) return absl::InvalidArgumentError("inputdimensions holds a negative width");
    width += dims[i];
  }
  const ir::TensorType& x = ctx.type(0);
  const ir::Dim rows = !x.shape ? ir::Dim() : x.rank() <= 1 ? ir::Dim(1) : (*x.shape)[0];
  return std::vector<ir::TensorType>{{DType::kFloat32, ir::Shape{rows, ir::Dim(width)}}};
}

// Float [N, C] (or [C]: one row) -> seq(map(label, float)), a map per row keyed by the C labels
// of classlabels_int64s or classlabels_strings (exactly one is given).
absl::StatusOr<std::vector<ir::TensorType>> InferZipMap(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {DType::kFloat32}); !s.ok()) return s;
  const size_t ints = ctx.attrs().GetInts("classlabels_int64s").size();
  const size_t strings = ctx.attrs().GetStrings("classlabels_strings").size();
  if ((ints == 0) == (strings == 0)) {
    return absl::InvalidArgumentError("ZipMap needs exactly one of classlabels_int64s and classlabels_strings");
  }
  const ir::TensorType& x = ctx.type(0);
  if (x.shape && (x.rank() < 1 || x.rank() > 2)) {
    return absl::InvalidArgumentError(absl::StrCat("ZipMap takes [N, C] or [C], not ", x.ToString()));
  }
  if (x.shape && x.shape->back().known() && x.shape->back().value != static_cast<int64_t>(ints + strings)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ZipMap's input has ", x.shape->back().value, " columns for ", ints + strings, " labels"));
  }
  return std::vector<ir::TensorType>{
      ir::TensorType::SequenceOfMaps(ints ? DType::kInt64 : DType::kString, DType::kFloat32)};
}

// A tensor attribute's elements as doubles (empty when absent).
std::vector<double> TensorDoubles(const ir::Attributes& a, const char* name) {
  std::vector<double> out;
  if (const ir::Tensor* t = a.GetTensor(name)) {
    for (int64_t i = 0; i < t->num_elements(); ++i) out.push_back(t->GetAsDouble(i));
  }
  return out;
}

// Each MEMBER node's set, from membership_values: the sets in node order, each ended by a NaN.
absl::Status AssignMembers(const std::vector<double>& values, TreeEnsembleAttrs& t) {
  t.members.assign(t.modes.size(), {});
  size_t at = 0;
  for (size_t n = 0; n < t.modes.size(); ++n) {
    if (t.modes[n] != 6) continue;
    while (at < values.size() && !std::isnan(values[at])) t.members[n].push_back(values[at++]);
    if (at >= values.size()) return absl::InvalidArgumentError("membership_values ends before every member node's set");
    ++at;
  }
  return absl::OkStatus();
}

absl::Status CheckTreeIndices(const TreeEnsembleAttrs& t) {
  const int64_t nodes = static_cast<int64_t>(t.modes.size()), leaves = static_cast<int64_t>(t.leaf_weights.size());
  for (int64_t n = 0; n < nodes; ++n) {
    if (t.modes[n] < 0 || t.modes[n] > 6) return absl::InvalidArgumentError("nodes_modes holds a mode outside 0-6");
    for (auto [id, leaf] : {std::pair{t.true_ids[n], t.true_leafs[n]}, std::pair{t.false_ids[n], t.false_leafs[n]}}) {
      if (id < 0 || id >= (leaf != 0 ? leaves : nodes)) {
        return absl::InvalidArgumentError(absl::StrCat("node ", n, " points to ", leaf ? "leaf " : "node ", id,
                                                       ", outside the ", leaf ? leaves : nodes, " there are"));
      }
    }
    if (t.feature_ids[n] < 0) return absl::InvalidArgumentError("nodes_featureids holds a negative feature");
  }
  for (int64_t root : t.tree_roots) {
    if (root < 0 || root >= nodes) return absl::InvalidArgumentError("tree_roots holds a node that does not exist");
  }
  for (int64_t target : t.leaf_target_ids) {
    if (target < 0 || target >= t.n_targets) return absl::InvalidArgumentError("leaf_targetids outside n_targets");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LabelEncoderMap> ParseLabelEncoder(const ir::Node& node, DType input_dtype) {
  if (node.attrs.Has("classes_strings")) return ParseClassesForm(node, input_dtype);
  absl::StatusOr<MapSide> keys = ReadSide(node.attrs, "keys");
  if (!keys.ok()) return keys.status();
  absl::StatusOr<MapSide> values = ReadSide(node.attrs, "values");
  if (!values.ok()) return values.status();
  if (SideSize(*keys) != SideSize(*values)) {
    return absl::InvalidArgumentError(
        absl::StrCat("LabelEncoder has ", SideSize(*keys), " keys and ", SideSize(*values), " values"));
  }
  LabelEncoderMap m;
  m.key_dtype = keys->dtype, m.value_dtype = values->dtype;
  m.string_keys = std::move(keys->strings), m.number_keys = std::move(keys->numbers);
  m.string_values = std::move(values->strings), m.number_values = std::move(values->numbers);
  if (absl::Status s = ReadDefault(node.attrs, m); !s.ok()) return s;
  return m;
}

absl::StatusOr<TreeEnsembleAttrs> ParseTreeEnsemble(const ir::Node& node) {
  const ir::Attributes& a = node.attrs;
  if (a.GetInt("post_transform", 0) != 0) {
    return absl::UnimplementedError("TreeEnsemble with a post_transform other than NONE is not supported");
  }
  TreeEnsembleAttrs t;
  t.splits = TensorDoubles(a, "nodes_splits");
  t.leaf_weights = TensorDoubles(a, "leaf_weights");
  for (double m : TensorDoubles(a, "nodes_modes")) t.modes.push_back(static_cast<int64_t>(m));
  t.feature_ids = a.GetInts("nodes_featureids");
  t.true_ids = a.GetInts("nodes_truenodeids"), t.false_ids = a.GetInts("nodes_falsenodeids");
  t.true_leafs = a.GetInts("nodes_trueleafs"), t.false_leafs = a.GetInts("nodes_falseleafs");
  t.leaf_target_ids = a.GetInts("leaf_targetids");
  t.tree_roots = a.GetInts("tree_roots");
  t.n_targets = a.GetInt("n_targets", 0);
  t.aggregate = a.GetInt("aggregate_function", 1);
  const size_t nodes = t.modes.size();
  for (const auto* v : {&t.feature_ids, &t.true_ids, &t.false_ids, &t.true_leafs, &t.false_leafs}) {
    if (v->size() != nodes) return absl::InvalidArgumentError("TreeEnsemble's nodes_* attributes differ in length");
  }
  if (t.splits.size() != nodes) return absl::InvalidArgumentError("nodes_splits needs one value per node");
  if (t.leaf_target_ids.size() != t.leaf_weights.size()) {
    return absl::InvalidArgumentError("leaf_targetids and leaf_weights differ in length");
  }
  if (t.n_targets < 1 || t.aggregate < 0 || t.aggregate > 3) {
    return absl::InvalidArgumentError("TreeEnsemble needs n_targets >= 1 and aggregate_function 0-3");
  }
  const std::vector<int64_t> missing = a.GetInts("nodes_missing_value_tracks_true");
  t.missing_tracks_true.assign(nodes, false);
  for (size_t n = 0; n < missing.size() && n < nodes; ++n) t.missing_tracks_true[n] = missing[n] != 0;
  if (absl::Status s = AssignMembers(TensorDoubles(a, "membership_values"), t); !s.ok()) return s;
  if (absl::Status s = CheckTreeIndices(t); !s.ok()) return s;
  return t;
}

std::vector<OpDef> MlOpDefs() {
  std::vector<OpDef> defs = {
      {"ai.onnx.ml.Binarizer", 1, 1, InferBinarizer},
      {"ai.onnx.ml.ArrayFeatureExtractor", 2, 2, InferArrayFeatureExtractor, false, true},
      {"ai.onnx.ml.LabelEncoder", 1, 1, InferLabelEncoder, false, true},
      {"ai.onnx.ml.TreeEnsemble", 1, 1, InferTreeEnsemble},
      {"ai.onnx.ml.Normalizer", 1, 1, InferNormalizer},
      {"ai.onnx.ml.Scaler", 1, 1, InferFloatRows},
      {"ai.onnx.ml.Imputer", 1, 1, InferImputer},
      {"ai.onnx.ml.OneHotEncoder", 1, 1, InferOneHotEncoder, false, true},
      {"ai.onnx.ml.CategoryMapper", 1, 1, InferCategoryMapper, false, true},
      {"ai.onnx.ml.FeatureVectorizer", 1, std::numeric_limits<int>::max(), InferFeatureVectorizer},
      {"ai.onnx.ml.ZipMap", 1, 1, InferZipMap},
  };
  std::vector<OpDef> models = MlModelOpDefs();
  defs.insert(defs.end(), models.begin(), models.end());
  std::vector<OpDef> maps = MlMapOpDefs();
  defs.insert(defs.end(), maps.begin(), maps.end());
  return defs;
}

}  // namespace ops
