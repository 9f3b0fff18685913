// The CPU kernels of the ai.onnx.ml feature transforms: Normalizer, Scaler, Imputer, OneHotEncoder,
// CategoryMapper, FeatureVectorizer and ZipMap (inference in ops/ml_ops.cc), as ONNX Runtime computes them.
// They run on the host on every backend.
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/float_values.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/ml_scores.h"

namespace kernels::cpu {
namespace {

// Each row divided by its signed maximum (MAX), its sum of magnitudes (L1) or its length (L2);
// a row whose divisor is 0 is left as it is.
absl::Status Normalizer(KernelContext& ctx) {
  const std::string norm = ctx.attrs().GetString("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2") {
    return absl::InvalidArgumentError(absl::StrCat("unknown Normalizer norm '", norm, "'"));
  }
  ml::Rows x = ml::ReadRows(*ctx.input(0));
  for (int64_t r = 0; r < x.count; ++r) {
    double* row = x.values.data() + r * x.features;
    double divisor = norm == "MAX" ? std::numeric_limits<double>::lowest() : 0.0;
    for (int64_t f = 0; f < x.features; ++f) {
      if (norm == "MAX") {
        if (!std::isnan(row[f])) divisor = std::max(divisor, row[f]);
      } else {
        divisor += norm == "L1" ? std::abs(row[f]) : row[f] * row[f];
      }
    }
    if (norm == "L2") divisor = std::sqrt(divisor);
    if (divisor == 0 || x.features == 0) continue;
    for (int64_t f = 0; f < x.features; ++f) row[f] /= divisor;
  }
  return WriteDoubles(x.values, *ctx.output(0));
}

// How many features X has as ONNX Runtime's Scaler and Imputer count them: dims[1] (dims[0] for
// 1-D X); a per-feature value belongs to flat element i at i % that.
int64_t FeatureCount(const ir::Tensor& x) { return x.rank() == 0 ? 1 : x.rank() == 1 ? x.shape()[0] : x.shape()[1]; }

// A per-feature attribute's stride: 0 for one value for all, else FeatureCount (an error for any
// other number of values).
absl::StatusOr<int64_t> FeatureStride(const ir::Tensor& x, size_t count, const char* what) {
  const int64_t stride = FeatureCount(x);
  if (count != 1 && static_cast<int64_t>(count) != stride) {
    return absl::InvalidArgumentError(absl::StrCat(what, " has ", count, " values; X has ", stride, " features"));
  }
  return count == 1 ? 0 : stride;
}

absl::Status Scaler(KernelContext& ctx) {
  std::vector<float> offset = ctx.attrs().GetFloats("offset", {0.0f}), scale = ctx.attrs().GetFloats("scale", {1.0f});
  const ir::Tensor& x = *ctx.input(0);
  absl::StatusOr<int64_t> offset_stride = FeatureStride(x, offset.size(), "offset");
  if (!offset_stride.ok()) return offset_stride.status();
  absl::StatusOr<int64_t> scale_stride = FeatureStride(x, scale.size(), "scale");
  if (!scale_stride.ok()) return scale_stride.status();
  std::vector<double> y(static_cast<size_t>(x.num_elements()));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t o = *offset_stride ? i % *offset_stride : 0, s = *scale_stride ? i % *scale_stride : 0;
    y[i] = (x.GetAsDouble(i) - offset[o]) * scale[s];
  }
  return WriteDoubles(y, *ctx.output(0));
}

// Elements equal to the replaced value (NaN matches NaN) become the imputed value of their feature
// (or the first imputed value when there is not one per feature).
absl::Status Imputer(KernelContext& ctx) {
  const ir::Tensor& x = *ctx.input(0);
  ir::Tensor& y = *ctx.output(0);
  const int64_t stride = FeatureCount(x);
  auto impute = [&](auto* out, const auto* in, const auto& imputed, auto replaced, bool nan_matches) {
    const bool per_feature = static_cast<int64_t>(imputed.size()) == stride;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const bool missing = in[i] == replaced || (nan_matches && std::isnan(static_cast<double>(in[i])));
      out[i] = missing ? imputed[per_feature ? i % stride : 0] : in[i];
    }
  };
  if (x.dtype() == ir::DType::kFloat32) {
    const float replaced = ctx.attrs().GetFloat("replaced_value_float", 0.0f);
    impute(y.data<float>(), x.data<float>(), ctx.attrs().GetFloats("imputed_value_floats"), replaced,
           std::isnan(replaced));
  } else {
    impute(y.data<int64_t>(), x.data<int64_t>(), ctx.attrs().GetInts("imputed_value_int64s"),
           ctx.attrs().GetInt("replaced_value_int64", 0), false);
  }
  return absl::OkStatus();
}

