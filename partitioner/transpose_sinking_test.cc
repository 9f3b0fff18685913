// TransposeSinking: a last-axis-keeping Transpose before a constant-weight MatMul (+ bias Add)
// moves after them with the same outputs (CPU reference plan before and after); other forms stay.
#include "partitioner/transpose_sinking.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using test::Attrs;
using test::GraphBuilder;
using test::OpTypes;
using test::RandomTensor;

constexpr testing_util::Tolerance kFp32{1e-5, 1e-5};

struct Form {
  std::vector<int64_t> perm = {1, 0, 2};
  bool constant_weight = true, bias = true, transposed_read_twice = false;
};

ir::Graph Build(const Form& f) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {2, 4, 4});  // square inner dims: every perm below types
  ir::ValueId w = f.constant_weight ? b.Constant("w", RandomTensor({4, 5}, 1)) : b.Input("w", {4, 5});
  ir::ValueId t = b.Op("t", "Transpose", {x}, Attrs({{"perm", f.perm}}));
  ir::ValueId y = b.Op("mm", "MatMul", {t, w});
  if (f.bias) y = b.Op("add", "Add", {b.Constant("bias", RandomTensor({5}, 2)), y});
  b.Output(b.Op("relu", "Relu", {y}));
  if (f.transposed_read_twice) b.Output(b.Op("neg", "Neg", {t}));
  return b.Build().value();
}

TEST(TransposeSinkingTest, MovesPastMatMulAndBias) {
  ir::Graph g = Build({});
  TransposeSinking pass;
  bool changed = false;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kFp32, &changed), "");
  EXPECT_TRUE(changed);
  EXPECT_EQ(pass.moved(), 1);
  EXPECT_EQ(OpTypes(g), (std::vector<std::string>{"MatMul", "Add", "Transpose", "Relu"}));
}

TEST(TransposeSinkingTest, MovesPastMatMulWithoutBias) {
  ir::Graph g = Build({.bias = false});
  TransposeSinking pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kFp32), "");
  EXPECT_EQ(OpTypes(g), (std::vector<std::string>{"MatMul", "Transpose", "Relu"}));
}

TEST(TransposeSinkingTest, LeavesOtherFormsAlone) {
  for (const Form& f : {Form{.perm = {0, 2, 1}}, Form{.constant_weight = false}, Form{.transposed_read_twice = true}}) {
    ir::Graph g = Build(f);
    const std::vector<std::string> before = OpTypes(g);
    TransposeSinking pass;
    bool changed = true;
    EXPECT_EQ(test::RunPassAndCompare(pass, g, kFp32, &changed), "");
    EXPECT_FALSE(changed);
    EXPECT_EQ(OpTypes(g), before);
  }
}

}  // namespace
}  // namespace partitioner
