// ConstantFolding: shape chains and constant arithmetic fold (and compute the same outputs);
// nodes with a non-constant input, unknown dims, too large outputs or unseeded random draws stay.
#include "partitioner/constant_folding.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/importer.h"
#include "ir/printer.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using test::Attrs;
using test::GraphBuilder;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr testing_util::Tolerance kExact{1e-6, 0.0};

// x[2,3,4,4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): flatten per batch.
ir::Graph ShapeChain(ir::Shape x_shape) {
  GraphBuilder b;
  ir::ValueId x = b.SymbolicInput("x", std::move(x_shape));
  ir::ValueId shape = b.Op("shape", "Shape", {x});
  ir::ValueId zero = b.Constant("zero", ir::Tensor::FromInt64s({0}).Reshaped({}).value());
  ir::ValueId batch = b.Op("gather", "Gather", {shape, zero}, Attrs({{"axis", int64_t{0}}}));
  ir::ValueId axes = b.Constant("axes", ir::Tensor::FromInt64s({0}));
  ir::ValueId batch1 = b.Op("unsqueeze", "Unsqueeze", {batch, axes});
  ir::ValueId rest = b.Constant("rest", ir::Tensor::FromInt64s({-1}));
  ir::ValueId target = b.Op("concat", "Concat", {batch1, rest}, Attrs({{"axis", int64_t{0}}}));
  b.Output(b.Op("reshape", "Reshape", {x, target}));
  return b.Build().value();
}

TEST(ConstantFoldingTest, ShapeChainFoldsIntoReshapeOperand) {
  ir::Graph graph = ShapeChain(ir::ShapeFromInts({2, 3, 4, 4}));
  const ir::Graph before = graph;
  ConstantFolding pass;
  ASSERT_TRUE(pass.Run(graph).value());
  EXPECT_EQ(pass.folded(), 4);
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("%concat = const int64[2]"));
  EXPECT_THAT(text, HasSubstr("reshape: Reshape(%x, %concat) -> (%reshape: float32[2,48])"));
  EXPECT_THAT(text, Not(HasSubstr("Gather(")));
  EXPECT_EQ(graph.nodes().size(), 1u);
  EXPECT_EQ(test::CompareGraphs(graph, before, test::RandomInputs(graph), kExact), "");
}

TEST(ConstantFoldingTest, ShapeWithSymbolicBatchDoesNotFold) {
  ir::Graph graph = ShapeChain({ir::Dim::Symbol("N"), 3, 4, 4});
  const std::string before = ir::PrintGraph(graph);
  ConstantFolding pass;
  EXPECT_FALSE(pass.Run(graph).value());
  EXPECT_EQ(pass.folded(), 0);
  EXPECT_EQ(ir::PrintGraph(graph), before);
}

TEST(ConstantFoldingTest, ShapeSliceOfKnownDimsFoldsDespiteSymbolicBatch) {
  GraphBuilder b;
  ir::ValueId x = b.SymbolicInput("x", {ir::Dim::Symbol("N"), 3, 5});
  b.Output(b.Op("shape", "Shape", {x}, Attrs({{"start", int64_t{1}}})));
  ir::Graph graph = b.Build().value();
  ConstantFolding pass;
  ASSERT_TRUE(pass.Run(graph).value());
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("%shape = const int64[2]"));
  ASSERT_TRUE(graph.value(graph.outputs()[0]).constant.has_value());
  EXPECT_EQ(graph.value(graph.outputs()[0]).constant->ToInt64Vector(), (std::vector<int64_t>{3, 5}));
}

// torch 2 reads attention's head size as Shape(q)[-1] (Gather or Slice) while the batch is
// symbolic: the selected dim is known, so the selection folds; selecting the batch does not.
TEST(ConstantFoldingTest, SelectionOfKnownDimsOfAShapeFolds) {
  GraphBuilder b;
  ir::ValueId x = b.SymbolicInput("x", {ir::Dim::Symbol("N"), 3, 64});
  ir::ValueId shape = b.Op("shape", "Shape", {x});
  ir::ValueId last = b.Constant("last", ir::Tensor::FromInt64s({-1}).Reshaped({}).value());
  ir::ValueId head = b.Op("head", "Gather", {shape, last}, Attrs({{"axis", int64_t{0}}}));
  ir::ValueId as_float = b.Op("as_float", "Cast", {head}, Attrs({{"to", int64_t{1}}}));
  b.Output(b.Op("root", "Sqrt", {as_float}));
  ir::ValueId tail = b.Op(
      "tail", "Slice",
      {shape, b.Constant("s", ir::Tensor::FromInt64s({-1})), b.Constant("e", ir::Tensor::FromInt64s({INT64_MAX}))});
  b.Output(tail);
  ir::ValueId zero = b.Constant("zero", ir::Tensor::FromInt64s({0}).Reshaped({}).value());
  b.Output(b.Op("batch", "Gather", {shape, zero}, Attrs({{"axis", int64_t{0}}})));
  ir::Graph graph = b.Build().value();
  const ir::Graph before = graph;
  ConstantFolding pass;
  ASSERT_TRUE(pass.Run(graph).value());
  const ir::Value& root = graph.value(graph.outputs()[0]);
  ASSERT_TRUE(root.constant.has_value());
  EXPECT_FLOAT_EQ(static_cast<float>(root.constant->GetAsDouble(0)), 8.0f);
  ASSERT_TRUE(graph.value(graph.outputs()[1]).constant.has_value());
  EXPECT_EQ(graph.value(graph.outputs()[1]).constant->ToInt64Vector(), (std::vector<int64_t>{64}));
  EXPECT_FALSE(graph.value(graph.outputs()[2]).constant.has_value()) << "the batch is not known";
  EXPECT_EQ(test::CompareGraphs(graph, before, {test::RandomTensor({2, 3, 64}, 1)}, kExact), "");
}

