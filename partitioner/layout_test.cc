// Layout: 4-D float outputs of channels-last ops become NHWC and conv weights KRSC; graph inputs,
// other constants and logical-order ops' outputs stay logical; FindLayoutConversions lists every
// edge where the stored and the wanted layout differ (and nothing for graphs without 4-D values).
#include "partitioner/layout.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using test::Attrs;
using test::GraphBuilder;
using test::RandomTensor;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// "value>consumer:FROM>TO" for each conversion ("output" for a graph-output edge).
std::vector<std::string> Conversions(const ir::Graph& graph) {
  std::vector<std::string> result;
  for (const LayoutConversion& c : FindLayoutConversions(graph)) {
    const std::string consumer = c.consumer < 0 ? "output" : graph.node(c.consumer).name;
    result.push_back(absl::StrCat(graph.value(c.value).name, ">", consumer, ":", c.from, ">", c.to));
  }
  return result;
}

std::string LayoutOf(const ir::Graph& graph, const std::string& name) {
  for (const ir::Value& v : graph.values()) {
    if (v.name == name) return v.layout;
  }
  return "?";
}

TEST(LayoutTest, ConvChainIsChannelsLastAndReshapeReadsLogical) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 3, 8, 8});
  ir::ValueId w = b.Constant("w", RandomTensor({4, 3, 3, 3}, 1));
  ir::ValueId relu = b.Op("relu", "Relu", {b.Op("conv", "Conv", {x, w})});
  ir::ValueId pool = b.Op("pool", "MaxPool", {relu}, Attrs({{"kernel_shape", std::vector<int64_t>{2, 2}}}));
  ir::ValueId shape = b.Constant("shape", ir::Tensor::FromInt64s({1, -1}));
  b.Output(b.Op("flat", "Reshape", {pool, shape}));
  ir::Graph graph = b.Build().value();
  Layout pass;
  ASSERT_TRUE(pass.Run(graph).value());
  EXPECT_EQ(LayoutOf(graph, "x"), "");
  EXPECT_EQ(LayoutOf(graph, "w"), "KRSC");
  EXPECT_EQ(LayoutOf(graph, "conv"), "NHWC");
  EXPECT_EQ(LayoutOf(graph, "relu"), "NHWC");
  EXPECT_EQ(LayoutOf(graph, "pool"), "NHWC");
  EXPECT_EQ(LayoutOf(graph, "flat"), "");
  EXPECT_THAT(Conversions(graph), ElementsAre("x>conv:NCHW>NHWC", "pool>flat:NHWC>NCHW"));
  EXPECT_FALSE(pass.Run(graph).value());  // idempotent
}

TEST(LayoutTest, NhwcGraphOutputIsConvertedBack) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 4, 4});
  ir::ValueId c = b.Op("conv", "Conv", {x, b.Constant("w", RandomTensor({2, 2, 1, 1}, 1))});
  b.Output(b.Op("sig", "Sigmoid", {c}));
  ir::Graph graph = b.Build().value();
  ASSERT_TRUE(Layout().Run(graph).value());
  EXPECT_THAT(Conversions(graph), ElementsAre("x>conv:NCHW>NHWC", "sig>output:NHWC>NCHW"));
}

TEST(LayoutTest, ChannelConcatOfConvOutputsStaysChannelsLast) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 4, 4});
  ir::ValueId w = b.Constant("w", RandomTensor({2, 2, 1, 1}, 1));
  ir::ValueId a = b.Op("a", "Conv", {x, w});
  ir::ValueId c = b.Op("c", "Conv", {x, w});
  ir::ValueId cat = b.Op("cat", "Concat", {a, c}, Attrs({{"axis", int64_t{1}}}));
  b.Output(b.Op("mix", "Conv", {cat, b.Constant("w2", RandomTensor({2, 4, 1, 1}, 2))}));
  ir::Graph graph = b.Build().value();
  ASSERT_TRUE(Layout().Run(graph).value());
  EXPECT_EQ(LayoutOf(graph, "cat"), "NHWC");
  EXPECT_THAT(Conversions(graph), ElementsAre("x>a:NCHW>NHWC", "x>c:NCHW>NHWC", "mix>output:NHWC>NCHW"));
}

