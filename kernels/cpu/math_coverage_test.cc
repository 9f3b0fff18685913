// Edge cases and bad input of the logic, math, reduction, Einsum and normalisation ops
// (ops/logic.cc, math.cc, reduce_resize.cc, einsum.cc, math_norm.cc and their CPU kernels), run as
// the CPU executor runs a node. The conformance suite covers the ordinary cases (it has none for
// Bitwise*); these cover the corners: integer Mod signs, shifts past the width, Equal on strings,
// Einsum ellipses, empty reductions (bool ones too), zero norms, loss targets out of range,
// transform limits, the inverse one-sided DFT's odd lengths and bad attributes.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "kernels/cpu/run_node.h"
#include "kernels/cpu/test_tensors.h"

namespace kernels::cpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using test_tensors::Attrs;
using test_tensors::Error;
using test_tensors::F32;
using test_tensors::I32;
using test_tensors::I64;
using test_tensors::MakeNode;
using test_tensors::U8;
using test_tensors::Values;

TEST(LogicTest, BitwiseBroadcast) {
  ir::Tensor a = I32({2, 2}, {0b1100, 0b1010, -1, 0}), b = I32({2}, {0b1010, 0b0110});
  auto out = RunNode(MakeNode("BitwiseAnd", 1), {&a, &b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(0b1000, 0b0010, 0b1010, 0));
  out = RunNode(MakeNode("BitwiseXor", 1), {&a, &b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(0b0110, 0b1100, ~0b1010, 0b0110));
  out = RunNode(MakeNode("BitwiseNot", 1), {&a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(~0b1100, ~0b1010, 0, -1));
  ir::Tensor f = F32({1}, {1});
  EXPECT_THAT(Error(RunNode(MakeNode("BitwiseOr", 1), {&f, &f})), HasSubstr("integer"));
}

TEST(LogicTest, EqualComparesStringsFromOpset19) {
  ir::Tensor a = test_tensors::Strings({2, 2}, {"a", "b", "", "ab"}), b = test_tensors::Strings({2}, {"a", "ab"});
  auto out = RunNode(MakeNode("Equal", 1, {}, 19), {&a, &b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), ir::DType::kBool);
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(1, 0, 0, 1));
  EXPECT_THAT(Error(RunNode(MakeNode("Equal", 1, {}, 18), {&a, &b})), HasSubstr("numeric or bool only"));
  EXPECT_THAT(Error(RunNode(MakeNode("Greater", 1, {}, 19), {&a, &b})), HasSubstr("does not take string tensors"));
  ir::Tensor f = F32({2}, {1, 2});
  EXPECT_THAT(Error(RunNode(MakeNode("Equal", 1, {}, 19), {&a, &f})), HasSubstr("must match"));
}

TEST(LogicTest, BitShiftPastTheWidthGivesZero) {
  ir::Tensor x = U8({3}, {1, 255, 16}), s = U8({3}, {7, 8, 200});
  auto out = RunNode(MakeNode("BitShift", 1, Attrs({{"direction", std::string("LEFT")}})), {&x, &s});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(128, 0, 0));
  EXPECT_THAT(Error(RunNode(MakeNode("BitShift", 1), {&x, &s})), HasSubstr("direction"));
  EXPECT_THAT(Error(RunNode(MakeNode("BitShift", 1, Attrs({{"direction", std::string("UP")}})), {&x, &s})),
              HasSubstr("LEFT"));
}

TEST(LogicTest, IntegerModSigns) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  ir::Tensor a = I32({5}, {-7, 7, -7, kMin, 6}), b = I32({5}, {3, -3, -3, -1, 3});
  auto out = RunNode(MakeNode("Mod", 1), {&a, &b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(2, -2, -1, 0, 0));
  out = RunNode(MakeNode("Mod", 1, Attrs({{"fmod", int64_t{1}}})), {&a, &b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(-1, 1, -1, 0, 0));
  ir::Tensor zero = I32({1}, {0});
  EXPECT_THAT(Error(RunNode(MakeNode("Mod", 1), {&a, &zero})), HasSubstr("division by zero"));
  // Floats with fmod = 0 (opset 28's reading): numpy's mod, the divisor's sign, a zero remainder too.
  ir::Tensor fx = F32({3}, {-7.5f, 7.5f, 6}), fy = F32({3}, {2, -2, -3});
  out = RunNode(MakeNode("Mod", 1), {&fx, &fy});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0.5f, -0.5f, -0.0f));
  EXPECT_TRUE(std::signbit(Values<float>((*out)[0])[2]));
  EXPECT_THAT(Error(RunNode(MakeNode("Mod", 1, Attrs({{"fmod", int64_t{2}}})), {&a, &b})), HasSubstr("0 or 1"));
}

