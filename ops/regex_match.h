// RegexFullMatch's matcher: a pattern in RE2 syntax (what the ONNX spec names) checked and
// translated onto std::wregex (ECMAScript grammar), because RE2 itself is not a dependency. Text
// and pattern are UTF-8, matched as code points (decoded to UTF-32), as RE2 matches them; an
// invalid UTF-8 byte of the text is one U+FFFD character, an invalid pattern is an error.
//
// Matching runs libstdc++'s breadth-first executor (regex_constants::__polynomial), so its time
// is linear in the text for a given pattern (no catastrophic backtracking) and its recursion does
// not grow with the text. Bounds: a pattern of at most kMaxRegexUnits (its size with counted
// repetitions expanded, estimated), repetition counts of at most 1000 (RE2's limit), groups nested
// at most kMaxRegexDepth deep (InvalidArgument); a text element of at most kMaxRegexTextBytes
// bytes and at most kMaxRegexWork / (the pattern's size) bytes (ResourceExhausted), so that one
// element costs at most about kMaxRegexWork executor steps (about a second).
//
// Same as RE2: literals, `.` (any character but \n), classes `[...]` (a leading `]` is literal)
// with ranges and [:alpha:]-style ASCII classes ([:word:] too), \d \D \w \W \b \B (ASCII),
// \f \n \r \t \v \a, \xHH, escaped punctuation, `^` `$` \A \z (no multi-line mode), groups
// `(...)` `(?:...)` `(?P<name>...)` `(?<name>...)`, alternation, * + ? {n} {n,} {n,m} and their
// lazy forms, a `{` that starts no repetition is literal, and a leading `(?i)` (case-insensitive).
// Refused as RE2 refuses them (InvalidArgument): backreferences (\1..\9), lookaround `(?=` `(?!`
// `(?<=` `(?<!`, a repetition of a repetition (`a**`, `a*+`, `a{2}{3}`) or of nothing, escapes of
// letters RE2 does not define (\c \u \e ...).
// Refused here though RE2 has them (InvalidArgument): octal escapes (\0, \123), \p{..} \pL \P
// Unicode classes, \Q...\E, \C, \x{...}, flags other than a leading (?i) ((?s) (?m) (?U)
// (?i:...)), \b inside a class.
// Different from RE2: \s and \S also count \v as a space (RE2: [\t\n\f\r ]); (?i) folds ASCII
// letters only (RE2 folds Unicode); a class such as [^a] or `.` matches U+FFFD for an invalid
// text byte where RE2 matches the byte.
#ifndef ONNXRUN_OPS_REGEX_MATCH_H_
#define ONNXRUN_OPS_REGEX_MATCH_H_

#include <cstdint>
#include <memory>
#include <regex>
#include <string_view>

#include "absl/status/statusor.h"

namespace ops {

inline constexpr int64_t kMaxRegexUnits = 5000;
inline constexpr int kMaxRegexDepth = 100;
inline constexpr int64_t kMaxRegexTextBytes = int64_t{64} << 10;
inline constexpr int64_t kMaxRegexWork = int64_t{1} << 26;

class FullMatchRegex {
 public:
  // InvalidArgument for a pattern that is not valid RE2 syntax, uses what is refused above, or
  // passes the bounds; the message says what and where.
  static absl::StatusOr<FullMatchRegex> Create(std::string_view pattern);

  // Whether the whole of `text` matches; ResourceExhausted for text past the bounds above.
  absl::StatusOr<bool> Matches(std::string_view text) const;

 private:
  FullMatchRegex(std::shared_ptr<const std::wregex> regex, int64_t units) : regex_(std::move(regex)), units_(units) {}
  std::shared_ptr<const std::wregex> regex_;  // immutable once compiled, shared by copies
  int64_t units_;                             // the pattern's size estimate, >= 1
};

}  // namespace ops

#endif  // ONNXRUN_OPS_REGEX_MATCH_H_
