// The ai.onnx.ml ops beyond their conformance cases: LabelEncoder-1's classes_strings both ways and
// float keys with NaN, ArrayFeatureExtractor's 1-D form and out-of-range indices, TreeEnsemble's
// aggregates and the errors of malformed trees (a cycle, a link past the nodes), the map forms ONNX
// Runtime's Python API cannot feed (CastMap and DictVectorizer over string values; tests/ml_maps has
// the others against ORT). Expected values are worked out by hand from the specs.
#include <cmath>
#include <limits>

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
using test_tensors::MakeNode;
using test_tensors::Values;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(LabelEncoderTest, ClassesStringsMapStringsToIndicesAndBack) {
  const ir::Attributes attrs = Attrs({{"classes_strings", std::vector<std::string>{"a", "b", "c"}},
                                      {"default_int64", int64_t{-7}},
                                      {"default_string", std::string("none")}});
  const ir::Node node = MakeNode("ai.onnx.ml.LabelEncoder", 1, attrs, 1);
  ir::Tensor words = ir::Tensor::FromStrings({"c", "x", "a"});
  auto out = RunNode(node, {&words});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(2, -7, 0));
  ir::Tensor indices = I64({3}, {1, 5, 0});
  out = RunNode(node, {&indices});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].strings()[0], "b");
  EXPECT_EQ((*out)[0].strings()[1], "none");
  EXPECT_EQ((*out)[0].strings()[2], "a");
}

TEST(LabelEncoderTest, FloatKeysMatchNaNAndDefaultToMinusZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ir::Node node = MakeNode(
      "ai.onnx.ml.LabelEncoder", 1,
      Attrs({{"keys_floats", std::vector<float>{1.5f, nan}}, {"values_floats", std::vector<float>{10.0f, 20.0f}}}), 2);
  ir::Tensor x = F32({3}, {nan, 1.5f, 2.0f});
  auto out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> y = Values<float>((*out)[0]);
  EXPECT_THAT(y, ElementsAre(20.0f, 10.0f, 0.0f));
  EXPECT_TRUE(std::signbit(y[2]));
}

TEST(ArrayFeatureExtractorTest, OneDimensionalInputGivesOneRowAndBadIndicesAreErrors) {
  const ir::Node node = MakeNode("ai.onnx.ml.ArrayFeatureExtractor", 1, {}, 1);
  ir::Tensor x = F32({4}, {1, 2, 3, 4}), indices = I64({2}, {3, 0});
  auto out = RunNode(node, {&x, &indices});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(4, 1));
  ir::Tensor past = I64({1}, {4});
  EXPECT_THAT(Error(RunNode(node, {&x, &past})), HasSubstr("index 4 is outside X's last axis of 4"));
}

// One tree: node 0 (x0 <= 1) -> leaf 0 (weight 3, target 0), else node 1 (x0 < 5) -> leaf 1 (weight
// 4, target 1), else leaf 2 (weight -2, target 0); with `roots` listing it once or more.
ir::Attributes Tree(std::vector<int64_t> roots, int64_t aggregate, std::vector<int64_t> false_ids = {1, 2}) {
  ir::Tensor modes = test_tensors::Make<uint8_t>(ir::DType::kUint8, {2}, {0, 1});
  return Attrs({{"nodes_splits", F32({2}, {1, 5})},
                {"nodes_modes", modes},
                {"nodes_featureids", std::vector<int64_t>{0, 0}},
                {"nodes_truenodeids", std::vector<int64_t>{0, 1}},
                {"nodes_trueleafs", std::vector<int64_t>{1, 1}},
                {"nodes_falsenodeids", std::move(false_ids)},
                {"nodes_falseleafs", std::vector<int64_t>{0, 1}},
                {"leaf_weights", F32({3}, {3, 4, -2})},
                {"leaf_targetids", std::vector<int64_t>{0, 1, 0}},
                {"tree_roots", std::move(roots)},
                {"n_targets", int64_t{2}},
                {"aggregate_function", aggregate}});
}

TEST(TreeEnsembleTest, AggregatesOverTrees) {
  ir::Tensor x = F32({3, 1}, {0, 3, 9});
  auto sum = RunNode(MakeNode("ai.onnx.ml.TreeEnsemble", 1, Tree({0, 0}, 1), 5), {&x});
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_THAT(Values<float>((*sum)[0]), ElementsAre(6, 0, 0, 8, -4, 0));
  auto average = RunNode(MakeNode("ai.onnx.ml.TreeEnsemble", 1, Tree({0, 0}, 0), 5), {&x});
  ASSERT_TRUE(average.ok()) << average.status();
  EXPECT_THAT(Values<float>((*average)[0]), ElementsAre(3, 0, 0, 4, -2, 0));
}

