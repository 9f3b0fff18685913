// The training-time ops beyond their conformance cases: Dropout's training mask (numpy's draws for
// a seed, fresh draws without one, bad ratios) and the ai.onnx.preview.training optimizers
// (float64, mixed dtypes across tensors, Adam's bias correction and post-update decay, Nesterov,
// bad layouts and attributes). Expected values are worked out by hand from the specs.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/run_node.h"
#include "kernels/cpu/test_tensors.h"

namespace kernels::cpu {
namespace {

using test_tensors::Attrs;
using test_tensors::Error;
using test_tensors::F32;
using test_tensors::I64;
using test_tensors::Make;
using test_tensors::MakeNode;
using test_tensors::Values;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;

ir::Tensor Bool(bool value) { return Make<uint8_t>(ir::DType::kBool, {}, {value ? uint8_t{1} : uint8_t{0}}); }
ir::Tensor F64(std::vector<int64_t> shape, std::vector<double> v) {
  return Make(ir::DType::kFloat64, std::move(shape), std::move(v));
}

ir::Node SeededDropout() { return MakeNode("Dropout", 2, Attrs({{"seed", int64_t{0}}}), 13); }

// np.random.seed(0); np.random.uniform(0, 1, 5) = [0.5488, 0.7152, 0.6028, 0.5449, 0.4237].
TEST(DropoutTest, SeededMaskIsNumpys) {
  ir::Tensor x = F32({5}, {1, -2, 3, -4, 5}), on = Bool(true);
  ir::Tensor half = F32({}, {0.5f});
  auto out = RunNode(SeededDropout(), {&x, &half, &on});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, -4, 6, -8, 0));
  EXPECT_THAT(Values<uint8_t>((*out)[1]), ElementsAre(1, 1, 1, 1, 0));
  ir::Tensor more = F32({}, {0.6f});
  out = RunNode(SeededDropout(), {&x, &more, &on});
  ASSERT_TRUE(out.ok()) << out.status();
  // scale = 1 / (1 - 0.6f) in float, as numpy computes it: 2.5000002.
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, FloatNear(-5, 1e-5), FloatNear(7.5, 1e-5), 0, 0));
  EXPECT_TRUE(std::signbit(Values<float>((*out)[0])[3]));  // numpy's -4 * 0 * 2.5
  EXPECT_THAT(Values<uint8_t>((*out)[1]), ElementsAre(0, 1, 1, 0, 0));
}

TEST(DropoutTest, InferenceFormIsTheIdentity) {
  ir::Tensor x = F32({3}, {1, 2, 3}), off = Bool(false), half = F32({}, {0.5f}), zero = F32({}, {0.0f});
  ir::Tensor on = Bool(true);
  for (const auto& inputs : {std::vector<const ir::Tensor*>{&x, &half, &off}, std::vector<const ir::Tensor*>{&x},
                             std::vector<const ir::Tensor*>{&x, &zero, &on}}) {
    auto out = RunNode(SeededDropout(), inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3));
    EXPECT_THAT(Values<uint8_t>((*out)[1]), ElementsAre(1, 1, 1));
  }
}

TEST(DropoutTest, UnseededRunsDrawFreshMasks) {
  ir::Tensor x = F32({2000}, std::vector<float>(2000, 1.0f)), on = Bool(true), half = F32({}, {0.5f});
  ir::Node node = MakeNode("Dropout", 2, {}, 13);
  auto a = RunNode(node, {&x, &half, &on});
  auto b = RunNode(node, {&x, &half, &on});
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<uint8_t> mask = Values<uint8_t>((*a)[1]);
  EXPECT_NE(mask, Values<uint8_t>((*b)[1]));
  int64_t kept = 0;
  for (uint8_t m : mask) kept += m;
  EXPECT_GT(kept, 800);
  EXPECT_LT(kept, 1200);
}

TEST(DropoutTest, RatioOutsideTheRangeIsAnErrorInTraining) {
  ir::Tensor x = F32({2}, {1, 2}), on = Bool(true), one = F32({}, {1.0f});
  EXPECT_THAT(Error(RunNode(SeededDropout(), {&x, &one, &on})), HasSubstr("ratio must be in [0, 1)"));
}

constexpr char kAdagrad[] = "ai.onnx.preview.training.Adagrad";
constexpr char kAdam[] = "ai.onnx.preview.training.Adam";
constexpr char kMomentum[] = "ai.onnx.preview.training.Momentum";

