// FixInputShapes: symbolic input dims become the given values and every node's types follow; a
// name that is no input, a wrong rank, a known dim contradicted or one symbol given two values is
// an InvalidArgument naming it.
#include "runtime/input_shapes.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "tests/util/pass_test_util.h"

namespace runtime {
namespace {

using partitioner::test::Attrs;
using partitioner::test::GraphBuilder;
using ::testing::HasSubstr;

// x [N, S, 8] and mask [N, S] -> Relu(x) and Flatten(x).
ir::Graph Model() {
  GraphBuilder b;
  ir::ValueId x = b.SymbolicInput("x", {ir::Dim::Symbol("N"), ir::Dim::Symbol("S"), 8});
  b.SymbolicInput("mask", {ir::Dim::Symbol("N"), ir::Dim::Symbol("S")});
  b.Output(b.Op("relu", "Relu", {x}));
  b.Output(b.Op("flat", "Flatten", {x}, Attrs({{"axis", int64_t{1}}})));
  return b.Build().value();
}

TEST(InputShapesTest, FixedDimsReachEveryValueAndInputsSharingASymbol) {
  ir::Graph g = Model();
  ASSERT_TRUE(FixInputShapes(g, {{"x", {2, 5, 8}}}).ok());
  const std::string text = ir::PrintGraph(g);
  EXPECT_THAT(text, HasSubstr("%relu: float32[2,5,8]"));
  EXPECT_THAT(text, HasSubstr("%flat: float32[2,40]"));
  EXPECT_EQ(ir::ShapeToInts(*g.value(g.inputs()[1]).type.shape), (std::vector<int64_t>{2, 5}))
      << "mask shares N and S with x";
}

TEST(InputShapesTest, WhatDoesNotFitIsRefusedWithItsName) {
  const std::pair<InputShapes, std::string> cases[] = {
      {{{"y", {2, 5, 8}}}, "'y'"},
      {{{"x", {2, 5}}}, "rank 3"},
      {{{"x", {2, 5, 9}}}, "dim 2 = 8"},
      {{{"x", {2, 5, 8}}, {"mask", {3, 5}}}, "'N'"},
  };
  for (const auto& [shapes, expected] : cases) {
    ir::Graph g = Model();
    absl::Status s = FixInputShapes(g, shapes);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << expected;
    EXPECT_THAT(std::string(s.message()), HasSubstr(expected));
  }
}

}  // namespace
}  // namespace runtime
