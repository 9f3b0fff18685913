// The step cover on small graphs: what fuses, what goes Legacy/Alias/Kernel, and the reason printed
// where fusion stops at a pointwise op. Fixtures are ONNX graphs built in code, imported as users'
// models are; expectations are --explain lines.
#include "partitioner/cover.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/importer.h"
#include "partitioner/explain.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::MakeNode;
using testing_util::TensorInfo;

// x[1,16,8,8] plus conv weights w1, w2 (16->16, 3x3) and bias b.
onnx::ModelProto BaseModel() {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {1, 16, 8, 8});
  testing_util::AddInitializer(model, "w1", {16, 16, 3, 3});
  testing_util::AddInitializer(model, "w2", {16, 16, 3, 3});
  testing_util::AddInitializer(model, "b", {16, 1, 1});
  testing_util::AddInitializer(model, "dw", {16, 1, 3, 3});
  testing_util::AddInitializer(model, "six", {});
  testing_util::AddInitializer(model, "zero", {}, 0.0f);
  return model;
}

onnx::NodeProto Conv(const std::string& in, const std::string& w, const std::string& out, int group = 1) {
  onnx::NodeProto node = MakeNode("Conv", {in, w}, {out}, out);
  testing_util::SetIntsAttr(node, "pads", {1, 1, 1, 1});
  if (group != 1) testing_util::SetIntAttr(node, "group", group);
  return node;
}

// The cover of `graph` as --explain prints it, or the error.
std::string ExplainGraph(absl::StatusOr<ir::Graph> graph) {
  if (!graph.ok()) return std::string(graph.status().message());
  exec::Plan plan;
  plan.graph = *std::move(graph);
  absl::StatusOr<std::vector<exec::Step>> steps = CoverGraph(plan.graph, Sm90Rules());
  if (!steps.ok()) return std::string(steps.status().message());
  plan.steps = *std::move(steps);
  return ExplainText(plan);
}

std::string Explain(onnx::ModelProto model, const std::string& output,
                    std::vector<std::variant<int64_t, std::string>> output_dims = {1, 16, 8, 8}) {
  *model.mutable_graph()->add_output() = TensorInfo(output, std::move(output_dims));
  return ExplainGraph(importer::ImportModelBytes(model.SerializeAsString(), ""));
}

TEST(CoverTest, ConvBiasReluIsOneFusedGraph) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_node() = Conv("x", "w1", "c");
  *g->add_node() = MakeNode("Add", {"c", "b"}, {"cb"}, "bias");
  *g->add_node() = MakeNode("Relu", {"cb"}, {"y"}, "relu");
  const std::string text = Explain(m, "y");
  EXPECT_THAT(text, HasSubstr("#0 FusedGraph Conv+Add+Relu [c:Conv, bias:Add, relu:Relu]"));
  EXPECT_THAT(text, HasSubstr("steps: FusedGraph 1, Legacy 0, Kernel 0, Alias 0"));
  EXPECT_THAT(text, HasSubstr("fused pointwise ops: 2 (Add 1, Relu 1)"));
}

TEST(CoverTest, ResidualAddWithOperandComputedLaterIsFusedAndOrdered) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_node() = Conv("x", "w1", "main");
  *g->add_node() = Conv("x", "w2", "shortcut");  // produced after the main conv in node order
  *g->add_node() = MakeNode("Add", {"main", "shortcut"}, {"sum"}, "residual");
  *g->add_node() = MakeNode("Relu", {"sum"}, {"y"}, "relu");
  const std::string text = Explain(m, "y");
  EXPECT_THAT(text, HasSubstr("#0 FusedGraph Conv [shortcut:Conv]"));
  EXPECT_THAT(text, HasSubstr("#1 FusedGraph Conv+Add+Relu [main:Conv, residual:Add, relu:Relu]"));
}