// r = 0.5 / (1 + 2 * 0.5) = 0.25; H_new = 16 + 3^2 = 25; X_new = 1 - 0.25 * 3 / 5 = 0.85 (float64),
// and a float32 tensor beside it with its own dtype.
TEST(OptimizerTest, AdagradFloat64BesideFloat32) {
  ir::Tensor r = F32({}, {0.5f}), t = I64({}, {2});
  ir::Tensor x1 = F64({1}, {1}), x2 = F32({2}, {1, 1}), g1 = F64({1}, {3}), g2 = F32({2}, {0, 0});
  ir::Tensor h1 = F64({1}, {16}), h2 = F32({2}, {1, 1});
  ir::Node node = MakeNode(kAdagrad, 4, Attrs({{"decay_factor", 0.5f}, {"epsilon", 0.0f}}), 1);
  auto out = RunNode(node, {&r, &t, &x1, &x2, &g1, &g2, &h1, &h2});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), ir::DType::kFloat64);
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(DoubleNear(0.85, 1e-15)));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(1, 1));
  EXPECT_THAT(Values<double>((*out)[2]), ElementsAre(25));
  EXPECT_THAT(Values<float>((*out)[3]), ElementsAre(1, 1));
}

// V_new = 0.5 * 2 = 1, H_new = 0.25 * 4 = 1, R_adjusted = 0.1 * sqrt(1 - 0.75^2) / (1 - 0.5^2),
// X_final = 0.5 * (1 - R_adjusted).
TEST(OptimizerTest, AdamBiasCorrectionAndPostDecay) {
  ir::Tensor r = F32({}, {0.1f}), t = I64({}, {2});
  ir::Tensor x = F32({1}, {1}), g = F32({1}, {2}), v = F32({1}, {0}), h = F32({1}, {0});
  ir::Node node = MakeNode(
      kAdam, 3, Attrs({{"alpha", 0.5f}, {"beta", 0.75f}, {"epsilon", 0.0f}, {"norm_coefficient_post", 0.5f}}), 1);
  auto out = RunNode(node, {&r, &t, &x, &g, &v, &h});
  ASSERT_TRUE(out.ok()) << out.status();
  const double adjusted = 0.1 * std::sqrt(1 - 0.75 * 0.75) / (1 - 0.5 * 0.5);
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(FloatNear(0.5 * (1 - adjusted), 1e-6)));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(1));
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(1));
}

// alpha 0.5, beta 0.25, R 0.1, X 1, G 1, V 4. T = 0: V_new = 2 + 1 = 3, standard X_new = 0.7,
// Nesterov X_new = 1 - 0.1 * (1 + 1.5) = 0.75. T = 1: V_new = 2 + 0.25, X_new = 0.775.
TEST(OptimizerTest, MomentumStandardAndNesterov) {
  ir::Tensor r = F32({}, {0.1f}), first = I64({}, {0}), later = I64({}, {1});
  ir::Tensor x = F32({1}, {1}), g = F32({1}, {1}), v = F32({1}, {4});
  auto node = [](const char* mode) {
    return MakeNode(kMomentum, 2,
                    Attrs({{"alpha", 0.5f}, {"beta", 0.25f}, {"norm_coefficient", 0.0f}, {"mode", std::string(mode)}}),
                    1);
  };
  auto standard = RunNode(node("standard"), {&r, &first, &x, &g, &v});
  ASSERT_TRUE(standard.ok()) << standard.status();
  EXPECT_THAT(Values<float>((*standard)[0]), ElementsAre(FloatNear(0.7f, 1e-6)));
  EXPECT_THAT(Values<float>((*standard)[1]), ElementsAre(3));
  auto nesterov = RunNode(node("nesterov"), {&r, &first, &x, &g, &v});
  ASSERT_TRUE(nesterov.ok()) << nesterov.status();
  EXPECT_THAT(Values<float>((*nesterov)[0]), ElementsAre(FloatNear(0.75f, 1e-6)));
  auto second = RunNode(node("standard"), {&r, &later, &x, &g, &v});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(Values<float>((*second)[0]), ElementsAre(FloatNear(0.775f, 1e-6)));
  EXPECT_THAT(Values<float>((*second)[1]), ElementsAre(2.25));
}

TEST(OptimizerTest, BadLayoutsAndAttributesAreErrors) {
  ir::Tensor r = F32({}, {0.1f}), t = I64({}, {0});
  ir::Tensor x = F32({2}, {1, 1}), g = F32({2}, {1, 1}), g3 = F32({3}, {1, 1, 1}), h = F32({2}, {0, 0});
  ir::Node adagrad = MakeNode(kAdagrad, 2, {}, 1);
  EXPECT_THAT(Error(RunNode(adagrad, {&r, &t, &x, &g, &h, &h})), HasSubstr("3 runs of n tensors"));
  EXPECT_THAT(Error(RunNode(adagrad, {&r, &t, &x, &g3, &h})), HasSubstr("input 3 has shape [3]"));
  EXPECT_THAT(Error(RunNode(MakeNode(kAdagrad, 1, {}, 1), {&r, &t, &x, &g, &h})),
              HasSubstr("need 2 outputs (X_new..., then the new states), got 1"));
  ir::Node no_mode = MakeNode(kMomentum, 2, Attrs({{"alpha", 0.5f}, {"beta", 0.5f}, {"norm_coefficient", 0.0f}}), 1);
  EXPECT_THAT(Error(RunNode(no_mode, {&r, &t, &x, &g, &h})), HasSubstr("'mode' is missing"));
}

}  // namespace
}  // namespace kernels::cpu
