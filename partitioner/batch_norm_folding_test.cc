// BatchNormFolding: BN after Conv (any group, with or without bias) and after Gemm (transB, C
// forms) folds and computes the same outputs; BN whose producer output has another reader, is a
// graph output, has non-constant weights or parameters, or follows another op, stays. Per-channel
// constant Mul / Add / Sub / Div after a Conv fold the same way; other pointwise nodes stay.
#include "partitioner/batch_norm_folding.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using test::Attrs;
using test::GraphBuilder;
using test::RandomTensor;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr testing_util::Tolerance kFp32{1e-5, 1e-5};

// BatchNormalization(x) over `channels` with random constant parameters (var > 0).
ir::ValueId AddBatchNorm(GraphBuilder& b, const std::string& name, ir::ValueId x, int64_t channels, uint32_t seed) {
  ir::ValueId scale = b.Constant(name + "_scale", RandomTensor({channels}, seed, 0.5f, 1.5f));
  ir::ValueId bias = b.Constant(name + "_bias", RandomTensor({channels}, seed + 1));
  ir::ValueId mean = b.Constant(name + "_mean", RandomTensor({channels}, seed + 2));
  ir::ValueId var = b.Constant(name + "_var", RandomTensor({channels}, seed + 3, 0.1f, 2.0f));
  return b.Op(name, "BatchNormalization", {x, scale, bias, mean, var}, Attrs({{"epsilon", 1e-3f}}));
}

// Runs the pass and checks the folded graph against the original on random inputs.
int FoldAndCompare(ir::Graph& graph) {
  BatchNormFolding pass;
  bool changed = false;
  EXPECT_EQ(test::RunPassAndCompare(pass, graph, kFp32, &changed), "");
  EXPECT_EQ(changed, pass.folded() > 0);
  return pass.folded();
}

TEST(BatchNormFoldingTest, ConvWithBiasFolds) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {2, 3, 8, 8});
  ir::ValueId w = b.Constant("w", RandomTensor({6, 3, 3, 3}, 1));
  ir::ValueId bias = b.Constant("b", RandomTensor({6}, 2));
  ir::ValueId c = b.Op("conv", "Conv", {x, w, bias}, Attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  b.Output(b.Op("relu", "Relu", {AddBatchNorm(b, "bn", c, 6, 10)}));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FoldAndCompare(graph), 1);
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("conv: Conv(%x, %bn__folded_w, %bn__folded_b) -> "
                              "(%bn: float32[2,6,8,8])"));
  EXPECT_THAT(text, HasSubstr("relu: Relu(%bn)"));
  EXPECT_THAT(text, Not(HasSubstr("BatchNormalization")));
}

TEST(BatchNormFoldingTest, GroupedConvWithoutBiasFolds) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 4, 6, 6});
  ir::ValueId w = b.Constant("w", RandomTensor({8, 2, 3, 3}, 3));
  ir::ValueId c = b.Op("conv", "Conv", {x, w}, Attrs({{"group", int64_t{2}}}));
  b.Output(AddBatchNorm(b, "bn", c, 8, 20));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FoldAndCompare(graph), 1);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("conv: Conv(%x, %bn__folded_w, %bn__folded_b)"));
}

TEST(BatchNormFoldingTest, TwoBatchNormsInARowBothFold) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 5, 5});
  ir::ValueId c = b.Op("conv", "Conv", {x, b.Constant("w", RandomTensor({3, 2, 1, 1}, 4))});
  b.Output(AddBatchNorm(b, "bn2", AddBatchNorm(b, "bn1", c, 3, 30), 3, 40));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FoldAndCompare(graph), 2);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("-> (%bn2: float32[1,3,5,5])"));
  EXPECT_EQ(graph.nodes().size(), 1u);
}

TEST(BatchNormFoldingTest, GemmTransBWithVectorCFolds) {
  GraphBuilder b;
  ir::ValueId a = b.Input("a", {4, 5});
  ir::ValueId w = b.Constant("w", RandomTensor({3, 5}, 5));
  ir::ValueId c = b.Constant("c", RandomTensor({3}, 6));
  ir::ValueId g = b.Op("fc", "Gemm", {a, w, c}, Attrs({{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}));
  b.Output(AddBatchNorm(b, "bn", g, 3, 50));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FoldAndCompare(graph), 1);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("fc: Gemm(%a, %bn__folded_b, %bn__folded_c) -> "
                                               "(%bn: float32[4,3])"));
}

TEST(BatchNormFoldingTest, GemmWithColumnCAndNoTransposeFolds) {
  GraphBuilder b;
  ir::ValueId a = b.Input("a", {4, 5});
  ir::ValueId w = b.Constant("w", RandomTensor({5, 3}, 7));
  ir::ValueId c = b.Constant("c", RandomTensor({4, 1}, 8));
  ir::ValueId g = b.Op("fc", "Gemm", {a, w, c}, Attrs({{"beta", 0.5f}}));
  b.Output(AddBatchNorm(b, "bn", g, 3, 60));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FoldAndCompare(graph), 1);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("%bn__folded_c = const float32[4,3]"));
}

TEST(BatchNormFoldingTest, GemmWithoutCFolds) {
  GraphBuilder b;
  ir::ValueId a = b.Input("a", {2, 5});
  ir::ValueId g = b.Op("fc", "Gemm", {a, b.Constant("w", RandomTensor({5, 4}, 9))});
  b.Output(AddBatchNorm(b, "bn", g, 4, 70));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FoldAndCompare(graph), 1);
}

