// DeformConv (ops/deform_conv.cc and kernels/cpu/deform_conv.cc), run as the CPU executor runs a
// node, on values derived by hand from the spec: zero offsets give Conv, fractional offsets
// interpolate linearly with 0 outside the image, the mask scales each tap, offset groups pick the
// offsets of their channels; and bad attributes, shapes and dtypes give clear errors, from the
// inference and from the kernel alone.
#include "ops/deform_conv.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "ir/half.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/run_node.h"
#include "kernels/cpu/test_tensors.h"
#include "ops/op_def.h"

namespace kernels::cpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using test_tensors::Attrs;
using test_tensors::Error;
using test_tensors::F32;
using test_tensors::MakeNode;
using test_tensors::Values;

ir::Node Deform(ir::Attributes attrs = {}) { return MakeNode("DeformConv", 1, std::move(attrs), 22); }

// Zero offsets: a plain 2x2 convolution of 1..9 with a kernel of ones.
TEST(DeformConvTest, ZeroOffsetsAreConv) {
  ir::Tensor x = F32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), w = F32({1, 1, 2, 2}, {1, 1, 1, 1});
  ir::Tensor offset = F32({1, 8, 2, 2}, {});
  auto out = RunNode(Deform(), {&x, &w, &offset});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(12, 16, 24, 28));
}

// 1-D, kernel 1: samples at -0.5, 0.75, 4.5 and 3.5 of [10, 20, 30, 40] read half of x[0],
// 0.25 x[0] + 0.75 x[1], nothing, and half of x[3] (the pixels past either end are 0).
TEST(DeformConvTest, FractionalOffsetsInterpolateWithZerosOutside) {
  ir::Tensor x = F32({1, 1, 4}, {10, 20, 30, 40}), w = F32({1, 1, 1}, {1});
  ir::Tensor offset = F32({1, 1, 4}, {-0.5f, -0.25f, 2.5f, 0.5f});
  auto out = RunNode(Deform(), {&x, &w, &offset});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(5, 17.5, 0, 20));
}

// Two channels in two offset groups, 1x1 kernel: y = B + w0 * x0 * mask0 + w1 * x1 * mask1; then
// the second group's offsets move its tap off the image, which drops channel 1's term.
TEST(DeformConvTest, MaskBiasAndOffsetGroups) {
  ir::Tensor x = F32({1, 2, 1, 1}, {3, 5}), w = F32({1, 2, 1, 1}, {1, 2}), b = F32({1}, {100});
  ir::Tensor mask = F32({1, 2, 1, 1}, {0.5f, 2});
  ir::Tensor offset = F32({1, 4, 1, 1}, {});
  const ir::Node node = Deform(Attrs({{"offset_group", int64_t{2}}}));
  auto out = RunNode(node, {&x, &w, &offset, &b, &mask});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(121.5));
  offset = F32({1, 4, 1, 1}, {0, 0, 0, 5});  // group 1, tap 0: (dh, dw) = (0, 5)
  out = RunNode(node, {&x, &w, &offset, &b, &mask});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(101.5));
}

// group 2: each output channel sees only its own input channel.
TEST(DeformConvTest, Groups) {
  ir::Tensor x = F32({1, 2, 1, 2}, {1, 2, 3, 4}), w = F32({2, 1, 1, 1}, {2, 3});
  ir::Tensor offset = F32({1, 2, 1, 2}, {});
  auto out = RunNode(Deform(Attrs({{"group", int64_t{2}}})), {&x, &w, &offset});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 4, 9, 12));
}

TEST(DeformConvTest, NanOffsetGivesNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  ir::Tensor x = F32({1, 1, 3}, {1, 2, 3}), w = F32({1, 1, 1}, {1});
  ir::Tensor offset = F32({1, 1, 3}, {nan, inf, -inf});
  auto out = RunNode(Deform(), {&x, &w, &offset});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> y = Values<float>((*out)[0]);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0);
  EXPECT_EQ(y[2], 0);
}

TEST(DeformConvTest, Float16RunsThroughFloat32) {
  ir::Tensor x =
      test_tensors::Make(ir::DType::kFloat16, {1, 1, 2}, std::vector<ir::Half>{ir::Half(2.0f), ir::Half(4.0f)});
  ir::Tensor w = test_tensors::Make(ir::DType::kFloat16, {1, 1, 1}, std::vector<ir::Half>{ir::Half(1.0f)});
  ir::Tensor offset =
      test_tensors::Make(ir::DType::kFloat16, {1, 1, 2}, std::vector<ir::Half>{ir::Half(0.5f), ir::Half(0.0f)});
  auto out = RunNode(Deform(), {&x, &w, &offset});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dtype(), ir::DType::kFloat16);
  EXPECT_EQ(static_cast<float>((*out)[0].data<ir::Half>()[0]), 3.0f);
  EXPECT_EQ(static_cast<float>((*out)[0].data<ir::Half>()[1]), 4.0f);
}

