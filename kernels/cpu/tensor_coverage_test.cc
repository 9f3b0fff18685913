// Edge cases and bad input of the generator, selection and gather/scatter ops (ops/tensor_gen.cc,
// tensor_select.cc, tensor_scatter.cc and their CPU kernels), run as the CPU executor runs a node:
// concrete inference, outputs allocated where the size is known, then the kernel. The conformance
// suite covers the ordinary cases; these cover what a fuzzer or a hostile model sends.
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

using test_tensors::Error;
using test_tensors::F32;
using test_tensors::I64;
using test_tensors::Make;
using test_tensors::MakeNode;
using test_tensors::Values;

ir::Tensor I64Scalar(int64_t v) { return I64({}, {v}); }

// ---- Range ----

TEST(RangeTest, NegativeDeltaAndEmpty) {
  ir::Tensor s = I64Scalar(10), l = I64Scalar(1), d = I64Scalar(-3);
  auto out = RunNode(MakeNode("Range", 1), {&s, &l, &d});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(10, 7, 4));
  ir::Tensor up = I64Scalar(3);
  out = RunNode(MakeNode("Range", 1), {&s, &l, &up});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].num_elements(), 0);
}

TEST(RangeTest, RefusesZeroDeltaHugeCountsAndInfinity) {
  ir::Tensor zero = I64Scalar(0), big = I64Scalar(std::numeric_limits<int64_t>::max()), one = I64Scalar(1);
  ir::Tensor low = I64Scalar(std::numeric_limits<int64_t>::min());
  EXPECT_THAT(Error(RunNode(MakeNode("Range", 1), {&zero, &big, &zero})), HasSubstr("delta is 0"));
  EXPECT_THAT(Error(RunNode(MakeNode("Range", 1), {&low, &big, &one})), HasSubstr("more than a tensor may hold"));
  ir::Tensor f0 = F32({}, {0}), finf = F32({}, {INFINITY}), f1 = F32({}, {1}), tiny = F32({}, {1e-30f});
  EXPECT_THAT(Error(RunNode(MakeNode("Range", 1), {&f0, &finf, &f1})), HasSubstr("finite"));
  EXPECT_THAT(Error(RunNode(MakeNode("Range", 1), {&f0, &f1, &tiny})), HasSubstr("elements"));
}

// ---- ConstantOfShape, Tile, EyeLike, Trilu, OneHot ----

TEST(GeneratorTest, ConstantOfShapeRefusesNegativeDims) {
  ir::Tensor shape = I64({2}, {2, -1});
  EXPECT_THAT(Error(RunNode(MakeNode("ConstantOfShape", 1), {&shape})), HasSubstr("negative dim"));
}

TEST(GeneratorTest, TileRefusesHugeOutputs) {
  ir::Tensor x = F32({2}, {1, 2}), reps = I64({1}, {int64_t{1} << 62});
  EXPECT_THAT(Error(RunNode(MakeNode("Tile", 1), {&x, &reps})), HasSubstr("too large"));
  ir::Tensor neg = I64({1}, {-1});
  EXPECT_THAT(Error(RunNode(MakeNode("Tile", 1), {&x, &neg})), HasSubstr("negative repeat"));
}

TEST(GeneratorTest, ExtremeDiagonalsDoNotOverflow) {
  ir::Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  ir::Attributes attrs;
  attrs.Set("k", std::numeric_limits<int64_t>::min());
  auto eye = RunNode(MakeNode("EyeLike", 1, attrs), {&x});
  ASSERT_TRUE(eye.ok()) << eye.status();
  EXPECT_THAT(Values<float>((*eye)[0]), ElementsAre(0, 0, 0, 0, 0, 0));
  ir::Tensor k = I64Scalar(std::numeric_limits<int64_t>::max());
  auto tri = RunNode(MakeNode("Trilu", 1), {&x, &k});
  ASSERT_TRUE(tri.ok()) << tri.status();
  EXPECT_THAT(Values<float>((*tri)[0]), ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST(GeneratorTest, OneHotRefusesBadDepth) {
  ir::Tensor idx = I64({2}, {0, 5}), values = F32({2}, {0, 1});
  for (float depth : {0.0f, -3.0f, NAN, 1e30f}) {
    ir::Tensor d = F32({}, {depth});
    EXPECT_THAT(Error(RunNode(MakeNode("OneHot", 1), {&idx, &d, &values})), HasSubstr("depth")) << depth;
  }
  ir::Tensor d = F32({}, {3});
  auto out = RunNode(MakeNode("OneHot", 1), {&idx, &d, &values});  // index 5 is out of range: all off
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 0, 0, 0, 0, 0));
}

