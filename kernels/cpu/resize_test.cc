// Resize's opset-18 attributes on the CPU kernel (ops/reduce_resize_resize.h): `axes`,
// keep_aspect_ratio_policy and antialias, and what they refuse. ONNX's conformance cases cover the
// ordinary forms; these pin values derived by hand from the spec and the errors a bad model gets.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "kernels/cpu/run_node.h"
#include "kernels/cpu/test_tensors.h"

namespace kernels::cpu {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

using test_tensors::Attrs;
using test_tensors::Error;
using test_tensors::F32;
using test_tensors::I64;
using test_tensors::MakeNode;
using test_tensors::Values;

// A 1x1x2x3 image 0..5.
ir::Tensor Image() { return F32({1, 1, 2, 3}, {0, 1, 2, 3, 4, 5}); }

absl::StatusOr<std::vector<ir::Tensor>> ResizeSizes(const ir::Attributes& attrs, const ir::Tensor& sizes) {
  ir::Tensor x = Image();
  return RunNode(MakeNode("Resize", 1, attrs, 19), {&x, nullptr, nullptr, &sizes});
}

TEST(ResizeAxesTest, ListedAxesInAnyOrderMatchTheFullRankForm) {
  const ir::Tensor full = I64({4}, {1, 1, 4, 5});
  const ir::Tensor listed = I64({2}, {5, 4});
  const ir::Attributes linear = Attrs({{"mode", std::string("linear")}});
  ir::Attributes with_axes = linear;
  with_axes.Set("axes", std::vector<int64_t>{3, -2});
  auto want = ResizeSizes(linear, full);
  auto got = ResizeSizes(with_axes, listed);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT((*got)[0].shape(), ElementsAre(1, 1, 4, 5));
  EXPECT_THAT(Values<float>((*got)[0]), ElementsAreArray(Values<float>((*want)[0])));
}

TEST(ResizeAxesTest, KeepAspectRatioPolicyPicksOneScale) {
  // Sizes 4x4 for a 2x3 image: scales 2 and 4/3. not_larger takes 4/3 (round(2.67) = 3 rows, 4
  // columns); not_smaller takes 2 (4 rows, 6 columns).
  const ir::Tensor sizes = I64({2}, {4, 4});
  auto smaller = ResizeSizes(
      Attrs({{"axes", std::vector<int64_t>{2, 3}}, {"keep_aspect_ratio_policy", std::string("not_larger")}}), sizes);
  ASSERT_TRUE(smaller.ok()) << smaller.status();
  EXPECT_THAT((*smaller)[0].shape(), ElementsAre(1, 1, 3, 4));
  auto larger = ResizeSizes(
      Attrs({{"axes", std::vector<int64_t>{2, 3}}, {"keep_aspect_ratio_policy", std::string("not_smaller")}}), sizes);
  ASSERT_TRUE(larger.ok()) << larger.status();
  EXPECT_THAT((*larger)[0].shape(), ElementsAre(1, 1, 4, 6));
  // Nearest at scale 2 with half_pixel / round_prefer_floor repeats each pixel twice.
  const std::vector<float> values = Values<float>((*larger)[0]);
  EXPECT_THAT(std::vector<float>(values.begin(), values.begin() + 6), ElementsAre(0, 0, 1, 1, 2, 2));
}

TEST(ResizeAntialiasTest, DownsamplingWidensTheLinearFilter) {
  // [1, 2, 3, 4] at scale 0.5, half_pixel: output 0 samples x = 0.5 with the triangle filter
  // stretched to width 4: weights 1/8, 3/8, 3/8, 1/8 on indices -1 (clamped to 0), 0, 1, 2;
  // output 1 samples x = 2.5 over indices 1, 2, 3, 4 (clamped to 3).
  ir::Tensor x = F32({4}, {1, 2, 3, 4});
  ir::Tensor scales = F32({1}, {0.5f});
  auto out = RunNode(MakeNode("Resize", 1, Attrs({{"mode", std::string("linear")}, {"antialias", int64_t{1}}}), 18),
                     {&x, nullptr, &scales});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), Pointwise(FloatNear(1e-6f), std::vector<float>{1.625f, 3.375f}));
  // Upsampling is unchanged by antialias.
  ir::Tensor up = F32({1}, {2.0f});
  auto plain = RunNode(MakeNode("Resize", 1, Attrs({{"mode", std::string("linear")}}), 18), {&x, nullptr, &up});
  auto smooth = RunNode(MakeNode("Resize", 1, Attrs({{"mode", std::string("linear")}, {"antialias", int64_t{1}}}), 18),
                        {&x, nullptr, &up});
  ASSERT_TRUE(plain.ok() && smooth.ok());
  EXPECT_THAT(Values<float>((*smooth)[0]), Pointwise(FloatNear(1e-6f), Values<float>((*plain)[0])));
}

TEST(ResizeAxesTest, RefusesBadAxesPoliciesAndLengths) {
  const ir::Tensor two = I64({2}, {4, 4});
  EXPECT_THAT(Error(ResizeSizes(Attrs({{"axes", std::vector<int64_t>{2, 2}}}), two)), HasSubstr("twice"));
  EXPECT_THAT(Error(ResizeSizes(Attrs({{"axes", std::vector<int64_t>{2, 4}}}), two)), HasSubstr("out of range"));
  EXPECT_THAT(Error(ResizeSizes(Attrs({{"axes", std::vector<int64_t>{3}}}), two)), HasSubstr("one per resized axis"));
  EXPECT_THAT(
      Error(ResizeSizes(Attrs({{"axes", std::vector<int64_t>{2, 3}}, {"keep_aspect_ratio_policy", std::string("fit")}}),
                        two)),
      HasSubstr("keep_aspect_ratio_policy"));
  EXPECT_THAT(Error(ResizeSizes(Attrs({{"axes", std::vector<int64_t>{2, 3}}, {"antialias", int64_t{2}}}), two)),
              HasSubstr("antialias must be 0 or 1"));
  const ir::Tensor negative = I64({2}, {-1, 4});
  EXPECT_THAT(Error(ResizeSizes(Attrs({{"axes", std::vector<int64_t>{2, 3}}}), negative)), HasSubstr("negative"));
}

}  // namespace
}  // namespace kernels::cpu