TEST(LayoutTest, GlobalPoolThenFlattenAndShapeReads) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 4, 4});
  ir::ValueId c = b.Op("conv", "Conv", {x, b.Constant("w", RandomTensor({2, 2, 1, 1}, 1))});
  ir::ValueId gap = b.Op("gap", "GlobalAveragePool", {c});
  b.Output(b.Op("flat", "Flatten", {gap}));
  b.Output(b.Op("flat_conv", "Flatten", {c}));
  b.Output(b.Op("shape", "Shape", {c}));
  ir::Graph graph = b.Build().value();
  ASSERT_TRUE(Layout().Run(graph).value());
  EXPECT_EQ(LayoutOf(graph, "gap"), "NHWC");
  // gap is [1,2,1,1]: both orders are the same bytes, so only the 4x4 conv output converts.
  EXPECT_THAT(Conversions(graph), ElementsAre("x>conv:NCHW>NHWC", "conv>flat_conv:NHWC>NCHW"));
}

TEST(LayoutTest, IntegerOutputOfAnAgnosticOpStaysLogical) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 4, 4});
  ir::ValueId c = b.Op("conv", "Conv", {x, b.Constant("w", RandomTensor({2, 2, 1, 1}, 1))});
  ir::ValueId r = b.Op("relu", "Relu", {c});
  b.Output(b.Op("to_int", "Cast", {r}, Attrs({{"to", int64_t{7}}})));
  ir::Graph graph = b.Build().value();
  ASSERT_TRUE(Layout().Run(graph).value());
  EXPECT_EQ(LayoutOf(graph, "relu"), "NHWC");
  EXPECT_EQ(LayoutOf(graph, "to_int"), "");
  EXPECT_THAT(Conversions(graph), ElementsAre("x>conv:NCHW>NHWC", "relu>to_int:NHWC>NCHW"));
}

// Attention heads [B, H, S, D] and their pointwise ops meet no conv or pool: they stay in logical
// order, so the ops around attention need no conversion. The Cast feeding a conv joins it.
TEST(LayoutTest, ValuesAwayFromSpatialOpsStayLogical) {
  GraphBuilder b;
  ir::ValueId q = b.Input("q", {1, 2, 4, 8});
  ir::ValueId scaled = b.Op("scaled", "Mul", {q, b.Constant("s", RandomTensor({}, 2))});
  b.Output(b.Op("probs", "Softmax", {scaled}, Attrs({{"axis", int64_t{-1}}})));
  ir::ValueId h = b.Input("h", {1, 2, 4, 4}, ir::DType::kFloat16);
  ir::ValueId cast = b.Op("cast", "Cast", {h}, Attrs({{"to", int64_t{1}}}));
  b.Output(b.Op("conv", "Conv", {cast, b.Constant("w", RandomTensor({2, 2, 1, 1}, 1))}));
  ir::Graph graph = b.Build().value();
  ASSERT_TRUE(Layout().Run(graph).value());
  EXPECT_EQ(LayoutOf(graph, "scaled"), "");
  EXPECT_EQ(LayoutOf(graph, "cast"), "NHWC");
  EXPECT_THAT(Conversions(graph), ElementsAre("h>cast:NCHW>NHWC", "conv>output:NHWC>NCHW"));
}

