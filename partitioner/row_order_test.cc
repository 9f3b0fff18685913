// RowOrder: torch's seq-first output projection of multi-head attention (Transpose -> Reshape ->
// Gemm/MatMul -> Reshape -> Transpose(1,0,2)) becomes Transpose -> Reshape -> MatMul [-> Add] on
// rows in the final order, with the same outputs (CPU reference plan before and after); other
// forms stay.
#include "partitioner/row_order.h"

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
  std::string projection = "Gemm";
  bool trans_b = false, bias = true;
  float alpha = 1.f;
  std::vector<int64_t> last_perm = {1, 0, 2};
  bool rows_read_twice = false;
};

// Attention-shaped [B=2, H=3, S=5, D=4] -> seq-first rows [S*B, H*D] -> projection to 6 -> [B, S, 6],
// then a residual Add.
ir::Graph Build(const Form& f) {
  GraphBuilder b;
  ir::ValueId a = b.Input("a", {2, 3, 5, 4});
  ir::ValueId t = b.Op("t", "Transpose", {a}, Attrs({{"perm", std::vector<int64_t>{2, 0, 1, 3}}}));
  ir::ValueId rows = b.Op("rows", "Reshape", {t, b.Constant("rows_shape", ir::Tensor::FromInt64s({10, 12}))});
  ir::ValueId w =
      b.Constant("w", RandomTensor(f.trans_b ? std::vector<int64_t>{6, 12} : std::vector<int64_t>{12, 6}, 1));
  std::vector<ir::ValueId> in = {rows, w};
  if (f.bias) in.push_back(b.Constant("bias", RandomTensor({6}, 2)));
  ir::ValueId y = f.projection == "Gemm"
                      ? b.Op("proj", "Gemm", in, Attrs({{"transB", int64_t{f.trans_b}}, {"alpha", f.alpha}}))
                      : b.Op("proj", "MatMul", in);
  y = b.Op("unrows", "Reshape", {y, b.Constant("unrows_shape", ir::Tensor::FromInt64s({5, 2, 6}))});
  y = b.Op("back", "Transpose", {y}, Attrs({{"perm", f.last_perm}}));
  b.Output(b.Op("residual", "Add",
                {y, b.Input("x", f.last_perm == std::vector<int64_t>{1, 0, 2} ? std::vector<int64_t>{2, 5, 6}
                                                                              : std::vector<int64_t>{5, 6, 2})}));
  if (f.rows_read_twice) b.Output(b.Op("neg", "Neg", {rows}));
  return b.Build().value();
}

TEST(RowOrderTest, GemmWithBias) {
  for (bool trans_b : {false, true}) {
    ir::Graph g = Build({.trans_b = trans_b});
    RowOrder pass;
    bool changed = false;
    EXPECT_EQ(test::RunPassAndCompare(pass, g, kFp32, &changed), "") << "transB " << trans_b;
    EXPECT_TRUE(changed);
    EXPECT_EQ(pass.rewritten(), 1);
    EXPECT_EQ(OpTypes(g), (std::vector<std::string>{"Transpose", "Reshape", "MatMul", "Add", "Add"}));
    EXPECT_EQ(g.nodes()[0].attrs.GetInts("perm", {}), (std::vector<int64_t>{0, 2, 1, 3}));
  }
}

TEST(RowOrderTest, MatMulWithoutBias) {
  ir::Graph g = Build({.projection = "MatMul", .bias = false});
  RowOrder pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kFp32), "");
  EXPECT_EQ(OpTypes(g), (std::vector<std::string>{"Transpose", "Reshape", "MatMul", "Add"}));
}

TEST(RowOrderTest, LeavesOtherFormsAlone) {
  for (const Form& f : {Form{.alpha = 0.5f}, Form{.last_perm = {0, 2, 1}}, Form{.rows_read_twice = true}}) {
    ir::Graph g = Build(f);
    const std::vector<std::string> before = OpTypes(g);
    RowOrder pass;
    bool changed = true;
    EXPECT_EQ(test::RunPassAndCompare(pass, g, kFp32, &changed), "");
    EXPECT_FALSE(changed);
    EXPECT_EQ(OpTypes(g), before);
  }
}

}  // namespace
}  // namespace partitioner