// ---- TopK, NonZero, Unique, Compress ----

TEST(SelectTest, TopKTiesTakeTheLowerIndex) {
  ir::Tensor x = F32({5}, {1, 3, 3, NAN, 1}), k = I64({1}, {3});
  auto out = RunNode(MakeNode("TopK", 2), {&x, &k});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(3, 1, 2));  // NaN orders above numbers
  ir::Attributes smallest;
  smallest.Set("largest", int64_t{0});
  out = RunNode(MakeNode("TopK", 2, smallest), {&x, &k});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(0, 4, 1));
}

TEST(SelectTest, TopKRefusesBadK) {
  ir::Tensor x = F32({3}, {1, 2, 3}), big = I64({1}, {4}), neg = I64({1}, {-1});
  EXPECT_THAT(Error(RunNode(MakeNode("TopK", 2), {&x, &big})), HasSubstr("larger than axis"));
  EXPECT_THAT(Error(RunNode(MakeNode("TopK", 2), {&x, &neg})), HasSubstr("negative"));
  ir::Tensor scalar = F32({}, {1}), one = I64({1}, {1});
  EXPECT_THAT(Error(RunNode(MakeNode("TopK", 2), {&scalar, &one})), HasSubstr("axis"));
}

TEST(SelectTest, NonZeroOfAScalarAndOfNothing) {
  ir::Tensor scalar = F32({}, {2}), empty = F32({0, 3}, {});
  auto out = RunNode(MakeNode("NonZero", 1), {&scalar});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].shape(), ElementsAre(1, 1));
  out = RunNode(MakeNode("NonZero", 1), {&empty});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].shape(), ElementsAre(2, 0));
}

TEST(SelectTest, UniqueInFirstOccurrenceOrder) {
  ir::Tensor x = F32({6}, {2, 1, 1, 3, 4, 3});
  ir::Attributes attrs;
  attrs.Set("sorted", int64_t{0});
  auto out = RunNode(MakeNode("Unique", 4, attrs), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 1, 3, 4));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(Values<int64_t>((*out)[2]), ElementsAre(0, 1, 1, 2, 3, 2));
  EXPECT_THAT(Values<int64_t>((*out)[3]), ElementsAre(1, 2, 2, 1));
}

TEST(SelectTest, UniqueOfEmptySlices) {
  ir::Tensor x = F32({3, 0}, {});
  ir::Attributes attrs;
  attrs.Set("axis", int64_t{0});
  auto out = RunNode(MakeNode("Unique", 4, attrs), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].shape(), ElementsAre(1, 0));
  EXPECT_THAT(Values<int64_t>((*out)[3]), ElementsAre(3));
}

TEST(SelectTest, CompressIgnoresConditionPastTheAxis) {
  ir::Tensor x = F32({2}, {5, 6});
  ir::Tensor cond = Make<uint8_t>(ir::DType::kBool, {4}, {0, 1, 1, 1});
  ir::Attributes attrs;
  attrs.Set("axis", int64_t{0});
  auto out = RunNode(MakeNode("Compress", 1, attrs), {&x, &cond});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(6));
}

// ---- Gather/Scatter ----

TEST(ScatterTest, IndicesOutOfRangeAreRefused) {
  ir::Tensor data = F32({2, 2}, {1, 2, 3, 4});
  ir::Tensor bad = I64({1, 1}, {2}), wide = I64({1, 3}, {0, 0, 0});
  EXPECT_THAT(Error(RunNode(MakeNode("GatherElements", 1), {&data, &bad})), HasSubstr("out of range"));
  EXPECT_THAT(Error(RunNode(MakeNode("GatherElements", 1), {&data, &wide})), HasSubstr("exceeds data dim"));
  ir::Tensor tuple = I64({1, 2}, {0, -3}), upd = F32({1}, {9});
  EXPECT_THAT(Error(RunNode(MakeNode("ScatterND", 1), {&data, &tuple, &upd})), HasSubstr("out of range"));
  EXPECT_THAT(Error(RunNode(MakeNode("GatherND", 1), {&data, &tuple})), HasSubstr("out of range"));
}