TEST(CoverTest, SiluOfTheConvOutputFuses) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_node() = Conv("x", "w1", "c");
  *g->add_node() = MakeNode("Sigmoid", {"c"}, {"s"}, "sig");
  *g->add_node() = MakeNode("Mul", {"c", "s"}, {"y"}, "swish");
  EXPECT_THAT(Explain(m, "y"), HasSubstr("#0 FusedGraph Conv+Sigmoid+Mul [c:Conv, sig:Sigmoid, swish:Mul]"));
}

TEST(CoverTest, OperandOfWrongShapeStopsFusionWithReason) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_input() = TensorInfo("mask", {1, 1, 8, 8});
  *g->add_node() = Conv("x", "w1", "c");
  *g->add_node() = MakeNode("Add", {"c", "mask"}, {"y"}, "masked");
  const std::string text = Explain(m, "y");
  EXPECT_THAT(text, HasSubstr("#0 FusedGraph Conv [c:Conv]"));
  EXPECT_THAT(text, HasSubstr("why: not fused Add 'masked': Add operand shape float32[1,1,8,8] not allowed as "
                              "epilogue operand"));
  EXPECT_THAT(text, HasSubstr("#1 Kernel Add [masked:Add]"));
}

TEST(CoverTest, SubWithConvOutputSecondIsNotFused) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_node() = Conv("x", "w1", "c");
  *g->add_node() = MakeNode("Sub", {"x", "c"}, {"y"}, "diff");
  EXPECT_THAT(Explain(m, "y"), HasSubstr("why: not fused Sub 'diff': Sub has the anchor's result as second operand"));
}

TEST(CoverTest, IntermediateReadTwiceEndsTheRegion) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_node() = Conv("x", "w1", "c");
  *g->add_node() = MakeNode("Relu", {"c"}, {"r"}, "relu");
  *g->add_node() = Conv("r", "w2", "c2");
  *g->add_node() = MakeNode("Add", {"c2", "r"}, {"y"}, "add");
  const std::string text = Explain(m, "y");
  // r is read by conv c2 and by add: the first region ends at Relu, c2 takes the Add.
  EXPECT_THAT(text, HasSubstr("#0 FusedGraph Conv+Relu [c:Conv, relu:Relu]"));
  EXPECT_THAT(text, HasSubstr("#1 FusedGraph Conv+Add [c2:Conv, add:Add]"));
}

TEST(CoverTest, DepthwiseConvWithRelu6IsLegacy) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_node() = Conv("x", "dw", "d", /*group=*/16);
  *g->add_node() = MakeNode("Clip", {"d", "zero", "six"}, {"y"}, "relu6");
  const std::string text = Explain(m, "y");
  EXPECT_THAT(text, HasSubstr("#0 Legacy Conv+Clip [d:Conv, relu6:Clip]"));
  EXPECT_THAT(text, HasSubstr("why: not a FusedGraph: depthwise conv (group=16): per-group alignment 32 bits < 128"));
  EXPECT_THAT(text, Not(HasSubstr("FusedGraph Conv")));
}

TEST(CoverTest, DepthwiseConvTakesASiluTail) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_node() = Conv("x", "dw", "d", /*group=*/16);
  *g->add_node() = MakeNode("Sigmoid", {"d"}, {"s"}, "sig");
  *g->add_node() = MakeNode("Mul", {"s", "d"}, {"y"}, "silu");
  EXPECT_THAT(Explain(m, "y"), HasSubstr("#0 Legacy Conv+Sigmoid+Mul [d:Conv, sig:Sigmoid, silu:Mul]"));
}

TEST(CoverTest, SiluTailWhoseSigmoidIsReadElsewhereStaysApart) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_node() = Conv("x", "dw", "d", /*group=*/16);
  *g->add_node() = MakeNode("Sigmoid", {"d"}, {"s"}, "sig");
  *g->add_node() = MakeNode("Mul", {"d", "s"}, {"p"}, "silu");
  *g->add_node() = MakeNode("Add", {"p", "s"}, {"y"}, "add");
  const std::string text = Explain(m, "y");
  EXPECT_THAT(text, HasSubstr("#0 Legacy Conv [d:Conv]"));
  EXPECT_THAT(text, Not(HasSubstr("Conv+Sigmoid")));
}

