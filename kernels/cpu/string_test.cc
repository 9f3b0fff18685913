// String tensors in the CPU kernels: Cast's text forms both ways (kernels/cpu/string_cast.h),
// StringNormalizer beyond ONNX's six cases, the shape-only ops on strings, and the rule that other
// ops refuse strings (ops::OpDef::takes_strings), run as the CPU executor runs a node.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/half.h"
#include "kernels/cpu/run_node.h"
#include "kernels/cpu/string_cast.h"
#include "kernels/cpu/test_tensors.h"

namespace kernels::cpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using test_tensors::Attrs;
using test_tensors::Error;
using test_tensors::F32;
using test_tensors::I32;
using test_tensors::Make;
using test_tensors::MakeNode;
using test_tensors::Strings;
using test_tensors::StringValues;
using test_tensors::Values;

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- Cast: numbers to text ----

TEST(StringCastTest, FloatsAsNumpyWritesThem) {
  EXPECT_EQ(FloatToString(0.47892547f), "0.47892547");
  EXPECT_EQ(FloatToString(0.039187793f), "0.039187793");
  EXPECT_EQ(FloatToString(100.0f), "100.0");
  EXPECT_EQ(FloatToString(123456789.0f), "123456790.0");
  EXPECT_EQ(FloatToString(1e-4f), "0.0001");
  EXPECT_EQ(FloatToString(1e-5f), "1e-05");
  EXPECT_EQ(FloatToString(1.5e16f), "1.5e+16");
  EXPECT_EQ(FloatToString(0.0f), "0.0");
  EXPECT_EQ(FloatToString(-0.0f), "-0.0");
  EXPECT_EQ(FloatToString(-2.5f), "-2.5");
  EXPECT_EQ(FloatToString(std::nanf("")), "NaN");
  EXPECT_EQ(FloatToString(kInf), "INF");
  EXPECT_EQ(FloatToString(-kInf), "-INF");
  EXPECT_EQ(DoubleToString(0.1), "0.1");
  EXPECT_EQ(DoubleToString(1e300), "1e+300");
  EXPECT_EQ(DoubleToString(0.30000000000000004), "0.30000000000000004");
}

TEST(StringCastTest, SixteenBitFloatsUseTheirOwnShortestDigits) {
  EXPECT_EQ(Float16ToString(ir::FloatToHalfBits(0.1f)), "0.1");
  EXPECT_EQ(Float16ToString(ir::FloatToHalfBits(65504.0f)), "65500.0");
  EXPECT_EQ(Float16ToString(ir::FloatToHalfBits(-kInf)), "-INF");
  EXPECT_EQ(BFloat16ToString(ir::FloatToBFloat16Bits(0.1f)), "0.1");
  EXPECT_EQ(BFloat16ToString(ir::FloatToBFloat16Bits(1.0f)), "1.0");
}

// ---- Cast: text to numbers ----

TEST(StringCastTest, ParsesSpecialValuesInAnyCase) {
  for (const char* nan : {"NaN", "nan", "NAN", "+nan"}) EXPECT_TRUE(std::isnan(*ParseFloat(nan))) << nan;
  for (const char* inf : {"INF", "+INF", "inf", "+Inf", "Infinity"}) EXPECT_EQ(*ParseFloat(inf), kInf) << inf;
  for (const char* inf : {"-INF", "-inf"}) EXPECT_EQ(*ParseFloat(inf), -kInf) << inf;
}

TEST(StringCastTest, ParsesPlainAndScientificDecimals) {
  EXPECT_EQ(*ParseFloat("0.47892547"), 0.47892547f);
  EXPECT_EQ(*ParseFloat(" 3.5\n"), 3.5f);
  EXPECT_EQ(*ParseFloat("+2"), 2.0f);
  EXPECT_EQ(*ParseFloat("1E8"), 1e8f);
  EXPECT_EQ(*ParseFloat("1e-5"), 1e-5f);
  EXPECT_EQ(*ParseDouble("0.1"), 0.1);
  EXPECT_EQ(*ParseFloat("1e400"), kInf);
  EXPECT_EQ(*ParseFloat("-1e400"), -kInf);
  EXPECT_EQ(*ParseFloat("1e-400"), 0.0f);
  for (const char* bad : {"", " ", "abc", "1.5x", "+-1", "--1", "1 2", "0x10"}) {
    EXPECT_FALSE(ParseFloat(bad).has_value()) << bad;
  }
}

TEST(StringCastTest, CastsNumbersToStrings) {
  ir::Tensor x = F32({2, 2}, {0.5f, -kInf, 3.0f, 1e-7f});
  auto out = RunNode(MakeNode("Cast", 1, Attrs({{"to", int64_t{8}}})), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), ir::DType::kString);
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("0.5", "-INF", "3.0", "1e-07"));

  ir::Tensor ints = I32({2}, {-5, 7});
  out = RunNode(MakeNode("Cast", 1, Attrs({{"to", int64_t{8}}})), {&ints});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("-5", "7"));
  ir::Tensor bools = Make<uint8_t>(ir::DType::kBool, {2}, {1, 0});
  out = RunNode(MakeNode("Cast", 1, Attrs({{"to", int64_t{8}}})), {&bools});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("1", "0"));
  ir::Tensor big = Make<uint64_t>(ir::DType::kUint64, {1}, {std::numeric_limits<uint64_t>::max()});
  out = RunNode(MakeNode("Cast", 1, Attrs({{"to", int64_t{8}}})), {&big});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("18446744073709551615"));
}

