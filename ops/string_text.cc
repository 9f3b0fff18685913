// StringConcat, StringSplit and RegexFullMatch: attributes, the split rule and type/shape
// inference (see string_text.h). StringSplit's last dim is known when X's value is known (or X is
// empty), unknown otherwise; the kernel then makes Y.
#include "ops/string_text.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ops/infer_util.h"

namespace ops {
namespace {

using Types = std::vector<ir::TensorType>;

// Byte length of the whitespace character at s[i] (Python's str.isspace, in UTF-8); 0 for none.
size_t SpaceLength(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return i + k < s.size() ? static_cast<uint8_t>(s[i + k]) : 0; };
  const uint8_t b = at(0);
  if ((b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x20)) return 1;
  if (b == 0xC2) return at(1) == 0x85 || at(1) == 0xA0 ? 2 : 0;  // U+0085, U+00A0
  if (b == 0xE1) return at(1) == 0x9A && at(2) == 0x80 ? 3 : 0;  // U+1680
  if (b == 0xE3) return at(1) == 0x80 && at(2) == 0x80 ? 3 : 0;  // U+3000
  if (b != 0xE2) return 0;
  if (at(1) == 0x80) {
    const uint8_t c = at(2);
    return (c >= 0x80 && c <= 0x8A) || c == 0xA8 || c == 0xA9 || c == 0xAF ? 3 : 0;  // U+2000-200A, 2028, 2029, 202F
  }
  return at(1) == 0x81 && at(2) == 0x9F ? 3 : 0;  // U+205F
}

void SplitOnWhitespace(std::string_view s, int64_t max_splits, absl::FunctionRef<void(std::string_view)> piece) {
  size_t i = 0;
  const auto skip_spaces = [&] {
    for (size_t n; i < s.size() && (n = SpaceLength(s, i)) > 0;) i += n;
  };
  for (int64_t splits = 0; splits < max_splits; ++splits) {
    skip_spaces();
    if (i == s.size()) return;
    const size_t start = i;
    while (i < s.size() && SpaceLength(s, i) == 0) ++i;
    piece(s.substr(start, i - start));
  }
  // The bound was reached: the rest, leading whitespace dropped and trailing whitespace kept.
  skip_spaces();
  if (i < s.size()) piece(s.substr(i));
}

void SplitOnDelimiter(std::string_view s, std::string_view delimiter, int64_t max_splits,
                      absl::FunctionRef<void(std::string_view)> piece) {
  size_t start = 0;
  for (int64_t splits = 0; splits < max_splits; ++splits) {
    const size_t found = s.find(delimiter, start);
    if (found == std::string_view::npos) break;
    piece(s.substr(start, found - start));
    start = found + delimiter.size();
  }
  piece(s.substr(start));
}

absl::StatusOr<Types> InferStringConcat(const InferContext& ctx) {
  for (size_t i = 0; i < 2; ++i) {
    if (absl::Status s = ExpectDType(ctx, i, {ir::DType::kString}); !s.ok()) return s;
  }
  absl::StatusOr<std::optional<ir::Shape>> shape = BroadcastInputs(ctx);
  if (!shape.ok()) return shape.status();
  return Types{{ir::DType::kString, *std::move(shape)}};
}

// Y's last dim: the most pieces of any element when X's value is known, 0 when X is empty.
ir::Dim SplitLength(const InferContext& ctx, const StringSplitAttrs& attrs, const ir::Shape& x_shape) {
  if (const ir::Tensor* x = ctx.value(0); x != nullptr && x->strings() != nullptr) {
    int64_t most = 0;
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      int64_t count = 0;
      ForEachSplitPiece(x->strings()[i], attrs, [&](std::string_view) { ++count; });
      most = std::max(most, count);
    }
    return most;
  }
  for (const ir::Dim& d : x_shape) {
    if (d.known() && d.value == 0) return 0;
  }
  return ir::Dim();
}

absl::StatusOr<Types> InferStringSplit(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {ir::DType::kString}); !s.ok()) return s;
  absl::StatusOr<StringSplitAttrs> attrs = ParseStringSplitAttrs(ctx.node);
  if (!attrs.ok()) return attrs.status();
  const ir::TensorType& x = ctx.type(0);
  if (!x.shape) return Types{{ir::DType::kString, std::nullopt}, {ir::DType::kInt64, std::nullopt}};
  ir::Shape y = *x.shape;
  y.push_back(SplitLength(ctx, *attrs, *x.shape));
  return Types{{ir::DType::kString, std::move(y)}, {ir::DType::kInt64, x.shape}};
}

absl::StatusOr<Types> InferRegexFullMatch(const InferContext& ctx) {
  if (absl::Status s = ExpectDType(ctx, 0, {ir::DType::kString}); !s.ok()) return s;
  absl::StatusOr<FullMatchRegex> regex = ParseRegexFullMatchPattern(ctx.node);
  if (!regex.ok()) return regex.status();
  return Types{{ir::DType::kBool, ctx.type(0).shape}};
}

}  // namespace

absl::StatusOr<StringSplitAttrs> ParseStringSplitAttrs(const ir::Node& node) {
  StringSplitAttrs attrs;
  attrs.delimiter = node.attrs.GetString("delimiter", "");
  if (node.attrs.Has("maxsplit")) {
    const int64_t maxsplit = node.attrs.GetInt("maxsplit", 0);
    if (maxsplit < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("maxsplit must be >= 0 (leave it out for no bound), not ", maxsplit));
    }
    attrs.maxsplit = maxsplit;
  }
  return attrs;
}

void ForEachSplitPiece(std::string_view s, const StringSplitAttrs& attrs,
                       absl::FunctionRef<void(std::string_view)> piece) {
  const int64_t max_splits = attrs.maxsplit.value_or(std::numeric_limits<int64_t>::max());
  if (attrs.delimiter.empty()) {
    SplitOnWhitespace(s, max_splits, piece);
  } else {
    SplitOnDelimiter(s, attrs.delimiter, max_splits, piece);
  }
}

absl::StatusOr<FullMatchRegex> ParseRegexFullMatchPattern(const ir::Node& node) {
  if (!node.attrs.Has("pattern")) return absl::InvalidArgumentError("RegexFullMatch needs the pattern attribute");
  return FullMatchRegex::Create(node.attrs.GetString("pattern", ""));
}

std::vector<OpDef> StringTextOpDefs() {
  return {
      {"StringConcat", 2, 2, InferStringConcat, /*takes_non_tensors=*/false, /*takes_strings=*/true},
      {"StringSplit", 1, 1, InferStringSplit, /*takes_non_tensors=*/false, /*takes_strings=*/true},
      {"RegexFullMatch", 1, 1, InferRegexFullMatch, /*takes_non_tensors=*/false, /*takes_strings=*/true},
  };
}

}  // namespace ops
