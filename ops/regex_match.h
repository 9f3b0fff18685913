// RegexFullMatch's matcher (and the Tokenizer's search, ops/tokenizer.h): a pattern in RE2 syntax (what the ONNX spec
// names) checked and translated onto std::wregex (ECMAScript grammar), because RE2 itself is not a dependency. Text and
// pattern are UTF-8, matched as code points (decoded to UTF-32), as RE2 matches them; an invalid UTF-8 byte of the text
// is one U+FFFD character, an invalid pattern is an error.
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
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace ops {

inline constexpr int64_t kMaxRegexUnits = 5000;
inline constexpr int kMaxRegexDepth = 100;
inline constexpr int64_t kMaxRegexTextBytes = int64_t{64} << 10;
inline constexpr int64_t kMaxRegexWork = int64_t{1} << 26;

// `text` as code points and the byte offset of each (offsets has one more entry: the end);
// InvalidArgument when it is not valid UTF-8.
absl::Status DecodeUtf8Text(std::string_view text, std::wstring& code_points, std::vector<size_t>& offsets);

class FullMatchRegex {
 public:
  // InvalidArgument for a pattern that is not valid RE2 syntax, uses what is refused above, or
  // passes the bounds; the message says what and where.
  static absl::StatusOr<FullMatchRegex> Create(std::string_view pattern);

  // Whether the whole of `text` matches; ResourceExhausted for text past the bounds above.
  absl::StatusOr<bool> Matches(std::string_view text) const;
  // The leftmost match in `text` (code points) that starts at or after `from`, as [begin, end), or
  // nullopt. Among matches starting there ECMAScript picks the first alternative that matches
  // (greedy repetitions) where RE2's longest-match mode picks the longest: the same but for an
  // alternation whose earlier branch matches a shorter prefix. The caller bounds the text (its
  // size times units() is about the work of one search).
  absl::StatusOr<std::optional<std::pair<size_t, size_t>>> Search(const std::wstring& text, size_t from) const;
  int64_t units() const { return units_; }

 private:
  FullMatchRegex(std::shared_ptr<const std::wregex> regex, int64_t units) : regex_(std::move(regex)), units_(units) {}
  std::shared_ptr<const std::wregex> regex_;  // immutable once compiled, shared by copies
  int64_t units_;                             // the pattern's size estimate, >= 1
};

}  // namespace ops

#endif  // ONNXRUN_OPS_REGEX_MATCH_H_