TEST(BatchNormFoldingTest, ConvOutputWithASecondReaderIsNotFolded) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 4, 4});
  ir::ValueId c = b.Op("conv", "Conv", {x, b.Constant("w", RandomTensor({2, 2, 1, 1}, 1))});
  ir::ValueId bn = AddBatchNorm(b, "bn", c, 2, 10);
  b.Output(b.Op("add", "Add", {bn, b.Op("relu", "Relu", {c})}));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FoldAndCompare(graph), 0);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("bn: BatchNormalization(%conv"));
}

TEST(BatchNormFoldingTest, ConvOutputThatIsAGraphOutputIsNotFolded) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 4, 4});
  ir::ValueId c = b.Op("conv", "Conv", {x, b.Constant("w", RandomTensor({2, 2, 1, 1}, 1))});
  b.Output(c);
  b.Output(AddBatchNorm(b, "bn", c, 2, 10));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FoldAndCompare(graph), 0);
}

TEST(BatchNormFoldingTest, NonConstantWeightsOrStatisticsAreNotFolded) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 4, 4});
  ir::ValueId w = b.Input("w", {2, 2, 1, 1});
  ir::ValueId c = b.Op("conv", "Conv", {x, w});
  b.Output(AddBatchNorm(b, "bn", c, 2, 10));
  ir::ValueId c2 = b.Op("conv2", "Conv", {x, b.Constant("w2", RandomTensor({2, 2, 1, 1}, 2))});
  ir::ValueId mean = b.Input("mean", {2});
  ir::ValueId one = b.Constant("one", ir::Tensor::FromFloats({1, 1}, {2}));
  b.Output(b.Op("bn2", "BatchNormalization", {c2, one, one, mean, one}));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FoldAndCompare(graph), 0);
  EXPECT_EQ(graph.nodes().size(), 4u);
}

TEST(BatchNormFoldingTest, BatchNormAfterOtherOpsIsNotFolded) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 4, 4});
  ir::ValueId relu = b.Op("relu", "Relu", {x});
  ir::ValueId w = b.Constant("w", RandomTensor({2, 2, 3, 3}, 2));
  ir::ValueId deconv = b.Op("deconv", "ConvTranspose", {AddBatchNorm(b, "bn1", relu, 2, 10), w});
  b.Output(AddBatchNorm(b, "bn2", deconv, 2, 20));
  b.Output(AddBatchNorm(b, "bn3", x, 2, 30));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FoldAndCompare(graph), 0);
}

// tf2onnx's Keras depthwise conv + BatchNormalization: Conv, Mul by [1, C, 1, 1], Add of [C, 1, 1];
// then a Sub and a Div by scalars. All four fold into the Conv's weights and bias.
TEST(BatchNormFoldingTest, PerChannelMulAddSubDivFold) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {2, 4, 6, 6});
  ir::ValueId c =
      b.Op("depthwise", "Conv", {x, b.Constant("w", RandomTensor({4, 1, 3, 3}, 1))}, Attrs({{"group", int64_t{4}}}));
  ir::ValueId mul = b.Op("mul", "Mul", {c, b.Constant("scale", RandomTensor({1, 4, 1, 1}, 2, 0.5f, 2.0f))});
  ir::ValueId add = b.Op("add", "Add", {b.Constant("shift", RandomTensor({4, 1, 1}, 3)), mul});
  ir::ValueId sub = b.Op("sub", "Sub", {add, b.Constant("three", RandomTensor({}, 4))});
  b.Output(b.Op("div", "Div", {sub, b.Constant("six", RandomTensor({1}, 5, 2.0f, 3.0f))}));
  ir::Graph graph = b.Build().value();
  BatchNormFolding pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, graph, kFp32), "");
  EXPECT_EQ(pass.pointwise_folded(), 4);
  EXPECT_EQ(pass.folded(), 0);
  ASSERT_EQ(graph.nodes().size(), 1u);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("depthwise: Conv(%x, %div__folded_w, %div__folded_b)"));
}

// Constants that broadcast along another axis than the channels, c - x, a computed operand, and a
// conv output read twice stay as they are.
TEST(BatchNormFoldingTest, OtherPointwiseNodesAreNotFolded) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 3, 4, 4});
  auto conv = [&](const std::string& name, uint32_t seed) {
    return b.Op(name, "Conv", {x, b.Constant(name + "_w", RandomTensor({3, 3, 1, 1}, seed))});
  };
  b.Output(b.Op("per_pixel", "Mul", {conv("c1", 1), b.Constant("pixels", RandomTensor({1, 1, 4, 4}, 2))}));
  b.Output(b.Op("reversed", "Sub", {b.Constant("k", RandomTensor({3, 1, 1}, 3)), conv("c2", 4)}));
  b.Output(b.Op("gate", "Mul", {conv("c3", 5), b.Op("sig", "Sigmoid", {x})}));
  ir::ValueId twice = conv("c4", 6);
  b.Output(b.Op("scaled", "Mul", {twice, b.Constant("s", RandomTensor({3, 1, 1}, 7))}));
  b.Output(b.Op("relu", "Relu", {twice}));
  ir::Graph graph = b.Build().value();
  BatchNormFolding pass;
  bool changed = true;
  EXPECT_EQ(test::RunPassAndCompare(pass, graph, kFp32, &changed), "");
  EXPECT_FALSE(changed);
  EXPECT_EQ(pass.pointwise_folded(), 0);
}

}  // namespace
}  // namespace partitioner
