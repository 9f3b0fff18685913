// com.microsoft.Tokenizer, ONNX Runtime's contrib op that skl2onnx writes for a TfidfVectorizer or
// CountVectorizer (before TfIdfVectorizer): X, strings of shape [C] or [N, C], becomes Y of shape
// X's + [D], each string's tokens in order, padded with pad_value to D, the most tokens of any
// string (D = 0 when no string has one). Attributes, as ONNX Runtime reads them:
//   mark (required): 1 puts "\x02" before each row's tokens and "\x03" after them (D grows by 2;
//     the padding follows the end mark);
//   mincharnum (required, >= 1): tokens of fewer characters (code points) are dropped;
//   pad_value (required);
//   separators (regexes) or tokenexp (one regex), one of them: separators split each string at
//     every match of the first, each piece at every match of the second, ...; tokenexp makes each
//     match a token, searching on after it (after one character when the match was too short).
//     separators [""] or tokenexp "." split into characters.
// Regexes are RE2 syntax on std::wregex (ops/regex_match.h: what is refused, the bounds); where RE2
// in its longest-match mode (ONNX Runtime's) takes the longest of matches starting at one place,
// ECMAScript takes the first alternative, which differs only for alternations such as a|ab.
// Strings must be valid UTF-8 (InvalidArgument otherwise, as ONNX Runtime).
#ifndef ONNXRUN_OPS_TOKENIZER_H_
#define ONNXRUN_OPS_TOKENIZER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"
#include "ops/regex_match.h"

namespace ops {

struct TokenizerAttrs {
  bool mark = false;
  int64_t mincharnum = 1;
  std::string pad_value;
  bool characters = false;                   // split into characters
  std::vector<FullMatchRegex> separators;    // applied in order
  std::optional<FullMatchRegex> expression;  // tokenexp
};

// The attributes; InvalidArgument for a missing required one, both or neither of separators and
// tokenexp, mincharnum < 1 (or > 1 when splitting into characters), a regex that does not compile.
absl::StatusOr<TokenizerAttrs> ParseTokenizerAttrs(const ir::Node& node);

// The tokens of `s` (views into it), in order.
absl::StatusOr<std::vector<std::string_view>> Tokenize(std::string_view s, const TokenizerAttrs& attrs);

std::vector<OpDef> TokenizerOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_TOKENIZER_H_
