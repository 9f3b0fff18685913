// DeadNodeRemoval: branches that reach no graph output go (transitively); live nodes, and nodes
// with at least one live output, stay.
#include "partitioner/dead_node_removal.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using test::Attrs;
using test::GraphBuilder;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(DeadNodeRemovalTest, UnreadBranchIsRemovedTransitively) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {2, 3});
  b.Output(b.Op("relu", "Relu", {x}));
  b.Op("tanh", "Tanh", {b.Op("sigmoid", "Sigmoid", {x})});
  ir::Graph graph = b.Build().value();
  const ir::Graph before = graph;
  DeadNodeRemoval pass;
  ASSERT_TRUE(pass.Run(graph).value());
  EXPECT_EQ(pass.removed(), 2);
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("relu: Relu(%x)"));
  EXPECT_THAT(text, Not(HasSubstr("Sigmoid")));
  EXPECT_THAT(text, Not(HasSubstr("Tanh")));
  EXPECT_TRUE(graph.Validate().ok());
  EXPECT_EQ(test::CompareGraphs(graph, before, test::RandomInputs(graph), {0, 0}), "");
}

TEST(DeadNodeRemovalTest, NodeFeedingOnlyADeadNodeIsRemovedButSharedProducerStays) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {4});
  ir::ValueId shared = b.Op("abs", "Abs", {x});
  b.Output(b.Op("neg", "Neg", {shared}));
  b.Op("exp", "Exp", {shared});
  ir::Graph graph = b.Build().value();
  DeadNodeRemoval pass;
  ASSERT_TRUE(pass.Run(graph).value());
  EXPECT_EQ(pass.removed(), 1);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("abs: Abs(%x)"));
}

TEST(DeadNodeRemovalTest, AllLiveGraphIsUnchanged) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {4});
  ir::ValueId r = b.Op("relu", "Relu", {x});
  b.Output(r);
  b.Output(b.Op("neg", "Neg", {r}));
  ir::Graph graph = b.Build().value();
  const std::string before = ir::PrintGraph(graph);
  DeadNodeRemoval pass;
  EXPECT_FALSE(pass.Run(graph).value());
  EXPECT_EQ(pass.removed(), 0);
  EXPECT_EQ(ir::PrintGraph(graph), before);
}

TEST(DeadNodeRemovalTest, NodeWithOneLiveOutputOfSeveralStays) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {4, 2});
  std::vector<ir::ValueId> parts = b.OpMulti("split", "Split", {x}, 2, Attrs({{"axis", int64_t{0}}}));
  b.Output(b.Op("relu", "Relu", {parts[1]}));
  ir::Graph graph = b.Build().value();
  EXPECT_FALSE(DeadNodeRemoval().Run(graph).value());
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("split: Split(%x)"));
}

TEST(DeadNodeRemovalTest, NodeWritingAGraphOutputStaysEvenIfUnread) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {4});
  ir::ValueId s = b.Op("sigmoid", "Sigmoid", {x});
  b.Output(s);
  b.Op("unused", "Relu", {s});
  ir::Graph graph = b.Build().value();
  DeadNodeRemoval pass;
  ASSERT_TRUE(pass.Run(graph).value());
  EXPECT_EQ(pass.removed(), 1);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("sigmoid: Sigmoid(%x)"));
}

}  // namespace
}  // namespace partitioner