TEST(TreeEnsembleTest, MalformedTreesAreErrors) {
  ir::Tensor x = F32({1, 1}, {9});
  // Node 1's false branch back to node 1: a cycle the walk must not follow forever.
  ir::Attributes cycle = Tree({0}, 1, {1, 1});
  cycle.Set("nodes_falseleafs", std::vector<int64_t>{0, 0});
  EXPECT_THAT(Error(RunNode(MakeNode("ai.onnx.ml.TreeEnsemble", 1, cycle, 5), {&x})), HasSubstr("form a cycle"));
  EXPECT_THAT(Error(RunNode(MakeNode("ai.onnx.ml.TreeEnsemble", 1, Tree({0}, 1, {7, 2}), 5), {&x})),
              HasSubstr("node 0 points to node 7, outside the 2 there are"));
  EXPECT_THAT(Error(RunNode(MakeNode("ai.onnx.ml.TreeEnsemble", 1, Tree({0}, 9), 5), {&x})),
              HasSubstr("aggregate_function 0-3"));
}

ir::Tensor IntKeyMap(std::vector<int64_t> keys, std::vector<std::string> values) {
  return *ir::Tensor::Map(ir::Tensor::FromInt64s(std::move(keys)), ir::Tensor::FromStrings(std::move(values)));
}

TEST(CastMapTest, StringValuesReadAsNumbersInKeyOrder) {
  ir::Tensor map = IntKeyMap({5, 2, 9}, {"1.5", "2e3", " -7.25xyz"});
  auto out = RunNode(MakeNode("ai.onnx.ml.CastMap", 1, {}, 1), {&map});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2000.0f, 1.5f, -7.25f));  // keys 2, 5, 9 (std::stof)
  out = RunNode(MakeNode("ai.onnx.ml.CastMap", 1, Attrs({{"cast_to", std::string("TO_INT64")}}), 1), {&map});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(2, 1, -7));  // std::stoll stops at '.' / 'e'
}

TEST(CastMapTest, BadValuesKeysAndAttributesAreErrors) {
  ir::Tensor words = IntKeyMap({1}, {"abc"});
  EXPECT_THAT(Error(RunNode(MakeNode("ai.onnx.ml.CastMap", 1, {}, 1), {&words})), HasSubstr("cannot read 'abc'"));
  ir::Tensor negative = *ir::Tensor::Map(ir::Tensor::FromInt64s({-1, 2}), F32({2}, {1, 2}));
  const ir::Attributes sparse = Attrs({{"map_form", std::string("SPARSE")}, {"max_map", int64_t{3}}});
  EXPECT_THAT(Error(RunNode(MakeNode("ai.onnx.ml.CastMap", 1, sparse, 1), {&negative})), HasSubstr("no negative key"));
  EXPECT_THAT(
      Error(RunNode(MakeNode("ai.onnx.ml.CastMap", 1, Attrs({{"cast_to", std::string("TO_DOUBLE")}}), 1), {&negative})),
      HasSubstr("TO_FLOAT, TO_STRING or TO_INT64"));
  ir::Tensor tensor = F32({2}, {1, 2});
  EXPECT_THAT(Error(RunNode(MakeNode("ai.onnx.ml.CastMap", 1, {}, 1), {&tensor})), HasSubstr("takes a map"));
}

TEST(CastMapTest, FloatsPastInt64AreTheLowestInt64) {
  ir::Tensor map = *ir::Tensor::Map(ir::Tensor::FromInt64s({1, 2, 3}), F32({3}, {1e20f, -2.5f, NAN}));
  auto out = RunNode(MakeNode("ai.onnx.ml.CastMap", 1, Attrs({{"cast_to", std::string("TO_INT64")}}), 1), {&map});
  ASSERT_TRUE(out.ok()) << out.status();
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(lowest, -2, lowest));
}

TEST(DictVectorizerTest, IntKeysToStringsWithEmptyForMissingKeys) {
  ir::Tensor map = IntKeyMap({3, 1, 3}, {"x", "y", "z"});  // a repeated key keeps its last value
  auto out =
      RunNode(MakeNode("ai.onnx.ml.DictVectorizer", 1, Attrs({{"int64_vocabulary", std::vector<int64_t>{1, 2, 3}}}), 1),
              {&map});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ((*out)[0].strings()[0], "y");
  EXPECT_EQ((*out)[0].strings()[1], "");
  EXPECT_EQ((*out)[0].strings()[2], "z");
}

}  // namespace
}  // namespace kernels::cpu
