// LowerFusedStep on the CPU (no GPU needed): which cuDNN pointwise mode a Relu tail gets, and the
// work (ConvFlops) that decides how widely a conv plan is autotuned. A dense
// conv + bias + Relu writes RELU_FWD (cuDNN's precompiled conv+bias+activation engines); a Relu
// after a residual Add keeps MAX(x, 0), which the runtime-compiled fusion engines serve.
#include "runtime/fused_lowering.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/plan_builder.h"
#include "tests/util/covered_plan.h"
#include "tests/util/onnx_builder.h"

namespace exec {
namespace {

using testing_util::MakeNode;
using testing_util::TensorInfo;

// x[1,16,8,8] -> Conv(w, bias) -> [Add(residual)] -> Relu -> y.
onnx::ModelProto ConvRelu(bool residual) {
  onnx::ModelProto m = testing_util::MakeModel(13);
  auto* g = m.mutable_graph();
  *g->add_input() = TensorInfo("x", {1, 16, 8, 8});
  *g->add_input() = TensorInfo("r", {1, 16, 8, 8});
  testing_util::AddInitializer(m, "w", {16, 16, 3, 3});
  testing_util::AddInitializer(m, "b", {16});
  onnx::NodeProto conv = MakeNode("Conv", {"x", "w", "b"}, {"c"}, "conv");
  testing_util::SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  *g->add_node() = conv;
  if (residual) *g->add_node() = MakeNode("Add", {"c", "r"}, {"s"}, "add");
  *g->add_node() = MakeNode("Relu", {residual ? "s" : "c"}, {"y"}, "relu");
  *g->add_output() = TensorInfo("y", {1, 16, 8, 8});
  return m;
}

// The lowered first step.
absl::StatusOr<LoweredStep> LowerFirstStep(const onnx::ModelProto& model, bool allow_tf32 = false) {
  absl::StatusOr<Plan> covered = testing_util::CoveredPlan(model);
  EXPECT_TRUE(covered.ok()) << covered.status();
  if (!covered.ok()) return covered.status();
  Plan plan = *std::move(covered);
  EXPECT_EQ(plan.steps[0].kind, StepKind::kFusedGraph);
  std::map<ir::ValueId, std::vector<int64_t>> dims;
  for (ir::ValueId id = 0; id < static_cast<ir::ValueId>(plan.graph.values().size()); ++id) {
    const ir::TensorType& t = plan.graph.value(id).type;
    if (t.shape) {
      if (std::optional<std::vector<int64_t>> d = ir::ShapeToInts(*t.shape)) dims[id] = *d;
    }
  }
  return LowerFusedStep(plan, plan.steps[0], dims, allow_tf32);
}

// The pointwise modes of the lowered first step.
std::vector<std::string> EpilogueModes(const onnx::ModelProto& model) {
  absl::StatusOr<LoweredStep> lowered = LowerFirstStep(model);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  std::vector<std::string> modes;
  if (lowered.ok()) {
    for (const cudnn::PointwiseOp& op : lowered->spec.epilogue) modes.push_back(op.mode);
  }
  return modes;
}

TEST(FusedLoweringTest, ConvBiasReluWritesReluFwd) {
  EXPECT_THAT(EpilogueModes(ConvRelu(/*residual=*/false)), testing::ElementsAre("ADD", "RELU_FWD"));
}

TEST(FusedLoweringTest, ReluAfterResidualAddKeepsMax) {
  EXPECT_THAT(EpilogueModes(ConvRelu(/*residual=*/true)), testing::ElementsAre("ADD", "ADD", "MAX"));
}

// x[1,16,8,8] -> Conv(w, bias) -> Sigmoid -> Mul(conv, sigmoid) (SiLU as exporters write it), or
// with `gate` the Mul takes the sigmoid times another input r instead of the conv output.
onnx::ModelProto ConvSigmoidMul(bool sigmoid_first, bool gate) {
  onnx::ModelProto m = testing_util::MakeModel(13);
  auto* g = m.mutable_graph();
  *g->add_input() = TensorInfo("x", {1, 16, 8, 8});
  *g->add_input() = TensorInfo("r", {1, 16, 8, 8});
  testing_util::AddInitializer(m, "w", {16, 16, 1, 1});
  testing_util::AddInitializer(m, "b", {16});
  *g->add_node() = MakeNode("Conv", {"x", "w", "b"}, {"c"}, "conv");
  *g->add_node() = MakeNode("Sigmoid", {"c"}, {"s"}, "sigmoid");
  const std::string other = gate ? "r" : "c";
  *g->add_node() = MakeNode(
      "Mul", sigmoid_first ? std::vector<std::string>{"s", other} : std::vector<std::string>{other, "s"}, {"y"}, "mul");
  *g->add_output() = TensorInfo("y", {1, 16, 8, 8});
  return m;
}

TEST(FusedLoweringTest, SiluIsOneSwish) {
  EXPECT_THAT(EpilogueModes(ConvSigmoidMul(/*sigmoid_first=*/false, /*gate=*/false)),
              testing::ElementsAre("ADD", "SWISH_FWD"));
  EXPECT_THAT(EpilogueModes(ConvSigmoidMul(/*sigmoid_first=*/true, /*gate=*/false)),
              testing::ElementsAre("ADD", "SWISH_FWD"));
  absl::StatusOr<LoweredStep> lowered = LowerFirstStep(ConvSigmoidMul(false, false));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(lowered->spec.epilogue[1].alpha, 1.0);  // beta: x * sigmoid(1 * x)
  EXPECT_EQ(lowered->spec.epilogue[1].out, lowered->output_uid);
}

TEST(FusedLoweringTest, SigmoidTimesAnotherValueStaysTwoOps) {
  absl::StatusOr<LoweredStep> lowered = LowerFirstStep(ConvSigmoidMul(/*sigmoid_first=*/false, /*gate=*/true));
  if (!lowered.ok()) GTEST_SKIP() << "the Mul by r is not in the conv's step here: " << lowered.status();
  std::vector<std::string> modes;
  for (const cudnn::PointwiseOp& op : lowered->spec.epilogue) modes.push_back(op.mode);
  EXPECT_THAT(modes, testing::Not(testing::Contains("SWISH_FWD")));
}

// x[1,C,16,16] -> Conv KxK -> Relu: a 4-channel 3x3 stem computes in plain float32 in a tf32 plan;
// a 16-channel conv and a 4-channel 7x7 stem (196 values, beyond the own 3xTF32 kernel) in TF32.
TEST(FusedLoweringTest, Float32StemStaysStrictInTf32Plans) {
  struct Case {
    int64_t channels, kernel;
    bool strict;
  };
  for (const Case& c : {Case{4, 3, true}, Case{16, 3, false}, Case{4, 7, false}}) {
    onnx::ModelProto m = testing_util::MakeModel(13);
    auto* g = m.mutable_graph();
    const int64_t out = 16 - c.kernel + 1;
    *g->add_input() = TensorInfo("x", {1, c.channels, 16, 16});
    testing_util::AddInitializer(m, "w", {8, c.channels, c.kernel, c.kernel});
    *g->add_node() = MakeNode("Conv", {"x", "w"}, {"c"}, "conv");
    *g->add_node() = MakeNode("Relu", {"c"}, {"y"}, "relu");
    *g->add_output() = TensorInfo("y", {1, 8, out, out});
    absl::StatusOr<LoweredStep> lowered = LowerFirstStep(m, /*allow_tf32=*/true);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_EQ(lowered->spec.allow_tf32, !c.strict) << c.channels << " channels, " << c.kernel << "x" << c.kernel;
  }
}

// A transformer's projection: x[2,5,16] MatMul w[16,8] + b[8] + residual r[2,5,8] is one matmul
// graph over the same bytes viewed as [1,10,16] x [1,16,8], the residual full-size, the bias a row
// (tf32 or fp16; strict fp32 keeps it off cuDNN, whose matmul engine would compute it in TF32).
TEST(FusedLoweringTest, MatMulOfThreeDimInputFoldsLeadingDims) {
  onnx::ModelProto m = testing_util::MakeModel(13);
  auto* g = m.mutable_graph();
  *g->add_input() = TensorInfo("x", {2, 5, 16});
  *g->add_input() = TensorInfo("r", {2, 5, 8});
  testing_util::AddInitializer(m, "w", {16, 8});
  testing_util::AddInitializer(m, "b", {8});
  *g->add_node() = MakeNode("MatMul", {"x", "w"}, {"p"}, "proj");
  *g->add_node() = MakeNode("Add", {"p", "b"}, {"pb"}, "bias");
  *g->add_node() = MakeNode("Add", {"pb", "r"}, {"y"}, "residual");
  *g->add_output() = TensorInfo("y", {2, 5, 8});
  EXPECT_THAT(LowerFirstStep(m).status().message(), testing::HasSubstr("strict fp32"));
  absl::StatusOr<LoweredStep> lowered = LowerFirstStep(m, /*allow_tf32=*/true);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(lowered->spec.x.dims, (std::vector<int64_t>{1, 10, 16}));
  EXPECT_EQ(lowered->spec.y.dims, (std::vector<int64_t>{1, 10, 8}));
  EXPECT_EQ(lowered->output_dims, (std::vector<int64_t>{2, 5, 8}));
  ASSERT_EQ(lowered->spec.epilogue.size(), 2u);
  std::map<int64_t, std::vector<int64_t>> dims_of;
  for (const cudnn::TensorDesc& t : lowered->spec.extra) dims_of[t.uid] = t.dims;
  EXPECT_EQ(dims_of[lowered->spec.epilogue[0].in1], (std::vector<int64_t>{1, 1, 8}));
  EXPECT_EQ(dims_of[lowered->spec.epilogue[1].in1], (std::vector<int64_t>{1, 10, 8}));
}

TEST(FusedLoweringTest, ConvFlopsCountsTwoPerMultiplyAdd) {
  // ConvRelu: 16 output channels of 8x8 from 16 input channels through 3x3 filters.
  absl::StatusOr<LoweredStep> conv = LowerFirstStep(ConvRelu(/*residual=*/true));
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_DOUBLE_EQ(ConvFlops(conv->spec), 2.0 * (16 * 8 * 8) * (16 * 3 * 3));
  EXPECT_LT(ConvFlops(conv->spec), kLargeConvFlops);
  cudnn::FusedGraphSpec resnet_conv3;  // resnet50 layer1 conv3 at batch 32: 64 -> 256 channels, 56x56
  resnet_conv3.w.dims = {256, 64, 1, 1};
  resnet_conv3.y.dims = {32, 256, 56, 56};
  EXPECT_GE(ConvFlops(resnet_conv3), kLargeConvFlops);
  resnet_conv3.y.dims[0] = 1;
  EXPECT_LT(ConvFlops(resnet_conv3), kLargeConvFlops) << "batch 1 keeps the precompiled-only autotuning";
  resnet_conv3.anchor = cudnn::FusedGraphSpec::kMatMul;
  EXPECT_EQ(ConvFlops(resnet_conv3), 0);
}

}  // namespace
}  // namespace exec
