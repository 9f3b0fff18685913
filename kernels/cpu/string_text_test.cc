// StringConcat, StringSplit and RegexFullMatch beyond ONNX's conformance cases, run as the CPU
// executor runs a node (kernels/cpu/run_node.h), and the RE2-on-std::regex matcher
// (ops/regex_match.h) directly: what it accepts, what it refuses and its bounds. Expected values
// follow the spec by hand (Python's str.split and RE2's full-match rules).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/run_node.h"
#include "kernels/cpu/test_tensors.h"
#include "ops/regex_match.h"

namespace kernels::cpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using test_tensors::Attrs;
using test_tensors::Error;
using test_tensors::F32;
using test_tensors::MakeNode;
using test_tensors::Strings;
using test_tensors::StringValues;
using test_tensors::Values;

// ---- StringConcat ----

TEST(StringConcatTest, BroadcastsLikeNumpy) {
  ir::Tensor x = Strings({2, 1}, {"a", "b"});
  ir::Tensor y = Strings({3}, {"1", "", "\xc3\xa9"});
  auto out = RunNode(MakeNode("StringConcat", 1), {&x, &y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("a1", "a", "a\xc3\xa9", "b1", "b", "b\xc3\xa9"));
  ir::Tensor scalar = Strings({}, {"!"});
  out = RunNode(MakeNode("StringConcat", 1), {&y, &scalar});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("1!", "!", "\xc3\xa9!"));
  ir::Tensor empty = Strings({0, 3}, {});
  out = RunNode(MakeNode("StringConcat", 1), {&empty, &y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{0, 3}));
}

TEST(StringConcatTest, RefusesOtherDtypesAndShapesThatDoNotBroadcast) {
  ir::Tensor x = Strings({2}, {"a", "b"});
  ir::Tensor three = Strings({3}, {"a", "b", "c"});
  EXPECT_THAT(Error(RunNode(MakeNode("StringConcat", 1), {&x, &three})), HasSubstr("broadcast"));
  ir::Tensor floats = F32({2}, {1, 2});
  EXPECT_THAT(Error(RunNode(MakeNode("StringConcat", 1), {&x, &floats})), HasSubstr("unsupported dtype float32"));
  EXPECT_THAT(Error(RunNode(MakeNode("StringConcat", 1), {&floats, &x})), HasSubstr("unsupported dtype float32"));
}

// ---- StringSplit ----

ir::Node Split(ir::Attributes attrs) { return MakeNode("StringSplit", 2, std::move(attrs)); }

TEST(StringSplitTest, DelimiterKeepsEmptyPiecesAndPads) {
  ir::Tensor x = Strings({4}, {"a,,b", "", "c,", "abc"});
  auto out = RunNode(Split(Attrs({{"delimiter", std::string(",")}})), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("a", "", "b", "", "", "", "c", "", "", "abc", "", ""));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(3, 1, 2, 1));
  ir::Tensor multi = Strings({1}, {"xabyabab"});
  out = RunNode(Split(Attrs({{"delimiter", std::string("ab")}})), {&multi});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("x", "y", "", ""));
}

TEST(StringSplitTest, WhitespaceRunsAreOneSeparatorUnicodeSpacesIncluded) {
  // U+3000 (ideographic space) and U+00A0 (no-break space) are whitespace; U+00E9 is not.
  ir::Tensor x = Strings({2, 2}, {" a\tb\n", "   ", "x\xe3\x80\x80y\xc2\xa0z", "\xc3\xa9"});
  auto out = RunNode(Split({}), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("a", "b", "", "", "", "", "x", "y", "z", "\xc3\xa9", "", ""));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(2, 0, 3, 1));
  out = RunNode(Split(Attrs({{"delimiter", std::string("")}})), {&x});  // empty delimiter: the same
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(2, 0, 3, 1));
}

TEST(StringSplitTest, MaxsplitKeepsTheRestAsTheLastPiece) {
  ir::Tensor x = Strings({2}, {"  a  b  c ", "a,b,c"});
  auto out = RunNode(Split(Attrs({{"maxsplit", int64_t{1}}})), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("a", "b  c ", "a,b,c", ""));
  out = RunNode(Split(Attrs({{"maxsplit", int64_t{0}}})), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("a  b  c ", "a,b,c"));
  out = RunNode(Split(Attrs({{"delimiter", std::string(",")}, {"maxsplit", int64_t{1}}})), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("  a  b  c ", "", "a", "b,c"));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 2));
}

TEST(StringSplitTest, EmptyInputAndAbsentCounts) {
  ir::Tensor empty = Strings({0, 2}, {});
  auto out = RunNode(Split({}), {&empty});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{0, 2, 0}));
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{0, 2}));
  ir::Node no_z = Split({});
  no_z.outputs[1] = ir::kNoValue;
  ir::Tensor x = Strings({1}, {"p q"});
  out = RunNode(no_z, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("p", "q"));
  EXPECT_FALSE((*out)[1].valid());
}

