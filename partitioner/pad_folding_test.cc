// PadFolding: a spatial zero Pad before a Conv becomes the Conv's pads (same outputs on the CPU
// reference plan before and after); Pads of other forms or readers stay.
#include "partitioner/pad_folding.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using test::Attrs;
using test::GraphBuilder;
using test::RandomTensor;

constexpr testing_util::Tolerance kFp32{1e-5, 1e-5};

ir::ValueId Ints(GraphBuilder& b, const std::string& name, std::vector<int64_t> values) {
  return b.Constant(name, ir::Tensor::FromInt64s(values));
}

// x [1, 4, 9, 9] -> Pad(pads, value?, axes?) -> Conv(3x3, stride 2, conv_attrs).
ir::Graph PadThenConv(std::vector<int64_t> pads, ir::Attributes conv_attrs, float value = 0.0f,
                      std::vector<int64_t> axes = {}, const std::string& mode = "constant") {
  GraphBuilder b(18);
  ir::ValueId x = b.Input("x", {1, 4, 9, 9});
  std::vector<ir::ValueId> pad_inputs = {x, Ints(b, "pads", pads),
                                         b.Constant("value", RandomTensor({}, 1, value, value))};
  if (!axes.empty()) pad_inputs.push_back(Ints(b, "axes", axes));
  ir::ValueId padded = b.Op("pad", "Pad", pad_inputs, Attrs({{"mode", mode}}));
  conv_attrs.Set("strides", std::vector<int64_t>{2, 2});
  b.Output(b.Op("conv", "Conv", {padded, b.Constant("w", RandomTensor({6, 4, 3, 3}, 2))}, conv_attrs));
  return b.Build().value();
}

// The Conv's pads after the pass, or {} while it still reads the Pad.
std::vector<int64_t> FoldedPads(ir::Graph& graph, int expected_folds) {
  PadFolding pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, graph, kFp32), "");
  EXPECT_EQ(pass.folded(), expected_folds);
  const ir::Node& conv = graph.node(graph.nodes().size() - 1);
  if (conv.input(0) != graph.inputs()[0]) return {};
  return conv.attrs.GetInts("pads", {0, 0, 0, 0});
}

TEST(PadFoldingTest, KerasZeroPaddingBeforeAStridedConvFolds) {
  ir::Graph g = PadThenConv({0, 0, 0, 0, 0, 0, 1, 1}, {});  // ZeroPadding2D(((0, 1), (0, 1)))
  EXPECT_EQ(FoldedPads(g, 1), (std::vector<int64_t>{0, 0, 1, 1}));
}

TEST(PadFoldingTest, PadsAddToTheConvsOwn) {
  ir::Graph g = PadThenConv({0, 0, 2, 1, 0, 0, 0, 3}, Attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  EXPECT_EQ(FoldedPads(g, 1), (std::vector<int64_t>{3, 2, 1, 4}));
}

TEST(PadFoldingTest, PadsGivenForSomeAxesAndValidConvFold) {
  ir::Graph g = PadThenConv({1, 2, 1, 0}, Attrs({{"auto_pad", std::string("VALID")}}), 0.0f, {-2, 3});
  EXPECT_EQ(FoldedPads(g, 1), (std::vector<int64_t>{1, 2, 1, 0}));
  EXPECT_FALSE(g.node(g.nodes().size() - 1).attrs.Has("auto_pad"));
}

TEST(PadFoldingTest, OtherPadsStay) {
  ir::Graph value = PadThenConv({0, 0, 1, 1, 0, 0, 1, 1}, {}, 0.5f);
  EXPECT_EQ(FoldedPads(value, 0), std::vector<int64_t>{});
  ir::Graph reflect = PadThenConv({0, 0, 1, 1, 0, 0, 1, 1}, {}, 0.0f, {}, "reflect");
  EXPECT_EQ(FoldedPads(reflect, 0), std::vector<int64_t>{});
  ir::Graph negative = PadThenConv({0, 0, -1, 0, 0, 0, 1, 1}, {});
  EXPECT_EQ(FoldedPads(negative, 0), std::vector<int64_t>{});
  ir::Graph same = PadThenConv({0, 0, 1, 1, 0, 0, 1, 1}, Attrs({{"auto_pad", std::string("SAME_UPPER")}}));
  EXPECT_EQ(FoldedPads(same, 0), std::vector<int64_t>{});
}

TEST(PadFoldingTest, PadWithAnotherReaderStays) {
  GraphBuilder b(18);
  ir::ValueId x = b.Input("x", {1, 4, 9, 9});
  ir::ValueId padded = b.Op("pad", "Pad", {x, Ints(b, "pads", {0, 0, 1, 1, 0, 0, 1, 1})});
  b.Output(b.Op("conv", "Conv", {padded, b.Constant("w", RandomTensor({6, 4, 3, 3}, 2))}));
  b.Output(b.Op("relu", "Relu", {padded}));
  ir::Graph g = b.Build().value();
  PadFolding pass;
  bool changed = true;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kFp32, &changed), "");
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace partitioner