// Cast of `x` to `to`; the output tensor (its status checked by the caller through ok()).
absl::StatusOr<std::vector<ir::Tensor>> CastTo(const ir::Tensor& x, ir::DType to) {
  return RunNode(MakeNode("Cast", 1, Attrs({{"to", static_cast<int64_t>(to)}})), {&x});
}

TEST(StringCastTest, CastsStringsToNumbers) {
  auto out = CastTo(Strings({4}, {"100.5", "-7", "+3", "1e3"}), ir::DType::kInt64);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(100, -7, 3, 1000));
  out = CastTo(Strings({3}, {"-1", "300", "1e9"}), ir::DType::kUint8);  // wraps as from int64; saturates
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(255, 44, 255));
  out = CastTo(Strings({5}, {"true", "FALSE", "0", "2.5", "nan"}), ir::DType::kBool);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(1, 0, 0, 1, 1));
  out = CastTo(Strings({2}, {"0.1", "-INF"}), ir::DType::kFloat16);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint16_t>((*out)[0]), ElementsAre(ir::FloatToHalfBits(0.1f), ir::FloatToHalfBits(-kInf)));
  out = CastTo(Strings({1}, {"2.5"}), ir::DType::kFloat64);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(2.5));
  out = CastTo(Strings({2}, {"a", "b"}), ir::DType::kString);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("a", "b"));
}

TEST(StringCastTest, TextThatIsNotANumberIsAnError) {
  EXPECT_THAT(Error(CastTo(Strings({2}, {"1", "hello"}), ir::DType::kFloat32)),
              HasSubstr("element 1 (\"hello\") is not a float32 literal"));
  EXPECT_THAT(Error(CastTo(Strings({1}, {std::string(1000, 'x')}), ir::DType::kInt32)), HasSubstr("xxx...\")"));
  EXPECT_THAT(Error(CastTo(Strings({1}, {"yes"}), ir::DType::kBool)), HasSubstr("not a bool literal"));
}

// ---- StringNormalizer ----

ir::Node Normalizer(const std::string& action, int64_t case_sensitive, std::vector<std::string> stopwords) {
  return MakeNode("StringNormalizer", 1,
                  Attrs({{"case_change_action", action},
                         {"is_case_sensitive", case_sensitive},
                         {"stopwords", std::move(stopwords)}}));
}

TEST(StringNormalizerTest, StopwordsMatchIgnoringCaseUnlessCaseSensitive) {
  ir::Tensor x = Strings({3}, {"MONDAY", "Tuesday", "monday"});
  auto out = RunNode(Normalizer("LOWER", 0, {"Monday"}), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("tuesday"));
  out = RunNode(Normalizer("NONE", 1, {"monday"}), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("MONDAY", "Tuesday"));
}

TEST(StringNormalizerTest, EverythingDroppedLeavesOneEmptyString) {
  ir::Tensor row = Strings({1, 2}, {"a", "A"});
  auto out = RunNode(Normalizer("UPPER", 0, {"a"}), {&row});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre(""));
  ir::Tensor empty = Strings({0}, {});
  out = RunNode(Normalizer("NONE", 0, {}), {&empty});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{1}));
}

TEST(StringNormalizerTest, CaseMappingIsAsciiOnly) {
  ir::Tensor x = Strings({1}, {"stra\xc3\x9f"
                               "e"});
  auto out = RunNode(Normalizer("UPPER", 0, {}), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("STRA\xc3\x9f"
                                                   "E"));
}

TEST(StringNormalizerTest, RefusesBadAttributesShapesAndDtypes) {
  ir::Tensor x = Strings({2}, {"a", "b"});
  EXPECT_THAT(Error(RunNode(Normalizer("TITLE", 0, {}), {&x})), HasSubstr("case_change_action must be"));
  EXPECT_THAT(Error(RunNode(Normalizer("NONE", 2, {}), {&x})), HasSubstr("is_case_sensitive"));
  ir::Tensor square = Strings({2, 2}, {});
  EXPECT_THAT(Error(RunNode(Normalizer("NONE", 0, {}), {&square})), HasSubstr("[C] or [1, C]"));
  ir::Tensor floats = F32({2}, {1, 2});
  EXPECT_THAT(Error(RunNode(Normalizer("NONE", 0, {}), {&floats})), HasSubstr("float32"));
}

// ---- Which ops take strings ----

TEST(StringOpsTest, ShapeOnlyOpsCopyStrings) {
  ir::Tensor x = Strings({2, 2}, {"a", "b", "c", "d"});
  ir::Tensor shape = test_tensors::I64({1}, {4});
  auto out = RunNode(MakeNode("Reshape", 1), {&x, &shape});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{4}));
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("a", "b", "c", "d"));
  out = RunNode(MakeNode("Identity", 1), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(StringValues((*out)[0]), ElementsAre("a", "b", "c", "d"));
  out = RunNode(MakeNode("Shape", 1), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(2, 2));
}

// Ops that compute with element values refuse strings (element-moving ops take them: ml_models_test).
TEST(StringOpsTest, OtherOpsRefuseStrings) {
  ir::Tensor x = Strings({2}, {"a", "b"});
  EXPECT_THAT(Error(RunNode(MakeNode("Add", 1), {&x, &x})), HasSubstr("Add does not take string tensors"));
  EXPECT_THAT(Error(RunNode(MakeNode("ReduceMax", 1), {&x})), HasSubstr("does not take string tensors"));
  EXPECT_THAT(Error(RunNode(MakeNode("TopK", 2), {&x, &x})), HasSubstr("does not take string tensors"));
}

}  // namespace
}  // namespace kernels::cpu