TEST(StringSplitTest, RefusesNegativeMaxsplitAndOtherDtypes) {
  ir::Tensor x = Strings({1}, {"a b"});
  EXPECT_THAT(Error(RunNode(Split(Attrs({{"maxsplit", int64_t{-1}}})), {&x})), HasSubstr("maxsplit must be >= 0"));
  ir::Tensor ints = test_tensors::I64({1}, {3});
  EXPECT_THAT(Error(RunNode(Split({}), {&ints})), HasSubstr("unsupported dtype int64"));
}

// ---- RegexFullMatch: the matcher ----

// Whether `pattern` fully matches `text` (the pattern must compile).
bool FullMatch(const std::string& pattern, const std::string& text) {
  absl::StatusOr<ops::FullMatchRegex> regex = ops::FullMatchRegex::Create(pattern);
  EXPECT_TRUE(regex.ok()) << pattern << ": " << regex.status();
  if (!regex.ok()) return false;
  absl::StatusOr<bool> match = regex->Matches(text);
  EXPECT_TRUE(match.ok()) << match.status();
  return match.ok() && *match;
}

std::string CreateError(const std::string& pattern) {
  absl::StatusOr<ops::FullMatchRegex> regex = ops::FullMatchRegex::Create(pattern);
  if (regex.ok()) return "ok";
  EXPECT_EQ(regex.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(regex.status().message());
}

TEST(RegexMatchTest, MatchesTheWholeText) {
  EXPECT_TRUE(FullMatch("ab+c", "abbc"));
  EXPECT_FALSE(FullMatch("ab", "abc"));
  EXPECT_FALSE(FullMatch("bc", "abc"));
  EXPECT_TRUE(FullMatch("a|ab", "ab"));  // not just the leftmost alternative's match
  EXPECT_TRUE(FullMatch("", ""));
  EXPECT_TRUE(FullMatch("a.c", "a\rc"));
  EXPECT_FALSE(FullMatch("a.c", "a\nc"));
  EXPECT_FALSE(FullMatch("a$\\n", "a\n"));  // no multi-line mode
  EXPECT_TRUE(FullMatch("\\Aab\\z", "ab"));
}

TEST(RegexMatchTest, MatchesCodePointsWithAsciiClasses) {
  EXPECT_TRUE(FullMatch(".", "\xc3\xa9"));         // U+00E9 is one character
  EXPECT_TRUE(FullMatch("[^a]", "\xe2\x82\xac"));  // U+20AC
  EXPECT_TRUE(FullMatch("\xc3\xa9+", "\xc3\xa9\xc3\xa9"));
  EXPECT_FALSE(FullMatch("\\w", "\xc3\xa9"));
  EXPECT_TRUE(FullMatch("\\w+", "a_Z9"));
  EXPECT_FALSE(FullMatch("\\d", "\xd9\xa1"));  // ARABIC-INDIC DIGIT ONE
  EXPECT_TRUE(FullMatch(".", "\xff"));         // an invalid byte is one character
  EXPECT_TRUE(FullMatch("(?i)ab[c-e]", "AbD"));
  EXPECT_TRUE(FullMatch("[[:word:]]+-[[:digit:]]", "a_1-7"));
}

TEST(RegexMatchTest, Re2SpellingsBecomeTheirEcmaScriptMeaning) {
  EXPECT_TRUE(FullMatch("a{,2}", "a{,2}"));  // not a repetition: literal
  EXPECT_TRUE(FullMatch("x}", "x}"));
  EXPECT_TRUE(FullMatch("[]a]+", "]a]"));
  EXPECT_TRUE(FullMatch("(?P<word>a)(?<n>b)(?:c)", "abc"));
  EXPECT_TRUE(FullMatch("\\x41\\a", "A\x07"));
  EXPECT_TRUE(FullMatch("[\\w.\\-]+@x", "a.b-c@x"));
  EXPECT_TRUE(FullMatch("a{2,3}?", "aaa"));
  EXPECT_FALSE(FullMatch("a{2,3}", "aaaa"));
  EXPECT_TRUE(FullMatch("a{2,}", "aaaa"));
  EXPECT_TRUE(FullMatch("a]", "a]"));
  EXPECT_TRUE(FullMatch("\\]\\<\\>\\_\\/\\ \\#\\-", "]<>_/ #-"));
  EXPECT_TRUE(FullMatch("[\\x41-\\x43]+", "ABC"));
}

TEST(RegexMatchTest, RefusesWhatRe2RefusesOrIsNotSupported) {
  EXPECT_THAT(CreateError("(a)\\1"), HasSubstr("backreferences"));
  EXPECT_THAT(CreateError("(?=a)a"), HasSubstr("lookaround"));
  EXPECT_THAT(CreateError("(?<!a)b"), HasSubstr("lookaround"));
  EXPECT_THAT(CreateError("\\pL"), HasSubstr("\\p is not supported"));
  EXPECT_THAT(CreateError("\\Qa.b\\E"), HasSubstr("\\Q is not supported"));
  EXPECT_THAT(CreateError("\\x{41}"), HasSubstr("\\x{...}"));
  EXPECT_THAT(CreateError("\\x4"), HasSubstr("two hex digits"));
  EXPECT_THAT(CreateError("\\e"), HasSubstr("not an RE2 escape"));
  EXPECT_THAT(CreateError("\\u0041"), HasSubstr("not an RE2 escape"));
  EXPECT_THAT(CreateError("(?s)a"), HasSubstr("flags other than a leading (?i)"));
  EXPECT_THAT(CreateError("a(?i)b"), HasSubstr("flags"));
  EXPECT_THAT(CreateError("a)"), HasSubstr("unexpected )"));
  EXPECT_THAT(CreateError("(a"), HasSubstr("does not compile"));
  EXPECT_THAT(CreateError("[a"), HasSubstr("missing ]"));
  EXPECT_THAT(CreateError("a**"), HasSubstr("bad repetition operator"));
  EXPECT_THAT(CreateError("a{2}{3}"), HasSubstr("bad repetition operator"));
  EXPECT_THAT(CreateError("a|*"), HasSubstr("missing argument"));
  EXPECT_THAT(CreateError("(+a)"), HasSubstr("missing argument"));
  EXPECT_THAT(CreateError("a{3,2}"), HasSubstr("m < n"));
  EXPECT_THAT(CreateError("\\"), HasSubstr("lone backslash"));
  EXPECT_THAT(CreateError("\xff"), HasSubstr("not valid UTF-8"));
}

TEST(RegexMatchTest, BoundsThePatternAndTheText) {
  EXPECT_THAT(CreateError("a{1001}"), HasSubstr("over 1000"));
  EXPECT_EQ(CreateError("a{1000}"), "ok");
  EXPECT_THAT(CreateError("(a{100}){100}"), HasSubstr("too large"));
  EXPECT_THAT(CreateError("[" + std::string(ops::kMaxRegexUnits, 'a') + "]"), HasSubstr("too large"));
  EXPECT_THAT(CreateError(std::string(101, '(') + "a" + std::string(101, ')')), HasSubstr("nested too deeply"));
  EXPECT_EQ(CreateError(std::string(100, '(') + "a" + std::string(100, ')')), "ok");

  // Text of the largest size: no backtracking blow-up and no deep recursion.
  const std::string as(ops::kMaxRegexTextBytes, 'a');
  EXPECT_TRUE(FullMatch(".*", as));
  EXPECT_TRUE(FullMatch("(a|b)*", as));
  EXPECT_FALSE(FullMatch("(a|aa)*b", as));
  EXPECT_FALSE(FullMatch("(a*)*$x", as));
  absl::StatusOr<ops::FullMatchRegex> any = ops::FullMatchRegex::Create(".*");
  ASSERT_TRUE(any.ok());
  absl::StatusOr<bool> too_long = any->Matches(as + "a");
  EXPECT_EQ(too_long.status().code(), absl::StatusCode::kResourceExhausted);
  // A large pattern allows less text: its size times the text's stays under kMaxRegexWork.
  absl::StatusOr<ops::FullMatchRegex> large = ops::FullMatchRegex::Create("(a*){1000}");
  ASSERT_TRUE(large.ok()) << large.status();
  EXPECT_TRUE(large->Matches(std::string(8000, 'a')).value_or(false));
  absl::StatusOr<bool> too_long_for_it = large->Matches(std::string(20000, 'a'));
  EXPECT_EQ(too_long_for_it.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(too_long_for_it.status().message(), HasSubstr("with this pattern"));
}

// ---- RegexFullMatch: the node ----

ir::Node Regex(const std::string& pattern) {
  return MakeNode("RegexFullMatch", 1, Attrs({{"pattern", pattern}}), /*opset=*/20);
}

TEST(RegexFullMatchTest, GivesBoolsOfTheInputShape) {
  ir::Tensor x = Strings({2, 2}, {"ab12", "ab", "12", ""});
  auto out = RunNode(Regex("[a-z]*\\d+"), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), ir::DType::kBool);
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(1, 0, 1, 0));
}

TEST(RegexFullMatchTest, RefusesBadPatternsOtherDtypesAndLongText) {
  ir::Tensor x = Strings({1}, {"a"});
  auto out = RunNode(Regex("(a"), {&x});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Error(out), HasSubstr("does not compile"));
  EXPECT_THAT(Error(RunNode(MakeNode("RegexFullMatch", 1), {&x})), HasSubstr("needs the pattern attribute"));
  ir::Tensor floats = F32({1}, {1});
  EXPECT_THAT(Error(RunNode(Regex("a"), {&floats})), HasSubstr("unsupported dtype float32"));
  ir::Tensor long_text = Strings({2}, {"a", std::string(ops::kMaxRegexTextBytes + 1, 'a')});
  out = RunNode(Regex("a*"), {&long_text});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Error(out), HasSubstr("element 1"));
}

}  // namespace
}  // namespace kernels::cpu