TEST(ScatterTest, ReductionsAndNegativeIndices) {
  ir::Tensor data = F32({1, 3}, {1, 5, 3}), idx = I64({1, 2}, {-1, -1}), upd = F32({1, 2}, {4, 2});
  ir::Attributes attrs;
  attrs.Set("axis", int64_t{1});
  attrs.Set("reduction", std::string("max"));
  auto out = RunNode(MakeNode("ScatterElements", 1, attrs), {&data, &idx, &upd});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 5, 4));
  attrs.Set("reduction", std::string("mean"));
  EXPECT_THAT(Error(RunNode(MakeNode("ScatterElements", 1, attrs), {&data, &idx, &upd})), HasSubstr("reduction"));
}

TEST(ScatterTest, IntegerAddWraps) {
  ir::Tensor data = I64({1}, {std::numeric_limits<int64_t>::max()}), idx = I64({1, 1}, {0}), upd = I64({1}, {1});
  ir::Attributes attrs;
  attrs.Set("reduction", std::string("add"));
  auto out = RunNode(MakeNode("ScatterND", 1, attrs), {&data, &idx, &upd});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(std::numeric_limits<int64_t>::min()));
}

TEST(ScatterTest, GatherNDBatchDims) {
  ir::Tensor data = F32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), idx = I64({2, 1}, {1, 0});
  ir::Attributes attrs;
  attrs.Set("batch_dims", int64_t{1});
  auto out = RunNode(MakeNode("GatherND", 1, attrs), {&data, &idx});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 3, 4, 5));
  attrs.Set("batch_dims", int64_t{2});
  EXPECT_THAT(Error(RunNode(MakeNode("GatherND", 1, attrs), {&data, &idx})), HasSubstr("batch_dims"));
}

TEST(ScatterTest, ReverseSequenceRefusesLongSequences) {
  ir::Tensor x = F32({2, 2}, {1, 2, 3, 4}), lens = I64({2}, {1, 3});
  EXPECT_THAT(Error(RunNode(MakeNode("ReverseSequence", 1), {&x, &lens})), HasSubstr("out of range"));
}

// ---- MaxUnpool, Col2Im, CenterCropPad ----

TEST(SpatialTest, Col2ImOfTheOnnxExample) {
  std::vector<float> v = {1, 6, 11, 16, 21, 2, 7, 12, 17, 22, 3, 8, 13, 18, 23, 4, 9, 14, 19, 24, 5, 0, 15, 20, 25};
  ir::Tensor x = F32({1, 5, 5}, v), image = I64({2}, {5, 5}), block = I64({2}, {1, 5});
  auto out = RunNode(MakeNode("Col2Im", 1), {&x, &image, &block});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].shape(), ElementsAre(1, 1, 5, 5));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25));
}

TEST(SpatialTest, Col2ImSumsOverlapsAndRefusesBadGeometry) {
  // 1-D image of 3 with blocks of 2 at stride 1: positions 0 and 1 overlap at pixel 1.
  ir::Tensor x = F32({1, 2, 2}, {1, 2, 10, 20}), image = I64({1}, {3}), block = I64({1}, {2});
  auto out = RunNode(MakeNode("Col2Im", 1), {&x, &image, &block});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 12, 20));
  ir::Tensor big = I64({1}, {4});
  EXPECT_THAT(Error(RunNode(MakeNode("Col2Im", 1), {&x, &image, &big})), HasSubstr("does not fit"));
}

TEST(SpatialTest, CenterCropPadCropsAndPads) {
  ir::Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6}), shape = I64({2}, {4, 1});
  auto out = RunNode(MakeNode("CenterCropPad", 1), {&x, &shape});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].shape(), ElementsAre(4, 1));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 2, 5, 0));
  ir::Attributes attrs;
  attrs.Set("axes", std::vector<int64_t>{-1});
  ir::Tensor wide = I64({1}, {6});
  out = RunNode(MakeNode("CenterCropPad", 1, attrs), {&x, &wide});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0));
}

TEST(SpatialTest, MaxUnpoolRefusesOutOfRangeIndices) {
  ir::Tensor x = F32({1, 1, 1, 1}, {7}), idx = I64({1, 1, 1, 1}, {4});
  ir::Attributes attrs;
  attrs.Set("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_THAT(Error(RunNode(MakeNode("MaxUnpool", 1, attrs), {&x, &idx})), HasSubstr("out of range"));
}

}  // namespace
}  // namespace kernels::cpu
