// com.microsoft.Tokenizer (see tokenizer.h): the attributes, the three ways of splitting a string,
// and the type/shape inference.
#include "ops/tokenizer.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ops {
namespace {

using Types = std::vector<ir::TensorType>;

// Splitting one string, in code points, with the byte offset of each (offsets has the end too).
struct Text {
  std::string_view bytes;
  std::wstring code_points;
  std::vector<size_t> offsets;
  int64_t work_left = 0;  // code points a regex may still scan (kMaxRegexWork / its units)

  std::string_view Piece(size_t begin, size_t end) const {
    return bytes.substr(offsets[begin], offsets[end] - offsets[begin]);
  }
  // The next match at or after `from` in [from, limit), charging the scan to work_left.
  absl::StatusOr<std::optional<std::pair<size_t, size_t>>> Next(const FullMatchRegex& regex, size_t from,
                                                                size_t limit) {
    const std::wstring window = code_points.substr(0, limit);
    absl::StatusOr<std::optional<std::pair<size_t, size_t>>> match = regex.Search(window, from);
    if (!match.ok()) return match;
    work_left -= static_cast<int64_t>((*match ? (*match)->second : limit) - from) + 1;
    if (work_left < 0) {
      return absl::ResourceExhaustedError(
          absl::StrCat("Tokenizer: a string of ", bytes.size(), " bytes needs more regex work than the limit"));
    }
    return match;
  }
};

// Splits [begin, end) at each match of `separator`, keeping pieces of at least `min_chars`.
absl::Status SplitAt(Text& text, const FullMatchRegex& separator, int64_t min_chars,
                     std::vector<std::pair<size_t, size_t>>& pieces) {
  std::vector<std::pair<size_t, size_t>> split;
  for (auto [begin, end] : pieces) {
    size_t start = begin;
    while (true) {
      absl::StatusOr<std::optional<std::pair<size_t, size_t>>> match = text.Next(separator, start, end);
      if (!match.ok()) return match.status();
      const size_t stop = *match ? (*match)->first : end;
      if (static_cast<int64_t>(stop - start) >= min_chars) split.emplace_back(start, stop);
      if (!*match) break;
      // An empty match moves on one character (and that character goes, as in ONNX Runtime).
      start = (*match)->second > (*match)->first ? (*match)->second : (*match)->first + 1;
      if (start > end) break;
    }
  }
  pieces = std::move(split);
  return absl::OkStatus();
}

// Each match of `expression` of at least `min_chars` is a token.
absl::Status Matches(Text& text, const FullMatchRegex& expression, int64_t min_chars,
                     std::vector<std::pair<size_t, size_t>>& pieces) {
  const size_t end = text.code_points.size();
  for (size_t start = 0; start <= end;) {
    absl::StatusOr<std::optional<std::pair<size_t, size_t>>> match = text.Next(expression, start, end);
    if (!match.ok()) return match.status();
    if (!*match) break;
    const auto [first, last] = **match;
    if (static_cast<int64_t>(last - first) >= min_chars) {
      pieces.emplace_back(first, last);
      start = last;
    } else {
      start = first + 1;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Types> InferTokenizer(const InferContext& ctx) {
  if (ctx.type(0).dtype != ir::DType::kString) return absl::InvalidArgumentError("Tokenizer: X must be strings");
  absl::StatusOr<TokenizerAttrs> attrs = ParseTokenizerAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const ir::TensorType& x = ctx.type(0);
  if (!x.shape) return Types{{ir::DType::kString, std::nullopt}};
  if (x.shape->size() != 1 && x.shape->size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tokenizer: X must be [C] or [N, C], not of rank ", x.shape->size()));
  }
  ir::Shape y = *x.shape;
  y.push_back(ir::Dim());
  return Types{{ir::DType::kString, std::move(y)}};
}

}  // namespace

absl::StatusOr<TokenizerAttrs> ParseTokenizerAttrs(const ir::Node& node) {
  for (const char* required : {"mark", "mincharnum", "pad_value"}) {
    if (!node.attrs.Has(required)) return absl::InvalidArgumentError(absl::StrCat("Tokenizer needs ", required));
  }
  TokenizerAttrs attrs;
  attrs.mark = node.attrs.GetInt("mark", 0) != 0;
  attrs.mincharnum = node.attrs.GetInt("mincharnum", 1);
  attrs.pad_value = node.attrs.GetString("pad_value", "");
  const bool has_separators = node.attrs.Has("separators"), has_expression = node.attrs.Has("tokenexp");
  if (has_separators == has_expression) {
    return absl::InvalidArgumentError("Tokenizer needs exactly one of separators and tokenexp");
  }
  if (attrs.mincharnum < 1) return absl::InvalidArgumentError("Tokenizer: mincharnum must be at least 1");
  const std::vector<std::string> separators = node.attrs.GetStrings("separators");
  const std::string expression = node.attrs.GetString("tokenexp", "");
  if (has_separators && separators.empty()) return absl::InvalidArgumentError("Tokenizer: separators is empty");
  if (has_expression && expression.empty()) return absl::InvalidArgumentError("Tokenizer: tokenexp is empty");
  attrs.characters = has_separators ? separators.size() == 1 && separators[0].empty() : expression == ".";
  if (attrs.characters) {
    if (attrs.mincharnum > 1) return absl::InvalidArgumentError("Tokenizer: mincharnum > 1 splitting into characters");
    return attrs;
  }
  for (const std::string& separator : separators) {
    absl::StatusOr<FullMatchRegex> regex = FullMatchRegex::Create(separator);
    if (!regex.ok()) return absl::InvalidArgumentError(absl::StrCat("Tokenizer separator: ", regex.status().message()));
    attrs.separators.push_back(*std::move(regex));
  }
  if (has_expression) {
    absl::StatusOr<FullMatchRegex> regex = FullMatchRegex::Create(expression);
    if (!regex.ok()) return absl::InvalidArgumentError(absl::StrCat("Tokenizer tokenexp: ", regex.status().message()));
    attrs.expression = *std::move(regex);
  }
  return attrs;
}

absl::StatusOr<std::vector<std::string_view>> Tokenize(std::string_view s, const TokenizerAttrs& attrs) {
  Text text;
  text.bytes = s;
  if (absl::Status decoded = DecodeUtf8Text(s, text.code_points, text.offsets); !decoded.ok()) return decoded;
  std::vector<std::pair<size_t, size_t>> pieces;
  if (attrs.characters) {
    for (size_t i = 0; i < text.code_points.size(); ++i) pieces.emplace_back(i, i + 1);
  } else if (attrs.expression) {
    text.work_left = kMaxRegexWork / attrs.expression->units();
    if (absl::Status s = Matches(text, *attrs.expression, attrs.mincharnum, pieces); !s.ok()) return s;
  } else {
    pieces.emplace_back(0, text.code_points.size());
    for (const FullMatchRegex& separator : attrs.separators) {
      text.work_left = kMaxRegexWork / separator.units();
      if (absl::Status s = SplitAt(text, separator, attrs.mincharnum, pieces); !s.ok()) return s;
    }
  }
  std::vector<std::string_view> tokens;
  tokens.reserve(pieces.size());
  for (auto [begin, end] : pieces) tokens.push_back(text.Piece(begin, end));
  return tokens;
}

std::vector<OpDef> TokenizerOpDefs() {
  return {{"com.microsoft.Tokenizer", 1, 1, InferTokenizer, /*takes_non_tensors=*/false, /*takes_strings=*/true}};
}

}  // namespace ops