TEST(LogicTest, IsInfDirectionsAndSign) {
  ir::Tensor x = F32({4}, {INFINITY, -INFINITY, NAN, -2});
  auto out = RunNode(MakeNode("IsInf", 1, Attrs({{"detect_negative", int64_t{0}}})), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(1, 0, 0, 0));
  out = RunNode(MakeNode("Sign", 1), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> sign = Values<float>((*out)[0]);
  EXPECT_EQ(sign[0], 1);
  EXPECT_EQ(sign[1], -1);
  EXPECT_TRUE(std::isnan(sign[2]));
  EXPECT_EQ(sign[3], -1);
}

TEST(MathTest, LegacyHardmaxFlattensAtAxis) {
  ir::Tensor x = F32({2, 2, 2}, {1, 5, 3, 2, 4, 4, 0, 1});
  auto out = RunNode(MakeNode("Hardmax", 1, {}, 11), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 1, 0, 0, 1, 0, 0, 0));
  out = RunNode(MakeNode("Hardmax", 1, {}, 13), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 1, 1, 0, 1, 0, 0, 1));
  EXPECT_THAT(Error(RunNode(MakeNode("Hardmax", 1, Attrs({{"axis", int64_t{3}}}), 13), {&x})), HasSubstr("axis"));
}

TEST(ReduceTest, LogSumExpOfLargeValuesAndEmptyMin) {
  ir::Tensor x = F32({2}, {1000, 1000}), axes_last = I64({1}, {1});
  auto out = RunNode(MakeNode("ReduceLogSumExp", 1, Attrs({{"keepdims", int64_t{0}}})), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR(Values<float>((*out)[0])[0], 1000 + std::log(2.0), 1e-3);
  // log(sum(exp(x))) of a NaN is NaN, whatever the other values (numpy's answer too).
  ir::Tensor nan = F32({2, 2}, {NAN, -INFINITY, NAN, INFINITY});
  out = RunNode(MakeNode("ReduceLogSumExp", 1, Attrs({{"keepdims", int64_t{0}}})), {&nan, &axes_last});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan(Values<float>((*out)[0])[0]) && std::isnan(Values<float>((*out)[0])[1]));
  ir::Tensor empty = F32({2, 0}, {}), axes = I64({1}, {1});
  out = RunNode(MakeNode("ReduceMin", 1, Attrs({{"keepdims", int64_t{0}}})), {&empty, &axes});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(INFINITY, INFINITY));
  ir::Tensor bad = I64({1}, {2});
  EXPECT_THAT(Error(RunNode(MakeNode("ReduceProd", 1), {&empty, &bad})), HasSubstr("out of range"));
}

// Opset 20: ReduceMax is any, ReduceMin all (false < true); an empty set gives false and true.
TEST(ReduceTest, BoolMaxAndMinFromOpset20) {
  ir::Tensor x = test_tensors::Make<uint8_t>(ir::DType::kBool, {4, 2}, {1, 1, 1, 0, 0, 7, 0, 0});
  ir::Tensor axes = I64({1}, {1});
  auto out = RunNode(MakeNode("ReduceMax", 1, {}, 20), {&x, &axes});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), ir::DType::kBool);
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(1, 1, 1, 0));
  out = RunNode(MakeNode("ReduceMin", 1, {}, 20), {&x, &axes});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(1, 0, 0, 0));
  ir::Tensor empty = test_tensors::Make<uint8_t>(ir::DType::kBool, {2, 0, 2}, {});
  out = RunNode(MakeNode("ReduceMax", 1, {}, 20), {&empty, &axes});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), std::vector<int64_t>({2, 1, 2}));
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(0, 0, 0, 0));
  out = RunNode(MakeNode("ReduceMin", 1, {}, 20), {&empty, &axes});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(1, 1, 1, 1));
  EXPECT_THAT(Error(RunNode(MakeNode("ReduceMax", 1, {}, 18), {&x, &axes})), HasSubstr("dtype bool"));
  EXPECT_THAT(Error(RunNode(MakeNode("ReduceSum", 1, {}, 20), {&x, &axes})), HasSubstr("dtype bool"));
}

