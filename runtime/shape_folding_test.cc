// FoldShapeComputations on the CPU: a Shape of a value reshaped to a computed shape (what dynamic
// transformer exports write: view(b, s, heads, d) then x.shape[-1] for the attention scale) folds
// once the input dims are known, through the Reshape; a chain that reads tensor data does not.
#include "runtime/shape_folding.h"

#include "gtest/gtest.h"
#include "tests/util/pass_test_util.h"

namespace exec {
namespace {

using partitioner::test::Attrs;
using partitioner::test::GraphBuilder;

TEST(ShapeFoldingTest, ShapeAfterReshapeToComputedShapeFolds) {
  GraphBuilder b(17);
  ir::ValueId x = b.SymbolicInput("x", {ir::Dim::Symbol("N"), 6});
  ir::ValueId n = b.Op("n", "Gather", {b.Op("shape", "Shape", {x}), b.Constant("zero", ir::Tensor::FromInt64s({0}))});
  ir::ValueId target =
      b.Op("target", "Concat", {n, b.Constant("heads", ir::Tensor::FromInt64s({2, 3}))}, Attrs({{"axis", int64_t{0}}}));
  ir::ValueId y = b.Op("y", "Reshape", {x, target});
  ir::ValueId last = b.Op("last", "Slice",
                          {b.Op("y_shape", "Shape", {y}), b.Constant("start", ir::Tensor::FromInt64s({-1})),
                           b.Constant("end", ir::Tensor::FromInt64s({100}))});
  ir::ValueId d = b.Op("d", "Cast", {last}, Attrs({{"to", int64_t{1}}}));
  ir::ValueId data = b.Op("data_sum", "ReduceSum", {y});
  b.Output(b.Op("scaled", "Mul", {data, d}));
  Plan plan;
  plan.graph = b.Build().value();
  const std::map<ir::ValueId, ir::Tensor> folded = FoldShapeComputations(plan, {{4, 6}});
  ASSERT_EQ(folded.count(d), 1u);
  EXPECT_EQ(folded.at(d).GetAsDouble(0), 3.0);
  EXPECT_EQ(folded.count(data), 0u);  // reads x's values
  EXPECT_EQ(folded.count(y), 0u);
}

}  // namespace
}  // namespace exec
