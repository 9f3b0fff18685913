// TransposePairs: a Transpose of a Transpose reads the first one's input with the composed perm, an
// identity (or inverse) pair goes, with the same outputs (CPU reference plan before and after).
#include "partitioner/transpose_pairs.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using test::Attrs;
using test::GraphBuilder;
using test::OpTypes;

constexpr testing_util::Tolerance kExact{0, 0};

ir::ValueId AddTranspose(GraphBuilder& b, const std::string& name, ir::ValueId x, std::vector<int64_t> perm) {
  if (perm.empty()) return b.Op(name, "Transpose", {x});  // ONNX's default: the axes reversed
  return b.Op(name, "Transpose", {x}, Attrs({{"perm", perm}}));
}

// x -> Relu -> Transpose(p1) -> Transpose(p2) -> Neg; the Transposes' output read by `also_read`.
ir::Graph Pair(std::vector<int64_t> p1, std::vector<int64_t> p2, bool first_also_read = false) {
  GraphBuilder b;
  ir::ValueId x = b.Op("relu", "Relu", {b.Input("x", {2, 3, 4, 5})});
  ir::ValueId t1 = AddTranspose(b, "t1", x, p1);
  b.Output(b.Op("neg", "Neg", {AddTranspose(b, "t2", t1, p2)}));
  if (first_also_read) b.Output(b.Op("abs", "Abs", {t1}));
  return b.Build().value();
}

TEST(TransposePairsTest, InversePairGoes) {
  ir::Graph g = Pair({0, 2, 3, 1}, {0, 3, 1, 2});  // NCHW -> NHWC -> NCHW
  TransposePairs pass;
  bool changed = false;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kExact, &changed), "");
  EXPECT_TRUE(changed);
  EXPECT_EQ(pass.merged(), 1);
  EXPECT_EQ(pass.removed(), 1);
  // Neg reads Relu's output; both Transposes are unread (dead-node removal's to drop).
  const ir::Node& neg = g.node(g.nodes().size() - 1);
  EXPECT_EQ(neg.op_type, "Neg");
  EXPECT_EQ(neg.inputs[0], g.node(0).outputs[0]);
}

TEST(TransposePairsTest, DefaultPermsComposeToIdentity) {
  ir::Graph g = Pair({}, {});
  TransposePairs pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kExact), "");
  EXPECT_EQ(pass.removed(), 1);
}

TEST(TransposePairsTest, OtherPairBecomesOneTranspose) {
  ir::Graph g = Pair({0, 2, 3, 1}, {3, 0, 2, 1});
  TransposePairs pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kExact), "");
  EXPECT_EQ(pass.merged(), 1);
  EXPECT_EQ(pass.removed(), 0);
  const ir::Node& t2 = g.node(2);
  EXPECT_EQ(t2.inputs[0], g.node(0).outputs[0]);
  EXPECT_EQ(t2.attrs.GetInts("perm"), (std::vector<int64_t>{1, 0, 3, 2}));
}

TEST(TransposePairsTest, FirstTransposeKeptForItsOtherReader) {
  ir::Graph g = Pair({0, 2, 3, 1}, {0, 3, 1, 2}, /*first_also_read=*/true);
  TransposePairs pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kExact), "");
  EXPECT_EQ(OpTypes(g), (std::vector<std::string>{"Relu", "Transpose", "Transpose", "Neg", "Abs"}));
  EXPECT_EQ(g.node(4).inputs[0], g.node(1).outputs[0]);
}

TEST(TransposePairsTest, ChainOfThreeMerges) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {2, 3, 4});
  ir::ValueId t = AddTranspose(b, "t1", x, {1, 2, 0});
  t = AddTranspose(b, "t2", t, {1, 2, 0});
  b.Output(b.Op("neg", "Neg", {AddTranspose(b, "t3", t, {1, 2, 0})}));  // three rotations: identity
  ir::Graph g = b.Build().value();
  TransposePairs pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kExact), "");
  EXPECT_EQ(pass.merged(), 2);
  EXPECT_EQ(pass.removed(), 1);
  EXPECT_EQ(g.node(3).inputs[0], g.inputs()[0]);
}

TEST(TransposePairsTest, IdentityWritingAGraphOutputBecomesIdentity) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {2, 3});
  b.Output(AddTranspose(b, "back", AddTranspose(b, "t", x, {1, 0}), {1, 0}));
  ir::Graph g = b.Build().value();
  TransposePairs pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kExact), "");
  EXPECT_EQ(OpTypes(g), (std::vector<std::string>{"Transpose", "Identity"}));
  EXPECT_EQ(g.node(1).inputs[0], g.inputs()[0]);
  EXPECT_EQ(g.outputs()[0], g.node(1).outputs[0]);
}

TEST(TransposePairsTest, LeavesLoneTransposesAlone) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {2, 3, 4});
  b.Output(b.Op("neg", "Neg", {AddTranspose(b, "t", b.Op("relu", "Relu", {x}), {2, 0, 1})}));
  ir::Graph g = b.Build().value();
  TransposePairs pass;
  bool changed = true;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kExact, &changed), "");
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace partitioner