// Each element -> a row of n_cats floats, 1 at its category (numbers truncated to int64); an
// unknown value gives zeros, or an error when zeros = 0.
absl::Status OneHotEncoder(KernelContext& ctx) {
  const ir::Tensor& x = *ctx.input(0);
  const bool strings = x.dtype() == ir::DType::kString;
  std::unordered_map<std::string, int64_t> by_string;
  std::unordered_map<int64_t, int64_t> by_int;
  const std::vector<std::string> names = ctx.attrs().GetStrings("cats_strings");
  const std::vector<int64_t> ints = ctx.attrs().GetInts("cats_int64s");
  for (size_t i = 0; i < names.size(); ++i) by_string[names[i]] = static_cast<int64_t>(i);
  for (size_t i = 0; i < ints.size(); ++i) by_int[ints[i]] = static_cast<int64_t>(i);
  const int64_t count = static_cast<int64_t>(strings ? names.size() : ints.size());
  const bool zeros = ctx.attrs().GetInt("zeros", 1) != 0;
  float* out = ctx.output(0)->data<float>();
  std::fill(out, out + x.num_elements() * count, 0.0f);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t at = -1;
    if (strings) {
      auto it = by_string.find(x.strings()[i]);
      if (it != by_string.end()) at = it->second;
    } else {
      const double v = x.GetAsDouble(i);
      auto it = std::abs(v) < 9.2e18 ? by_int.find(static_cast<int64_t>(v)) : by_int.end();  // NaN too
      if (it != by_int.end()) at = it->second;
    }
    if (at >= 0) {
      out[i * count + at] = 1.0f;
    } else if (!zeros) {
      return absl::InvalidArgumentError(absl::StrCat("OneHotEncoder: element ", i, " is not a category (zeros=0)"));
    }
  }
  return absl::OkStatus();
}

// Strings to int64 by cats_strings -> cats_int64s, or back; unknowns get default_int64 (-1) or
// default_string ("_Unused"). A repeated key maps to its last pair.
absl::Status CategoryMapper(KernelContext& ctx) {
  const std::vector<std::string> names = ctx.attrs().GetStrings("cats_strings");
  const std::vector<int64_t> ints = ctx.attrs().GetInts("cats_int64s");
  const ir::Tensor& x = *ctx.input(0);
  ir::Tensor& y = *ctx.output(0);
  if (x.dtype() == ir::DType::kString) {
    std::unordered_map<std::string, int64_t> map;
    for (size_t i = 0; i < names.size(); ++i) map[names[i]] = ints[i];
    const int64_t fallback = ctx.attrs().GetInt("default_int64", -1);
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      auto it = map.find(x.strings()[i]);
      y.data<int64_t>()[i] = it == map.end() ? fallback : it->second;
    }
    return absl::OkStatus();
  }
  std::unordered_map<int64_t, std::string> map;
  for (size_t i = 0; i < ints.size(); ++i) map[ints[i]] = names[i];
  const std::string fallback = ctx.attrs().GetString("default_string", "_Unused");
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    auto it = map.find(x.data<int64_t>()[i]);
    y.mutable_strings()[i] = it == map.end() ? fallback : it->second;
  }
  return absl::OkStatus();
}