// An fp32 conv over C input channels (constant weights).
std::string Fp32ConvExplain(int64_t c) {
  onnx::ModelProto m = testing_util::MakeModel(13);
  auto* g = m.mutable_graph();
  *g->add_input() = TensorInfo("img", {1, c, 8, 8});
  testing_util::AddInitializer(m, "w", {16, c, 3, 3});
  *g->add_node() = Conv("img", "w", "y");
  return Explain(m, "y");
}

TEST(CoverTest, UnalignedStemIsLegacyWithReason) {
  EXPECT_THAT(Fp32ConvExplain(3),
              HasSubstr("why: not a FusedGraph: input channels C = 3: 96 bits, not a multiple of 128"));
}

// A float16 conv over C input channels (weights a graph input) followed by Relu.
onnx::ModelProto Fp16ConvRelu(int64_t c) {
  onnx::ModelProto m = testing_util::MakeModel(13);
  auto* g = m.mutable_graph();
  *g->add_input() = TensorInfo("img", {1, c, 8, 8}, onnx::TensorProto::FLOAT16);
  *g->add_input() = TensorInfo("w", {16, c, 3, 3}, onnx::TensorProto::FLOAT16);
  *g->add_node() = Conv("img", "w", "c");
  *g->add_node() = MakeNode("Relu", {"c"}, {"y"}, "relu");
  return m;
}

TEST(CoverTest, Fp16StemOfFourChannelsFuses) {
  // 4 fp16 channels are 64 bits, under the 128-bit mainloop alignment: the stem rule lets them fuse.
  EXPECT_THAT(Explain(Fp16ConvRelu(4), "y"), HasSubstr("#0 FusedGraph Conv+Relu [c:Conv, relu:Relu]"));
  EXPECT_THAT(Explain(Fp16ConvRelu(2), "y"),
              HasSubstr("why: not a FusedGraph: input channels C = 2: 32 bits, not a multiple of 128"));
}

TEST(CoverTest, Fp32ConvOfTwoChannelsStaysLegacy) {
  EXPECT_THAT(Fp32ConvExplain(2),
              HasSubstr("why: not a FusedGraph: input channels C = 2: 64 bits, not a multiple of 128"));
}

// x float32[1,3,8,8] -> Cast to float16 -> Pad (one zero channel at the end of axis 1) -> y; with
// `also_read`, the Cast's result is an output too.
std::string CastPadExplain(bool also_read) {
  test::GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 3, 8, 8});
  ir::ValueId cast = b.Op("cast", "Cast", {x}, test::Attrs({{"to", int64_t{10}}}));
  ir::Tensor pads = *ir::Tensor::Create(ir::DType::kInt64, {8});
  for (int i = 0; i < 8; ++i) pads.data<int64_t>()[i] = i == 5 ? 1 : 0;
  b.Output(b.Op("pad", "Pad", {cast, b.Constant("pads", pads)}));
  if (also_read) b.Output(cast);
  return ExplainGraph(b.Build());
}

TEST(CoverTest, InputCastJoinsTheChannelPad) {
  EXPECT_THAT(CastPadExplain(false), HasSubstr("#0 Kernel Cast+Pad [cast:Cast, pad:Pad]"));
  const std::string apart = CastPadExplain(true);  // the Cast's result is read elsewhere too
  EXPECT_THAT(apart, HasSubstr("Kernel Cast [cast:Cast]"));
  EXPECT_THAT(apart, HasSubstr("Kernel Pad [pad:Pad]"));
}

TEST(CoverTest, ReshapeIsAliasAndPoolIsLegacy) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  onnx::NodeProto pool = MakeNode("MaxPool", {"x"}, {"p"}, "pool");
  testing_util::SetIntsAttr(pool, "kernel_shape", {1, 1});
  *g->add_node() = pool;
  *g->add_node() = MakeNode("Identity", {"p"}, {"y"}, "same");
  const std::string text = Explain(m, "y");
  EXPECT_THAT(text, HasSubstr("#0 Legacy MaxPool [pool:MaxPool]"));
  EXPECT_THAT(text, HasSubstr("#1 Alias Identity [same:Identity]"));
}

