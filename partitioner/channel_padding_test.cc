// ChannelPadding: dense 2-D convs with unaligned C get a zero Pad and zero-padded weights (and
// compute the same outputs); grouped, already aligned, non-constant-weight, 1-D and
// symbolic-channel convs stay.
#include "partitioner/channel_padding.h"

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

constexpr testing_util::Tolerance kFp32{1e-5, 1e-6};
constexpr testing_util::Tolerance kFp16{1e-2, 1e-2};

// Conv(x[1,c,8,8], w[4,c/group,3,3]) + Relu, weights in `dtype`.
ir::Graph ConvGraph(int64_t c, int64_t group = 1, ir::DType dtype = ir::DType::kFloat32) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, c, 8, 8}, dtype);
  ir::ValueId w = b.Constant("w", RandomTensor({4, c / group, 3, 3}, 1, -1, 1, dtype));
  ir::ValueId conv =
      b.Op("conv", "Conv", {x, w}, Attrs({{"group", group}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  b.Output(b.Op("relu", "Relu", {conv}));
  return b.Build().value();
}

int PadAndCompare(ir::Graph& graph, ChannelPadding pass, testing_util::Tolerance tol = kFp32) {
  const ir::Graph before = graph;
  absl::StatusOr<bool> changed = pass.Run(graph);
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(changed.value_or(false), pass.padded() > 0);
  EXPECT_TRUE(graph.Validate().ok());
  EXPECT_EQ(test::CompareGraphs(graph, before, test::RandomInputs(graph), tol), "");
  return pass.padded();
}

TEST(ChannelPaddingTest, Fp32StemWithThreeChannelsIsPaddedToFour) {
  ir::Graph graph = ConvGraph(3);
  EXPECT_EQ(PadAndCompare(graph, ChannelPadding()), 1);
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("%conv__cpad_w = const float32[4,4,3,3]"));
  EXPECT_THAT(text, HasSubstr("conv__cpad: Pad(%x, %conv__cpad_pads) -> "
                              "(%conv__cpad_out: float32[1,4,8,8]) {mode=\"constant\"}"));
  EXPECT_THAT(text, HasSubstr("conv: Conv(%conv__cpad_out, %conv__cpad_w) -> "
                              "(%conv: float32[1,4,8,8])"));
  EXPECT_EQ(graph.value(graph.node(0).inputs[1]).constant->ToInt64Vector(),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 0, 0}));
}

TEST(ChannelPaddingTest, Fp16StemWithThreeChannelsIsPaddedToEight) {
  ir::Graph graph = ConvGraph(3, 1, ir::DType::kFloat16);
  EXPECT_EQ(PadAndCompare(graph, ChannelPadding(), kFp16), 1);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("%conv__cpad_w = const float16[4,8,3,3]"));
}

TEST(ChannelPaddingTest, WiderAlignmentPadsAlignedFp32Channels) {
  ir::Graph graph = ConvGraph(4);
  EXPECT_EQ(PadAndCompare(graph, ChannelPadding(/*alignment_bytes=*/32)), 1);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("(%conv__cpad_out: float32[1,8,8,8])"));
}

TEST(ChannelPaddingTest, ConvsReadingTheSameInputShareOnePad) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {2, 5, 6, 6});
  ir::ValueId a = b.Op("conv_a", "Conv", {x, b.Constant("wa", RandomTensor({3, 5, 1, 1}, 1))});
  ir::ValueId c = b.Op("conv_b", "Conv", {x, b.Constant("wb", RandomTensor({3, 5, 3, 3}, 2))},
                       Attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  b.Output(b.Op("add", "Add", {a, c}));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(PadAndCompare(graph, ChannelPadding()), 2);
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("conv_a: Conv(%conv_a__cpad_out, %conv_a__cpad_w)"));
  EXPECT_THAT(text, HasSubstr("conv_b: Conv(%conv_a__cpad_out, %conv_b__cpad_w)"));
  EXPECT_EQ(graph.nodes().size(), 4u);
}

TEST(ChannelPaddingTest, GroupedConvIsNotPadded) {
  ir::Graph graph = ConvGraph(6, /*group=*/2);
  EXPECT_EQ(PadAndCompare(graph, ChannelPadding()), 0);
  EXPECT_THAT(ir::PrintGraph(graph), Not(HasSubstr("Pad(")));
}

TEST(ChannelPaddingTest, AlignedChannelsAreNotPadded) {
  ir::Graph graph = ConvGraph(8);
  EXPECT_EQ(PadAndCompare(graph, ChannelPadding()), 0);
}

TEST(ChannelPaddingTest, NonConstantWeightsAreNotPadded) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 3, 4, 4});
  b.Output(b.Op("conv", "Conv", {x, b.Input("w", {2, 3, 1, 1})}));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(PadAndCompare(graph, ChannelPadding()), 0);
}

TEST(ChannelPaddingTest, OneDimensionalConvIsNotPadded) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 3, 10});
  b.Output(b.Op("conv", "Conv", {x, b.Constant("w", RandomTensor({2, 3, 3}, 1))}));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(PadAndCompare(graph, ChannelPadding()), 0);
}

TEST(ChannelPaddingTest, UnknownChannelCountIsNotPadded) {
  GraphBuilder b;
  ir::ValueId x = b.SymbolicInput("x", {1, ir::Dim::Symbol("C"), 4, 4});
  b.Output(b.Op("conv", "Conv", {x, b.Constant("w", RandomTensor({2, 3, 1, 1}, 1))}));
  ir::Graph graph = b.Build().value();
  ChannelPadding pass;
  EXPECT_FALSE(pass.Run(graph).value());
  EXPECT_EQ(graph.nodes().size(), 1u);
}

}  // namespace
}  // namespace partitioner
