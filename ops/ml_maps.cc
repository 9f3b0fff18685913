// ai.onnx.ml DictVectorizer and CastMap, the ops that read a map (ONNX's map(int64|string, T), as
// ir::Tensor::Map holds it): attribute parsing and inference (ml_ops.h). The kernels are in
// kernels/cpu/ml_maps.cc.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"
#include "ops/ml_ops.h"

namespace ops {
namespace {

using ir::DType;

absl::Status ExpectMap(const InferContext& ctx, const char* op) {
  if (ctx.type(0).kind != ir::ValueKind::kMap) {
    return absl::InvalidArgumentError(absl::StrCat(op, " takes a map, not ", ctx.type(0).ToString()));
  }
  return absl::OkStatus();
}

// map(string, int64|float|double) or map(int64, string|float|double) -> [1, V] of the value type:
// the value of each vocabulary entry's key, 0 (or "") where the map lacks it.
absl::StatusOr<std::vector<ir::TensorType>> InferDictVectorizer(const InferContext& ctx) {
  if (absl::Status s = ExpectMap(ctx, "DictVectorizer"); !s.ok()) return s;
  const ir::TensorType& x = ctx.type(0);
  const size_t strings = ctx.attrs().GetStrings("string_vocabulary").size();
  const size_t ints = ctx.attrs().GetInts("int64_vocabulary").size();
  if ((strings == 0) == (ints == 0)) {
    return absl::InvalidArgumentError("DictVectorizer needs exactly one of string_vocabulary and int64_vocabulary");
  }
  const bool string_keys = x.map_key == DType::kString;
  if (string_keys != (strings > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("DictVectorizer's ", strings ? "string" : "int64",
                                                   "_vocabulary does not match its input ", x.ToString()));
  }
  const absl::Status values = string_keys ? ExpectDType(ctx, 0, {DType::kInt64, DType::kFloat32, DType::kFloat64})
                                          : ExpectDType(ctx, 0, {DType::kString, DType::kFloat32, DType::kFloat64});
  if (!values.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("DictVectorizer does not take ", x.ToString()));
  }
  const int64_t width = static_cast<int64_t>(strings + ints);
  return std::vector<ir::TensorType>{{x.dtype, ir::Shape{ir::Dim(1), ir::Dim(width)}}};
}

// map(int64, string|float) -> [1, N] (DENSE: the values in key order) or [1, max_map] (SPARSE:
// key k's value at column k) of cast_to's type.
absl::StatusOr<std::vector<ir::TensorType>> InferCastMap(const InferContext& ctx) {
  if (absl::Status s = ExpectMap(ctx, "CastMap"); !s.ok()) return s;
  const ir::TensorType& x = ctx.type(0);
  if (x.map_key != DType::kInt64 || !ExpectDType(ctx, 0, {DType::kString, DType::kFloat32}).ok()) {
    return absl::InvalidArgumentError(absl::StrCat("CastMap takes map(int64, string or float), not ", x.ToString()));
  }
  absl::StatusOr<CastMapAttrs> attrs = ParseCastMap(ctx.attrs());
  if (!attrs.ok()) return attrs.status();
  const ir::Dim width = attrs->sparse ? ir::Dim(attrs->max_map) : ir::Dim();
  return std::vector<ir::TensorType>{{attrs->to, ir::Shape{ir::Dim(1), width}}};
}

}  // namespace

absl::StatusOr<CastMapAttrs> ParseCastMap(const ir::Attributes& a) {
  CastMapAttrs out;
  const std::string to = a.GetString("cast_to", "TO_FLOAT");
  if (to == "TO_FLOAT") {
    out.to = DType::kFloat32;
  } else if (to == "TO_STRING") {
    out.to = DType::kString;
  } else if (to == "TO_INT64") {
    out.to = DType::kInt64;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("CastMap's cast_to is TO_FLOAT, TO_STRING or TO_INT64, not '", to, "'"));
  }
  const std::string form = a.GetString("map_form", "DENSE");
  if (form != "DENSE" && form != "SPARSE") {
    return absl::InvalidArgumentError(absl::StrCat("CastMap's map_form is DENSE or SPARSE, not '", form, "'"));
  }
  out.sparse = form == "SPARSE";
  out.max_map = a.GetInt("max_map", 1);
  if (out.sparse && out.max_map <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("CastMap's max_map must be positive for a SPARSE map, not ", out.max_map));
  }
  return out;
}

std::vector<OpDef> MlMapOpDefs() {
  return {
      {"ai.onnx.ml.DictVectorizer", 1, 1, InferDictVectorizer, /*takes_non_tensors=*/true, /*takes_strings=*/true},
      {"ai.onnx.ml.CastMap", 1, 1, InferCastMap, /*takes_non_tensors=*/true, /*takes_strings=*/true},
  };
}

}  // namespace ops
