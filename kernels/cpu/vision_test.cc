// AffineGrid (opset 20) beyond ONNX's four conformance cases: the grid's point positions for both
// align_corners settings (a single point included), a 3-D translation, the output shape inferred
// without size's values, and the errors for inputs that do not fit each other.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "kernels/cpu/run_node.h"
#include "kernels/cpu/test_tensors.h"
#include "ops/op_def.h"

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

ir::Node AffineGridNode(bool align_corners) {
  return MakeNode("AffineGrid", 1, Attrs({{"align_corners", int64_t{align_corners ? 1 : 0}}}), 20);
}

// The identity theta shows the positions: (x, y) per point of [H, W], x along W.
TEST(AffineGridTest, IdentityGivesThePositionsOfBothConventions) {
  ir::Tensor theta = F32({1, 2, 3}, {1, 0, 0, 0, 1, 0}), size = I64({4}, {1, 1, 2, 3});
  auto out = RunNode(AffineGridNode(false), {&theta, &size});  // pixel centres: -1 + (2i + 1) / n
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), std::vector<int64_t>({1, 2, 3, 2}));
  const float t = 2.0f / 3;
  EXPECT_THAT(
      Values<float>((*out)[0]),
      Pointwise(FloatNear(1e-6f), std::vector<float>({-t, -0.5f, 0, -0.5f, t, -0.5f, -t, 0.5f, 0, 0.5f, t, 0.5f})));
  out = RunNode(AffineGridNode(true), {&theta, &size});  // corner centres: -1 + 2i / (n - 1)
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              Pointwise(FloatNear(1e-6f), std::vector<float>({-1, -1, 0, -1, 1, -1, -1, 1, 0, 1, 1, 1})));
  ir::Tensor single = I64({4}, {1, 1, 1, 1});  // one point: -1 with align_corners (ONNX's reference), else 0
  out = RunNode(AffineGridNode(true), {&theta, &single});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(-1, -1));
  out = RunNode(AffineGridNode(false), {&theta, &single});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 0));
}

// 3-D: (x, y, z) per point of [D, H, W]; theta's last column translates, its rows permute.
TEST(AffineGridTest, ThreeDimensionalTranslationAndPermutation) {
  ir::Tensor theta = F32({2, 3, 4}, {1, 0, 0, 10,  //
                                     0, 1, 0, 20,  //
                                     0, 0, 1, 30,  //
                                     0, 0, 1, 0,   // second matrix: (z, x, y)
                                     1, 0, 0, 0,   //
                                     0, 1, 0, 0});
  ir::Tensor size = I64({5}, {2, 3, 2, 1, 2});
  auto out = RunNode(AffineGridNode(true), {&theta, &size});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), std::vector<int64_t>({2, 2, 1, 2, 3}));
  // Points (d, h, w) in order (0,0,0) (0,0,1) (1,0,0) (1,0,1): x = -1, 1; y = -1; z = -1, 1.
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAreArray(std::vector<float>({9,  19, 29, 11, 19, 29,  //
                                                                             9,  19, 31, 11, 19, 31,  //
                                                                             -1, -1, -1, -1, 1,  -1,  //
                                                                             1,  -1, -1, 1,  1,  -1})));
}

TEST(AffineGridTest, ShapeWithoutSizeValues) {
  const ir::Node node = AffineGridNode(false);
  const ir::TensorType theta{ir::DType::kFloat16, ir::Shape{ir::Dim(4), ir::Dim(3), ir::Dim(4)}};
  const ir::TensorType size{ir::DType::kInt64, ir::Shape{ir::Dim(5)}};
  ops::InferContext ctx{node, {&theta, &size}, {nullptr, nullptr}};
  auto types = ops::InferTypes(*ops::FindOpDef("AffineGrid"), ctx);
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].ToString(), "float16[4,?,?,?,3]");
  const ir::TensorType size4{ir::DType::kInt64, ir::Shape{ir::Dim(4)}};
  ops::InferContext bad{node, {&theta, &size4}, {nullptr, nullptr}};
  EXPECT_THAT(ops::InferTypes(*ops::FindOpDef("AffineGrid"), bad).status().message(),
              HasSubstr("does not fit 2-D sizes"));
}

TEST(AffineGridTest, InputsThatDoNotFitAreErrors) {
  ir::Tensor theta = F32({1, 2, 3}, {}), size5 = I64({5}, {1, 1, 2, 2, 2}), other_n = I64({4}, {2, 1, 2, 2});
  EXPECT_THAT(Error(RunNode(AffineGridNode(false), {&theta, &size5})), HasSubstr("does not fit 3-D sizes"));
  EXPECT_THAT(Error(RunNode(AffineGridNode(false), {&theta, &other_n})), HasSubstr("N = 2 but theta holds 1"));
  ir::Tensor negative = I64({4}, {1, 1, -2, 2}), three = I64({3}, {1, 1, 2});
  EXPECT_THAT(Error(RunNode(AffineGridNode(false), {&theta, &negative})), HasSubstr("negative"));
  EXPECT_THAT(Error(RunNode(AffineGridNode(false), {&theta, &three})), HasSubstr("[4] (N, C, H, W) or [5]"));
  const ir::Node bad_flag = MakeNode("AffineGrid", 1, Attrs({{"align_corners", int64_t{2}}}), 20);
  ir::Tensor size4 = I64({4}, {1, 1, 2, 2});
  EXPECT_THAT(Error(RunNode(bad_flag, {&theta, &size4})), HasSubstr("must be 0 or 1"));
}

}  // namespace
}  // namespace kernels::cpu
