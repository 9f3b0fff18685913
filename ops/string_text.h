// The text ops of opset 20 on string tensors: their attributes, the split rule and the type/shape
// inference shared by inference and the CPU kernels (kernels/cpu/string_text.cc).
//   StringConcat(X, Y) -> Z: X[i] + Y[i] with numpy broadcasting.
//   StringSplit(X) -> Y, Z: each X element split as Python's str.split(delimiter, maxsplit) splits
//     it; Y is X's shape + [the most pieces of any element], padded with "", Z (int64, X's shape)
//     the piece counts. An absent or empty delimiter splits on runs of whitespace and drops leading
//     and trailing whitespace (Python's whitespace: ASCII \t\n\v\f\r, \x1c-\x1f and space, and the
//     Unicode spaces U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F,
//     U+3000 in UTF-8); otherwise consecutive delimiters delimit empty pieces. maxsplit >= 0 bounds
//     the splits (the rest of the element is the last piece); absent means no bound.
//   RegexFullMatch(X) -> Y (bool): whether each element fully matches `pattern` (RE2 syntax; what
//     is supported and the bounds: ops/regex_match.h). A pattern that does not compile is an error
//     of inference, so of Session::Create.
#ifndef ONNXRUN_OPS_STRING_TEXT_H_
#define ONNXRUN_OPS_STRING_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"
#include "ops/regex_match.h"

namespace ops {

struct StringSplitAttrs {
  std::string delimiter;            // empty: split on whitespace
  std::optional<int64_t> maxsplit;  // nullopt: no bound
};

// The attributes; an error for a negative maxsplit.
absl::StatusOr<StringSplitAttrs> ParseStringSplitAttrs(const ir::Node& node);

// Calls piece(p) for each piece of `s` in order (pieces view `s`).
void ForEachSplitPiece(std::string_view s, const StringSplitAttrs& attrs,
                       absl::FunctionRef<void(std::string_view)> piece);

// The `pattern` attribute compiled; an error when it is absent or does not compile.
absl::StatusOr<FullMatchRegex> ParseRegexFullMatchPattern(const ir::Node& node);

std::vector<OpDef> StringTextOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_STRING_TEXT_H_