TEST(ReduceTest, ArgMaxLastIndexAndLargeIntegers) {
  const int64_t big = (int64_t{1} << 60) + 1;
  ir::Tensor x = I64({4}, {big, big - 1, big, 0});
  auto out = RunNode(MakeNode("ArgMax", 1, Attrs({{"select_last_index", int64_t{1}}})), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(2));
  out = RunNode(MakeNode("ArgMin", 1, Attrs({{"keepdims", int64_t{0}}})), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].rank(), 0);
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(3));
  EXPECT_THAT(Error(RunNode(MakeNode("ArgMax", 1, Attrs({{"axis", int64_t{1}}})), {&x})), HasSubstr("axis"));
}

TEST(EinsumTest, ImplicitOutputEllipsisAndTrace) {
  ir::Tensor a = F32({2, 2}, {1, 2, 3, 4}), b = F32({2, 2}, {5, 6, 7, 8});
  auto out = RunNode(MakeNode("Einsum", 1, Attrs({{"equation", std::string("ij,jk")}})), {&a, &b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(19, 22, 43, 50));
  out = RunNode(MakeNode("Einsum", 1, Attrs({{"equation", std::string("ii")}})), {&a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].rank(), 0);
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(5));
  ir::Tensor batch = F32({3, 1, 2}, {1, 0, 0, 1, 2, 2});  // ellipsis [3, 1] broadcasts against [2]
  ir::Tensor c = F32({2, 2}, {1, 2, 3, 4});
  out = RunNode(MakeNode("Einsum", 1, Attrs({{"equation", std::string("...j,...jk->...k")}})), {&batch, &c});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_THAT((*out)[0].shape(), ElementsAre(3, 1, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3, 4, 8, 12));
}

TEST(EinsumTest, RefusesBadEquations) {
  ir::Tensor a = F32({2, 3}, {});
  auto run = [&](const std::string& eq) {
    return Error(RunNode(MakeNode("Einsum", 1, Attrs({{"equation", eq}})), {&a}));
  };
  EXPECT_THAT(run("ijk->i"), HasSubstr("does not match"));
  EXPECT_THAT(run("ij,jk->ik"), HasSubstr("input terms"));
  EXPECT_THAT(run("ij->ik"), HasSubstr("no input has"));
  EXPECT_THAT(run("i1->i"), HasSubstr("invalid character"));
  EXPECT_THAT(run("ii->i"), HasSubstr("do not match"));
  EXPECT_THAT(run("......->"), HasSubstr("two ellipses"));
}

TEST(NormTest, DetLpNormalizationZeroNormAndBadP) {
  ir::Tensor m = F32({2, 2, 2}, {0, 2, 3, 4, 1, 2, 2, 4});
  auto out = RunNode(MakeNode("Det", 1), {&m});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(-6, 0));
  ir::Tensor x = F32({2, 2}, {3, 4, 0, 0});
  out = RunNode(MakeNode("LpNormalization", 1), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0.6f, 0.8f, 0, 0));
  EXPECT_THAT(Error(RunNode(MakeNode("LpNormalization", 1, Attrs({{"p", int64_t{3}}})), {&x})), HasSubstr("p must"));
  ir::Tensor v = F32({3}, {});
  EXPECT_THAT(Error(RunNode(MakeNode("Det", 1), {&v})), HasSubstr("rank"));
}

