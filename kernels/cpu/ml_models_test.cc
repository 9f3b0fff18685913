// The ai.onnx.ml model ops and feature transforms on malformed attributes and inputs (their values
// are checked against ONNX Runtime by models/sklearn_ml_ops in tests/models), and string tensors
// through the element-moving ops (kernels::cpu::RunNode runs them on indices).
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
using ::testing::HasSubstr;

// Tree 0: node 0 (x0 <= 0) -> node 1, else node 2; nodes 1 and 2 leaves unless `modes` says not.
ir::Attributes Regressor(std::vector<int64_t> tree_ids, std::vector<std::string> modes, std::vector<int64_t> true_ids) {
  return Attrs({{"nodes_treeids", std::move(tree_ids)},
                {"nodes_nodeids", std::vector<int64_t>{0, 1, 2}},
                {"nodes_featureids", std::vector<int64_t>{0, 0, 0}},
                {"nodes_values", std::vector<float>{0, 0, 0}},
                {"nodes_modes", std::move(modes)},
                {"nodes_truenodeids", std::move(true_ids)},
                {"nodes_falsenodeids", std::vector<int64_t>{2, 0, 0}},
                {"target_treeids", std::vector<int64_t>{0, 0}},
                {"target_nodeids", std::vector<int64_t>{1, 2}},
                {"target_ids", std::vector<int64_t>{0, 0}},
                {"target_weights", std::vector<float>{1, 2}},
                {"n_targets", int64_t{1}}});
}

const std::vector<std::string> kLeaves = {"BRANCH_LEQ", "LEAF", "LEAF"};

TEST(TreeEnsembleRegressorTest, WalksToLeaves) {
  ir::Tensor x = F32({2, 1}, {-1, 1});
  auto out =
      RunNode(MakeNode("ai.onnx.ml.TreeEnsembleRegressor", 1, Regressor({0, 0, 0}, kLeaves, {1, 0, 0}), 3), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(test_tensors::Values<float>((*out)[0]), ::testing::ElementsAre(1, 2));
}

TEST(TreeEnsembleRegressorTest, MalformedTreesAreErrors) {
  ir::Tensor x = F32({1, 1}, {-1});
  auto run = [&](ir::Attributes attrs) {
    return Error(RunNode(MakeNode("ai.onnx.ml.TreeEnsembleRegressor", 1, std::move(attrs), 3), {&x}));
  };
  // Node 1 is a branch back to node 0: the walk must stop.
  EXPECT_THAT(run(Regressor({0, 0, 0}, {"BRANCH_LEQ", "BRANCH_LEQ", "LEAF"}, {1, 0, 0})), HasSubstr("form a cycle"));
  EXPECT_THAT(run(Regressor({0, 0, 0}, kLeaves, {5, 0, 0})), HasSubstr("links to node 5, which is not another node"));
  EXPECT_THAT(run(Regressor({0, 0, 0}, kLeaves, {0, 0, 0})), HasSubstr("links to node 0, which is not another node"));
  EXPECT_THAT(run(Regressor({0, 1, 0}, kLeaves, {1, 0, 0})), HasSubstr("tree 0's nodes are not listed together"));
  EXPECT_THAT(run(Regressor({0, 0, 0}, {"BRANCH_LEQ", "LEAF", "TWIG"}, {1, 0, 0})), HasSubstr("unknown nodes_modes"));
  ir::Attributes bad_target = Regressor({0, 0, 0}, kLeaves, {1, 0, 0});
  bad_target.Set("target_ids", std::vector<int64_t>{0, 3});
  EXPECT_THAT(run(bad_target), HasSubstr("target_ids holds 3, outside the 1 outputs"));
  ir::Attributes bad_post = Regressor({0, 0, 0}, kLeaves, {1, 0, 0});
  bad_post.Set("post_transform", std::string("SIGMOID"));
  EXPECT_THAT(run(bad_post), HasSubstr("unknown post_transform 'SIGMOID'"));
  ir::Attributes far_feature = Regressor({0, 0, 0}, kLeaves, {1, 0, 0});
  far_feature.Set("nodes_featureids", std::vector<int64_t>{4, 0, 0});
  EXPECT_THAT(run(far_feature), HasSubstr("reads feature 4; X has 1"));
}

TEST(SvmClassifierTest, FeatureCountAndShapesAreChecked) {
  const ir::Attributes attrs = Attrs({{"vectors_per_class", std::vector<int64_t>{1, 1}},
                                      {"support_vectors", std::vector<float>{0, 1, 1, 0}},
                                      {"coefficients", std::vector<float>{1, -1}},
                                      {"rho", std::vector<float>{0}},
                                      {"classlabels_ints", std::vector<int64_t>{0, 1}}});
  ir::Tensor three = F32({1, 3}, {1, 2, 3});
  EXPECT_THAT(Error(RunNode(MakeNode("ai.onnx.ml.SVMClassifier", 2, attrs, 3), {&three})),
              HasSubstr("X has 3 features; the model has 2"));
  ir::Attributes short_coefficients = attrs;
  short_coefficients.Set("coefficients", std::vector<float>{1});
  ir::Tensor two = F32({1, 2}, {1, 2});
  EXPECT_THAT(Error(RunNode(MakeNode("ai.onnx.ml.SVMClassifier", 2, short_coefficients, 3), {&two})),
              HasSubstr("coefficients, rho or prob_a do not match"));
}

TEST(OneHotEncoderTest, UnknownValueIsAnErrorOnlyWithZerosOff) {
  ir::Attributes attrs = Attrs({{"cats_int64s", std::vector<int64_t>{1, 2}}, {"zeros", int64_t{0}}});
  ir::Tensor x = I64({2}, {2, 7});
  EXPECT_THAT(Error(RunNode(MakeNode("ai.onnx.ml.OneHotEncoder", 1, attrs, 1), {&x})),
              HasSubstr("element 1 is not a category"));
  attrs.Set("zeros", int64_t{1});
  auto out = RunNode(MakeNode("ai.onnx.ml.OneHotEncoder", 1, attrs, 1), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(test_tensors::Values<float>((*out)[0]), ::testing::ElementsAre(0, 1, 0, 0));
}

TEST(StringMovesTest, ConcatGatherAndPadMoveStrings) {
  ir::Tensor a = ir::Tensor::FromStrings({"a", "b"}), c = ir::Tensor::FromStrings({"c"});
  auto joined = RunNode(MakeNode("Concat", 1, Attrs({{"axis", int64_t{0}}})), {&a, &c});
  ASSERT_TRUE(joined.ok()) << joined.status();
  ASSERT_EQ((*joined)[0].dtype(), ir::DType::kString);
  EXPECT_THAT(std::vector<std::string>((*joined)[0].strings(), (*joined)[0].strings() + 3),
              ::testing::ElementsAre("a", "b", "c"));
  ir::Tensor picks = I64({3}, {2, 2, 0});
  auto gathered = RunNode(MakeNode("Gather", 1), {&(*joined)[0], &picks});
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  EXPECT_THAT(std::vector<std::string>((*gathered)[0].strings(), (*gathered)[0].strings() + 3),
              ::testing::ElementsAre("c", "c", "a"));
  // Pad's default value for strings is the empty string.
  ir::Tensor pads = I64({2}, {1, 0});
  auto padded = RunNode(MakeNode("Pad", 1), {&c, &pads});
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_THAT(std::vector<std::string>((*padded)[0].strings(), (*padded)[0].strings() + 2),
              ::testing::ElementsAre("", "c"));
}

}  // namespace
}  // namespace kernels::cpu