TEST(ConstantFoldingTest, ConstantArithmeticFromOnnxFolds) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {2, 3});
  *g->add_output() = testing_util::TensorInfo("y", {2, 3});
  testing_util::AddInitializer(model, "a", {3}, 0.25f);
  testing_util::AddInitializer(model, "b", {3}, 2.0f);
  *g->add_node() = testing_util::MakeNode("Add", {"a", "b"}, {"ab"}, "add_ab");
  *g->add_node() = testing_util::MakeNode("Sqrt", {"ab"}, {"s"}, "sqrt");
  *g->add_node() = testing_util::MakeNode("Mul", {"x", "s"}, {"y"}, "scale");
  ir::Graph graph = importer::ImportModelBytes(model.SerializeAsString(), "").value();
  const ir::Graph before = graph;
  ConstantFolding pass;
  ASSERT_TRUE(pass.Run(graph).value());
  EXPECT_EQ(pass.folded(), 2);
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("%s = const float32[3]"));
  EXPECT_THAT(text, HasSubstr("scale: Mul(%x, %s) -> (%y: float32[2,3])"));
  EXPECT_NEAR(graph.value(graph.nodes()[0].inputs[1]).constant->GetAsDouble(0), 1.5, 1e-6);
  EXPECT_EQ(test::CompareGraphs(graph, before, test::RandomInputs(graph), kExact), "");
}

TEST(ConstantFoldingTest, FoldedGraphOutputIsAConstant) {
  GraphBuilder b;
  ir::ValueId a = b.Constant("a", test::RandomTensor({4}, 1));
  ir::ValueId c = b.Constant("c", test::RandomTensor({4}, 2));
  b.Input("x", {4});
  b.Output(b.Op("sum", "Add", {a, c}));
  ir::Graph graph = b.Build().value();
  const ir::Graph before = graph;
  ASSERT_TRUE(ConstantFolding().Run(graph).value());
  EXPECT_TRUE(graph.nodes().empty());
  EXPECT_EQ(test::CompareGraphs(graph, before, test::RandomInputs(graph), kExact), "");
}

TEST(ConstantFoldingTest, NodeReadingAGraphInputStays) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {2, 3});
  ir::ValueId k = b.Constant("k", test::RandomTensor({3}, 1));
  b.Output(b.Op("relu", "Relu", {b.Op("add", "Add", {x, k})}));
  ir::Graph graph = b.Build().value();
  ConstantFolding pass;
  EXPECT_FALSE(pass.Run(graph).value());
  EXPECT_EQ(graph.nodes().size(), 2u);
}

TEST(ConstantFoldingTest, OutputLargerThanTheCapStays) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {64, 64});
  ir::ValueId one = b.Constant("one", ir::Tensor::FromFloats({1.0f}, {1}));
  ir::ValueId shape = b.Constant("shape", ir::Tensor::FromInt64s({64, 64}));
  ir::ValueId big = b.Op("expand", "Expand", {one, shape});
  b.Output(b.Op("add", "Add", {x, big}));
  ir::Graph graph = b.Build().value();
  ConstantFolding small_cap(/*max_output_elements=*/1000);
  EXPECT_FALSE(small_cap.Run(graph).value());
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("expand: Expand(%one, %shape)"));
  ConstantFolding default_cap;
  EXPECT_TRUE(default_cap.Run(graph).value());
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("%expand = const float32[64,64]"));
}

TEST(ConstantFoldingTest, GraphWithoutConstantNodesIsUnchanged) {
  GraphBuilder b;
  b.Output(b.Op("relu", "Relu", {b.Input("x", {4})}));
  ir::Graph graph = b.Build().value();
  EXPECT_FALSE(ConstantFolding().Run(graph).value());
}

// A training-mode Dropout draws its mask per run unless it has a seed: only the seeded one folds.
TEST(ConstantFoldingTest, TrainingDropoutFoldsOnlyWithASeed) {
  for (bool seeded : {false, true}) {
    GraphBuilder b;
    ir::ValueId x = b.Constant("x", test::RandomTensor({8}, 1));
    ir::ValueId ratio = b.Constant("ratio", ir::Tensor::FromFloats({0.5f}, {}));
    ir::Tensor on = ir::Tensor::Create(ir::DType::kBool, {}).value();
    on.data<uint8_t>()[0] = 1;
    ir::ValueId training = b.Constant("training", std::move(on));
    b.Output(b.Op("drop", "Dropout", {x, ratio, training}, seeded ? Attrs({{"seed", int64_t{3}}}) : Attrs({})));
    ir::Graph graph = b.Build().value();
    EXPECT_EQ(ConstantFolding().Run(graph).value(), seeded) << (seeded ? "seeded" : "unseeded");
  }
}

}  // namespace
}  // namespace partitioner