TEST(DeformConvTest, BadAttributesAndShapes) {
  ir::Tensor x = F32({1, 2, 3, 3}, {}), w = F32({1, 2, 2, 2}, {}), offset = F32({1, 8, 2, 2}, {});
  EXPECT_THAT(Error(RunNode(Deform(Attrs({{"offset_group", int64_t{0}}})), {&x, &w, &offset})),
              HasSubstr("offset_group 0 outside"));
  EXPECT_THAT(Error(RunNode(Deform(Attrs({{"group", int64_t{-1}}})), {&x, &w, &offset})), HasSubstr("group -1"));
  EXPECT_THAT(Error(RunNode(Deform(Attrs({{"auto_pad", std::string("SAME_UPPER")}})), {&x, &w, &offset})),
              HasSubstr("no auto_pad"));
  ir::Tensor x3 = F32({1, 3, 3, 3}, {}), w3 = F32({1, 3, 2, 2}, {});
  EXPECT_THAT(Error(RunNode(Deform(Attrs({{"offset_group", int64_t{2}}})), {&x3, &w3, &offset})),
              HasSubstr("not divisible by offset_group 2"));
  ir::Tensor wrong_channels = F32({1, 4, 2, 2}, {});
  EXPECT_THAT(Error(RunNode(Deform(), {&x, &w, &wrong_channels})), HasSubstr("offset has shape [1,4,2,2]"));
  ir::Tensor wrong_extent = F32({1, 8, 3, 3}, {});
  EXPECT_THAT(Error(RunNode(Deform(), {&x, &w, &wrong_extent})), HasSubstr("offset has shape"));
  ir::Tensor mask = F32({1, 2, 2, 2}, {}), b = F32({2}, {});
  EXPECT_THAT(Error(RunNode(Deform(), {&x, &w, &offset, nullptr, &mask})),
              HasSubstr("mask has shape [1,2,2,2], expected [1,4,2,2]"));
  EXPECT_THAT(Error(RunNode(Deform(), {&x, &w, &offset, &b})), HasSubstr("B has shape"));
  ir::Tensor w_bad = F32({1, 3, 2, 2}, {});
  EXPECT_THAT(Error(RunNode(Deform(), {&x, &w_bad, &offset})), HasSubstr("channels"));
  ir::Tensor offset64 = *ir::Tensor::Create(ir::DType::kFloat64, {1, 8, 2, 2});
  EXPECT_THAT(Error(RunNode(Deform(), {&x, &w, &offset64})), HasSubstr("dtype"));
  ir::Tensor big_kernel = F32({1, 2, 4, 4}, {});
  EXPECT_THAT(Error(RunNode(Deform(), {&x, &big_kernel, &offset})), HasSubstr("exceeds the padded input"));
}

// The kernel checks shapes on its own too (a caller that skips the inference).
TEST(DeformConvTest, KernelChecksShapesItself) {
  const ir::Node node = Deform();
  ir::Tensor x = F32({1, 1, 3, 3}, {}), w = F32({1, 1, 2, 2}, {}), offset = F32({1, 6, 2, 2}, {});
  ir::Tensor y = F32({1, 1, 2, 2}, {});
  KernelContext ctx{node, {&x, &w, &offset}, {&y}};
  absl::Status s = FindKernel("DeformConv")(ctx);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("offset has shape [1,6,2,2], expected [1, 1 offset groups x 4 kernel taps x 2 spatial dims"));
  offset = F32({1, 8, 2, 2}, {});
  ir::Tensor wrong_y = F32({1, 1, 3, 3}, {});
  ctx.outputs = {&wrong_y};
  EXPECT_THAT(std::string(FindKernel("DeformConv")(ctx).message()), HasSubstr("Y"));
}

// The work bound: from shapes alone at inference (no tensors), and its arithmetic.
TEST(DeformConvTest, WorkIsBounded) {
  const ir::Node node = Deform();
  ir::TensorType x{ir::DType::kFloat32, ir::ShapeFromInts({64, 1024, 256, 256})};
  ir::TensorType w{ir::DType::kFloat32, ir::ShapeFromInts({1024, 1024, 3, 3})};
  ir::TensorType offset{ir::DType::kFloat32, ir::ShapeFromInts({64, 18, 254, 254})};
  ops::InferContext ctx{node, {&x, &w, &offset}, {nullptr, nullptr, nullptr}};
  absl::StatusOr<std::vector<ir::TensorType>> out = ops::FindOpDef("DeformConv")->infer(ctx);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("more than the limit"));
  EXPECT_TRUE(ops::CheckDeformConvWork(1, 2, 4, 1, 9, {10, 10}).ok());
  EXPECT_FALSE(ops::CheckDeformConvWork(1024, 1024, 1024, 1, 9, {1024, 1024}).ok());
  // Symbolic dims: offset's channels and Y's shape still follow.
  ir::TensorType xs{ir::DType::kFloat32, ir::Shape{ir::Dim::Symbol("N"), 1, 5, 5}};
  ir::TensorType ws{ir::DType::kFloat32, ir::ShapeFromInts({2, 1, 3, 3})};
  ir::TensorType os{ir::DType::kFloat32, ir::Shape{ir::Dim::Symbol("N"), 17, 3, 3}};
  ops::InferContext sym{node, {&xs, &ws, &os}, {nullptr, nullptr, nullptr}};
  EXPECT_THAT(std::string(ops::FindOpDef("DeformConv")->infer(sym).status().message()), HasSubstr("offset has shape"));
  os.shape = ir::Shape{ir::Dim::Symbol("N"), 18, 3, 3};
  out = ops::FindOpDef("DeformConv")->infer(sym);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ir::ShapeToString(*(*out)[0].shape), "[N,2,3,3]");
}

}  // namespace
}  // namespace kernels::cpu