TEST(CoverTest, RecurrentOpsAreLegacy) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    const int64_t gates = std::string(op) == "LSTM" ? 4 : std::string(op) == "GRU" ? 3 : 1;
    onnx::ModelProto m = testing_util::MakeModel(14);
    auto* g = m.mutable_graph();
    *g->add_input() = TensorInfo("x", {5, 2, 3});
    testing_util::AddInitializer(m, "w", {1, gates * 4, 3});
    testing_util::AddInitializer(m, "r", {1, gates * 4, 4});
    onnx::NodeProto node = MakeNode(op, {"x", "w", "r"}, {"y"}, "rec");
    testing_util::SetIntAttr(node, "hidden_size", 4);
    *g->add_node() = node;
    EXPECT_THAT(Explain(m, "y", {5, 1, 2, 4}), HasSubstr(absl::StrCat("#0 Legacy ", op, " [rec:", op, "]"))) << op;
  }
}

TEST(CoverTest, DropoutIsAliasOnlyInItsInferenceForm) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_input() = TensorInfo("training", {}, onnx::TensorProto::BOOL);
  *g->add_node() = MakeNode("Dropout", {"x"}, {"d"}, "infer");
  *g->add_node() = MakeNode("Dropout", {"d", "", "training"}, {"y"}, "train");
  const std::string text = Explain(m, "y");
  EXPECT_THAT(text, HasSubstr("#0 Alias Dropout [infer:Dropout]"));
  EXPECT_THAT(text, HasSubstr("#1 Kernel Dropout [train:Dropout]"));
}

// A post-LN transformer block's output: x[2,8,16] @ w + b, plus the residual x, then
// LayerNormalization; `sum_also_output` makes the sum a graph output too.
onnx::ModelProto PostNormBlock(bool sum_also_output) {
  onnx::ModelProto model = testing_util::MakeModel(17);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {2, 8, 16});
  testing_util::AddInitializer(model, "w", {16, 16});
  testing_util::AddInitializer(model, "b", {16});
  testing_util::AddInitializer(model, "gamma", {16});
  testing_util::AddInitializer(model, "beta", {16});
  *g->add_node() = MakeNode("MatMul", {"x", "w"}, {"xw"}, "proj");
  *g->add_node() = MakeNode("Add", {"xw", "b"}, {"xwb"}, "bias");
  *g->add_node() = MakeNode("Add", {"xwb", "x"}, {"sum"}, "residual");
  onnx::NodeProto norm = MakeNode("LayerNormalization", {"sum", "gamma", "beta"}, {"y"}, "norm");
  testing_util::SetIntAttr(norm, "axis", -1);
  *g->add_node() = norm;
  if (sum_also_output) *g->add_output() = TensorInfo("sum", {2, 8, 16});
  return model;
}

TEST(CoverTest, ResidualAddJoinsTheLayerNormThatReadsIt) {
  const std::string text = Explain(PostNormBlock(false), "y", {2, 8, 16});
  EXPECT_THAT(text, HasSubstr("#0 FusedGraph MatMul+Add [proj:MatMul, bias:Add]"));
  EXPECT_THAT(text, HasSubstr("why: not fused Add 'residual': the residual Add joins the LayerNormalization"));
  EXPECT_THAT(text, HasSubstr("#1 Kernel Add+LayerNormalization [residual:Add, norm:LayerNormalization]"));
}

TEST(CoverTest, ResidualAddReadOutsideTheNormStaysInTheMatmulGraph) {
  const std::string text = Explain(PostNormBlock(true), "y", {2, 8, 16});
  EXPECT_THAT(text, HasSubstr("#0 FusedGraph MatMul+Add+Add [proj:MatMul, bias:Add, residual:Add]"));
  EXPECT_THAT(text, HasSubstr("#1 Kernel LayerNormalization [norm:LayerNormalization]"));
}

}  // namespace
}  // namespace partitioner
