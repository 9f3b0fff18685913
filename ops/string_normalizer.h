// StringNormalizer (opset 10): its attributes, parsed once for inference and the CPU kernel, and
// the rules both use. Y = the strings of X that are not stopwords, then lowercased, uppercased or
// kept (case_change_action). X is [C] or [1, C]; Y is [C'] or [1, C'], and when every string is a
// stopword Y is [1] or [1, 1] holding one empty string (as the spec and ONNX's test data say).
// Case mapping and case-insensitive matching are ASCII only (the "C" locale): other bytes, UTF-8
// included, are kept as they are, whatever `locale` names.
#ifndef ONNXRUN_OPS_STRING_NORMALIZER_H_
#define ONNXRUN_OPS_STRING_NORMALIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace ops {

enum class CaseChange { kNone, kLower, kUpper };

struct StringNormalizerAttrs {
  CaseChange case_change = CaseChange::kNone;
  bool case_sensitive = false;
  // The stopwords, ASCII-lowercased unless case_sensitive.
  absl::flat_hash_set<std::string> stopwords;
};

// The attributes; an error for an unknown case_change_action or an is_case_sensitive other than
// 0 or 1.
absl::StatusOr<StringNormalizerAttrs> ParseStringNormalizerAttrs(const ir::Node& node);

// Whether `s` is one of the stopwords (ASCII case-insensitively unless case_sensitive).
bool IsStopword(const StringNormalizerAttrs& attrs, const std::string& s);

// Y's dims for X's dims ([C] or [1, C]) when `kept` strings remain: [max(kept, 1)] or
// [1, max(kept, 1)].
std::vector<int64_t> StringNormalizerDims(const std::vector<int64_t>& x_dims, int64_t kept);

std::vector<OpDef> StringOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_STRING_NORMALIZER_H_
