// The CPU kernels of ai.onnx.ml DictVectorizer and CastMap, the ops that read a map (inference in
// ops/ml_maps.cc), as ONNX Runtime computes them. They run on the host on every backend.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/cpu/kernel.h"
#include "ops/ml_ops.h"

namespace kernels::cpu {
namespace {

// A map's key i as int64 or string (the other is unused).
struct Key {
  int64_t number = 0;
  std::string text;
  bool operator<(const Key& o) const { return number != o.number ? number < o.number : text < o.text; }
};

Key KeyAt(const ir::Tensor& keys, int64_t i) {
  if (keys.dtype() == ir::DType::kString) return {0, keys.strings()[i]};
  return {keys.data<int64_t>()[i], {}};
}

// Map entries by key, a repeated key keeping its last value (the index of that value).
std::map<Key, int64_t> IndexByKey(const ir::Tensor& map) {
  std::map<Key, int64_t> by_key;
  for (int64_t i = 0; i < map.map_keys().num_elements(); ++i) by_key[KeyAt(map.map_keys(), i)] = i;
  return by_key;
}

absl::Status NeedMap(const ir::Tensor* x, const char* op) {
  if (x == nullptr || !x->is_map()) {
    return absl::InvalidArgumentError(absl::StrCat(op, " takes a map, not ", x ? x->Describe() : "nothing"));
  }
  return absl::OkStatus();
}

// [1, V]: vocabulary entry v's value in the map, 0 (or "") where the map lacks the key.
absl::Status DictVectorizer(KernelContext& ctx) {
  if (absl::Status s = NeedMap(ctx.input(0), "DictVectorizer"); !s.ok()) return s;
  const ir::Tensor& map = *ctx.input(0);
  const std::vector<std::string> strings = ctx.attrs().GetStrings("string_vocabulary");
  const std::vector<int64_t> ints = ctx.attrs().GetInts("int64_vocabulary");
  const bool string_keys = map.map_keys().dtype() == ir::DType::kString;
  const int64_t width = static_cast<int64_t>(string_keys ? strings.size() : ints.size());
  absl::StatusOr<ir::Tensor> out = ir::Tensor::Create(map.dtype(), {1, width});
  if (!out.ok()) return out.status();
  const std::map<Key, int64_t> by_key = IndexByKey(map);
  for (int64_t v = 0; v < width; ++v) {
    const Key key = string_keys ? Key{0, strings[v]} : Key{ints[v], {}};
    auto it = by_key.find(key);
    if (it != by_key.end()) out->CopyElementFrom(map.map_values(), it->second, v);
  }
  *ctx.output(0) = *std::move(out);
  return absl::OkStatus();
}

// ONNX Runtime's casts: std::to_string, a truncating static_cast (out of range or NaN: INT64_MIN,
// what x86 gives), std::stof / std::stoll (an error when no number leads the string).
absl::Status CastValue(const ir::Tensor& values, int64_t i, ir::Tensor& out, int64_t at) {
  const bool from_string = values.dtype() == ir::DType::kString;
  const std::string text = from_string ? values.strings()[i] : std::string();
  const float number = from_string ? 0.f : values.data<float>()[i];
  errno = 0;
  char* end = nullptr;
  switch (out.dtype()) {
    case ir::DType::kString:
      out.mutable_strings()[at] = from_string ? text : absl::StrFormat("%f", number);
      return absl::OkStatus();
    case ir::DType::kFloat32: out.data<float>()[at] = from_string ? std::strtof(text.c_str(), &end) : number; break;
    default: {
      const bool fits = std::isfinite(number) && number >= -9.2233720368547758e18f && number < 9.2233720368547758e18f;
      out.data<int64_t>()[at] = from_string ? std::strtoll(text.c_str(), &end, 10)
                                : fits      ? static_cast<int64_t>(number)
                                            : std::numeric_limits<int64_t>::min();
    }
  }
  if (from_string && (end == text.c_str() || errno == ERANGE)) {
    return absl::InvalidArgumentError(absl::StrCat("CastMap cannot read '", text, "' as a number"));
  }
  return absl::OkStatus();
}

// DENSE: [1, N], the values in key order; SPARSE: [1, max_map], key k's value at column k and a pad
// elsewhere (0, or "0.f" for strings: ONNX Runtime's pad); keys past max_map are left out.
absl::Status CastMap(KernelContext& ctx) {
  if (absl::Status s = NeedMap(ctx.input(0), "CastMap"); !s.ok()) return s;
  const ir::Tensor& map = *ctx.input(0);
  absl::StatusOr<ops::CastMapAttrs> attrs = ops::ParseCastMap(ctx.attrs());
  if (!attrs.ok()) return attrs.status();
  const std::map<Key, int64_t> by_key = IndexByKey(map);
  const int64_t width = attrs->sparse ? attrs->max_map : static_cast<int64_t>(by_key.size());
  absl::StatusOr<ir::Tensor> out = ir::Tensor::Create(attrs->to, {1, width});
  if (!out.ok()) return out.status();
  if (attrs->sparse && !by_key.empty() && by_key.begin()->first.number < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("CastMap's SPARSE form takes no negative key (", by_key.begin()->first.number, ")"));
  }
  if (attrs->sparse && attrs->to == ir::DType::kString) {
    for (int64_t c = 0; c < width; ++c) out->mutable_strings()[c] = "0.f";
  }
  int64_t column = 0;
  for (const auto& [key, index] : by_key) {
    const int64_t at = attrs->sparse ? key.number : column++;
    if (at >= width) break;
    if (absl::Status s = CastValue(map.map_values(), index, *out, at); !s.ok()) return s;
  }
  *ctx.output(0) = *std::move(out);
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelDef> MlMapKernels() {
  return {
      {"ai.onnx.ml.DictVectorizer", DictVectorizer},
      {"ai.onnx.ml.CastMap", CastMap},
  };
}

}  // namespace kernels::cpu