// The corners the conformance cases miss: a target outside [0, C) that is not ignore_index, every
// target ignored under "mean" (0/0, as ONNX's reference computes), a bad reduction, a rank-1 input.
TEST(LossTest, TargetOutOfRangeAllIgnoredAndBadAttributes) {
  ir::Tensor log_prob = F32({2, 3}, {-1, -2, -3, -4, -5, -6}), target = I64({2}, {2, 3});
  EXPECT_THAT(Error(RunNode(MakeNode("NegativeLogLikelihoodLoss", 1), {&log_prob, &target})),
              HasSubstr("target value 3 is outside [0, 3)"));
  auto out = RunNode(MakeNode("NegativeLogLikelihoodLoss", 1,
                              Attrs({{"ignore_index", int64_t{3}}, {"reduction", std::string("none")}})),
                     {&log_prob, &target});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 0));
  ir::Tensor ignored = I64({2}, {-1, -1});
  out = RunNode(MakeNode("SoftmaxCrossEntropyLoss", 1, Attrs({{"ignore_index", int64_t{-1}}})), {&log_prob, &ignored});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan(Values<float>((*out)[0])[0]));
  EXPECT_THAT(Error(RunNode(MakeNode("SoftmaxCrossEntropyLoss", 1, Attrs({{"reduction", std::string("avg")}})),
                            {&log_prob, &target})),
              HasSubstr("reduction must be"));
  ir::Tensor flat = F32({3}, {1, 2, 3}), scalar_target = I64({}, {0});
  EXPECT_THAT(Error(RunNode(MakeNode("NegativeLogLikelihoodLoss", 1), {&flat, &scalar_target})),
              HasSubstr("rank >= 2"));
}

// DFT/STFT bound their work and reject impossible frames (the conformance cases are the ordinary ones).
TEST(SpectralTest, HugeTransformsAndImpossibleFramesAreErrors) {
  ir::Tensor x = F32({1, 4, 1}, {1, 2, 3, 4}), huge = I64({}, {int64_t{1} << 40}), big = I64({}, {int64_t{1} << 20});
  EXPECT_THAT(Error(RunNode(MakeNode("DFT", 1, {}, 17), {&x, &huge})), HasSubstr("outside [1,"));
  ir::Tensor wide = *ir::Tensor::Create(ir::DType::kFloat32, {1, 1 << 12, 1});
  EXPECT_THAT(Error(RunNode(MakeNode("DFT", 1, {}, 17), {&wide, &big})), HasSubstr("multiply-adds"));
  auto out = RunNode(MakeNode("DFT", 1, Attrs({{"onesided", int64_t{1}}}), 17), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  // numpy.fft.rfft([1, 2, 3, 4]) = [10, -2+2j, -2].
  std::vector<float> spectrum = Values<float>((*out)[0]);
  std::vector<float> want = {10, 0, -2, 2, -2, 0};
  ASSERT_EQ(spectrum.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(spectrum[i], want[i], 1e-5) << i;
  // Inverse and onesided: numpy.fft.irfft of the half spectrum, real points out (last dim 1); the
  // imaginary parts of the first point and (n even) of the last are ignored.
  ir::Tensor half = F32({1, 3, 2}, {10, 7, -2, 2, -2, 5});
  const ir::Node irfft = MakeNode("DFT", 1, Attrs({{"inverse", int64_t{1}}, {"onesided", int64_t{1}}}), 20);
  out = RunNode(irfft, {&half});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), std::vector<int64_t>({1, 4, 1}));
  std::vector<float> signal = Values<float>((*out)[0]);
  want = {1, 2, 3, 4};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(signal[i], want[i], 1e-5) << i;
  ir::Tensor five = I64({}, {5});
  out = RunNode(irfft, {&half, &five});  // numpy.fft.irfft([10+7j, -2+2j, -2+5j], n=5)
  ASSERT_TRUE(out.ok()) << out.status();
  signal = Values<float>((*out)[0]);
  want = {0.4f, 0.46358428f, 3.83188483f, 0.96811517f, 4.33641572f};  // n odd: X_2's imaginary part counts
  ASSERT_EQ(signal.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(signal[i], want[i], 1e-5) << i;
  EXPECT_THAT(Error(RunNode(irfft, {&x})), HasSubstr("needs complex input"));
  ir::Tensor dc = F32({1, 1, 2}, {6, 0}), three = I64({}, {3});
  EXPECT_THAT(Error(RunNode(irfft, {&dc})), HasSubstr("dft_length 0"));  // 2 (1 - 1) points
  out = RunNode(irfft, {&dc, &three});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 2, 2));
  ir::Tensor step = I64({}, {1}), frame = I64({}, {5});
  EXPECT_THAT(Error(RunNode(MakeNode("STFT", 1, {}, 17), {&x, &step, nullptr, &frame})), HasSubstr("longer than"));
  EXPECT_THAT(Error(RunNode(MakeNode("STFT", 1, {}, 17), {&x, &step})), HasSubstr("window or a frame_length"));
}

}  // namespace
}  // namespace kernels::cpu