// Each input's row (flattened past its first axis) into its inputdimensions slot: cut when
// longer, zero-padded when shorter.
absl::Status FeatureVectorizer(KernelContext& ctx) {
  const std::vector<int64_t> dims = ctx.attrs().GetInts("inputdimensions");
  ir::Tensor& y = *ctx.output(0);
  const int64_t rows = y.shape()[0], width = y.shape()[1];
  float* out = y.data<float>();
  std::fill(out, out + rows * width, 0.0f);
  int64_t slot = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    const ir::Tensor& x = *ctx.input(i);
    const int64_t x_rows = x.rank() <= 1 ? 1 : x.shape()[0];
    if (x_rows != rows)
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " has ", x_rows, " rows, not ", rows));
    const int64_t row_size = rows == 0 ? 0 : x.num_elements() / rows, copied = std::min(row_size, dims[i]);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t f = 0; f < copied; ++f)
        out[r * width + slot + f] = static_cast<float>(x.GetAsDouble(r * row_size + f));
    }
    slot += dims[i];
  }
  return absl::OkStatus();
}

// ZipMap's keys as ONNX Runtime's std::map holds them: sorted, a repeated label keeping its last
// column; with, per key, the input column it reads.
template <typename Label>
std::pair<std::vector<Label>, std::vector<int64_t>> SortedLabels(const std::vector<Label>& labels) {
  std::map<Label, int64_t> column_of;
  for (size_t c = 0; c < labels.size(); ++c) column_of[labels[c]] = static_cast<int64_t>(c);
  std::pair<std::vector<Label>, std::vector<int64_t>> out;
  for (const auto& [label, column] : column_of) {
    out.first.push_back(label);
    out.second.push_back(column);
  }
  return out;
}

// Row r of [N, C] (or the one row of [C]) -> map {label[c]: x[r, c]}, keys as SortedLabels gives
// them; the key tensor is shared by every map (int64 or string, whichever attribute is given).
absl::Status ZipMap(KernelContext& ctx) {
  const ir::Tensor& x = *ctx.input(0);
  const std::vector<int64_t> ints = ctx.attrs().GetInts("classlabels_int64s");
  const std::vector<std::string> strings = ctx.attrs().GetStrings("classlabels_strings");
  const int64_t columns = static_cast<int64_t>(ints.empty() ? strings.size() : ints.size());
  if (x.rank() < 1 || x.rank() > 2 || x.shape().back() != columns) {
    return absl::InvalidArgumentError(absl::StrCat("ZipMap takes [N, ", columns, "], not ", x.Describe()));
  }
  ir::Tensor keys;
  std::vector<int64_t> picked;  // the column of each key
  if (ints.empty()) {
    auto [sorted, order] = SortedLabels(strings);
    keys = ir::Tensor::FromStrings(std::move(sorted)), picked = std::move(order);
  } else {
    auto [sorted, order] = SortedLabels(ints);
    keys = ir::Tensor::FromInt64s(std::move(sorted)), picked = std::move(order);
  }
  const int64_t rows = x.rank() == 1 ? 1 : x.shape()[0];  // as many maps as the input has rows
  std::vector<ir::Tensor> maps;
  maps.reserve(rows);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> row;
    for (int64_t c : picked) row.push_back(x.data<float>()[r * columns + c]);
    const int64_t count = static_cast<int64_t>(row.size());
    absl::StatusOr<ir::Tensor> map = ir::Tensor::Map(keys, ir::Tensor::FromFloats(std::move(row), {count}));
    if (!map.ok()) return map.status();
    maps.push_back(*std::move(map));
  }
  *ctx.output(0) = ir::Tensor::Sequence(ir::DType::kFloat32, std::move(maps));
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> MlTransformKernels() {
  return {
      {"ai.onnx.ml.Normalizer", Normalizer},
      {"ai.onnx.ml.Scaler", Scaler},
      {"ai.onnx.ml.Imputer", Imputer},
      {"ai.onnx.ml.OneHotEncoder", OneHotEncoder},
      {"ai.onnx.ml.CategoryMapper", CategoryMapper},
      {"ai.onnx.ml.FeatureVectorizer", FeatureVectorizer},
      {"ai.onnx.ml.ZipMap", ZipMap},
  };
}

}  // namespace kernels::cpu