// tf2onnx's NHWC model input: Cast, then Transpose(0, 3, 1, 2) before the first conv. The
// Transpose stores NHWC (its input's bytes: a view), the Cast stays logical, and nothing converts
// until the conv output goes back to NHWC dims through Transpose(0, 2, 3, 1) (also a view).
TEST(LayoutTest, TransposesBetweenNhwcAndNchwAreViews) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 8, 8, 3}, ir::DType::kFloat16);
  ir::ValueId cast = b.Op("cast", "Cast", {x}, Attrs({{"to", int64_t{1}}}));
  ir::ValueId to_nchw = b.Op("to_nchw", "Transpose", {cast}, Attrs({{"perm", std::vector<int64_t>{0, 3, 1, 2}}}));
  ir::ValueId conv = b.Op("conv", "Conv", {to_nchw, b.Constant("w", RandomTensor({4, 3, 3, 3}, 1))});
  ir::ValueId to_nhwc = b.Op("to_nhwc", "Transpose", {conv}, Attrs({{"perm", std::vector<int64_t>{0, 2, 3, 1}}}));
  b.Output(b.Op("flat", "Flatten", {to_nhwc}));
  ir::Graph graph = b.Build().value();
  ASSERT_TRUE(Layout().Run(graph).value());
  EXPECT_EQ(LayoutOf(graph, "cast"), "");
  EXPECT_EQ(LayoutOf(graph, "to_nchw"), "NHWC");
  EXPECT_EQ(LayoutOf(graph, "to_nhwc"), "");
  EXPECT_THAT(Conversions(graph), IsEmpty());
}

// A Transpose(0, 3, 1, 2) read by logical-order ops only, or with another perm, stays logical.
TEST(LayoutTest, OtherTransposesStayLogical) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 8, 8, 3});
  ir::ValueId t = b.Op("t", "Transpose", {x}, Attrs({{"perm", std::vector<int64_t>{0, 3, 1, 2}}}));
  b.Output(b.Op("soft", "Softmax", {t}, Attrs({{"axis", int64_t{1}}})));
  ir::ValueId u = b.Op("u", "Transpose", {x}, Attrs({{"perm", std::vector<int64_t>{0, 3, 2, 1}}}));
  b.Output(b.Op("conv", "Conv", {u, b.Constant("w", RandomTensor({4, 3, 1, 1}, 1))}));
  ir::Graph graph = b.Build().value();
  ASSERT_TRUE(Layout().Run(graph).value());
  EXPECT_EQ(LayoutOf(graph, "t"), "");
  EXPECT_EQ(LayoutOf(graph, "u"), "");
  EXPECT_THAT(Conversions(graph), ElementsAre("u>conv:NCHW>NHWC", "conv>output:NHWC>NCHW"));
}

TEST(LayoutTest, WeightAlsoReadAsDataIsNotKrsc) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 3, 3});
  ir::ValueId w = b.Constant("w", RandomTensor({2, 2, 1, 1}, 1));
  ir::ValueId c = b.Op("conv", "Conv", {x, w});
  b.Output(b.Op("add", "Add", {c, w}));
  ir::Graph graph = b.Build().value();
  ASSERT_TRUE(Layout().Run(graph).value());
  EXPECT_EQ(LayoutOf(graph, "w"), "");
  // w is [2,2,1,1] (same bytes in both orders): no conversion for its read as data.
  EXPECT_THAT(Conversions(graph), ElementsAre("x>conv:NCHW>NHWC", "add>output:NHWC>NCHW"));
}

TEST(LayoutTest, GraphWithoutFourDimensionalValuesIsUnchanged) {
  GraphBuilder b;
  ir::ValueId a = b.Input("a", {2, 5});
  ir::ValueId fc = b.Op("fc", "Gemm", {a, b.Constant("w", RandomTensor({5, 3}, 1))});
  b.Output(b.Op("soft", "Softmax", {fc}));
  ir::Graph graph = b.Build().value();
  EXPECT_FALSE(Layout().Run(graph).value());
  EXPECT_THAT(Conversions(graph), IsEmpty());
}

TEST(LayoutTest, LogicalOnlyGraphNeedsNoConversion) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 3, 4});
  b.Output(b.Op("t", "Transpose", {x}, Attrs({{"perm", std::vector<int64_t>{0, 2, 3, 1}}})));
  ir::Graph graph = b.Build().value();
  EXPECT_FALSE(Layout().Run(graph).value());
  EXPECT_THAT(Conversions(graph), IsEmpty());
}

}  // namespace
}  // namespace partitioner
