// How each zoo model is partitioned: the --explain summary must equal the reviewed golden file in
// tests/zoo/golden/<model>.txt (regenerate only after reading the difference), and the cover
// properties the product promises hold structurally: in resnet50 every conv heads a FusedGraph and
// every residual Add and Relu is absorbed with no BN left; in mobilenet_v2 every depthwise conv is a
// Legacy step together with its ReLU6; the LSTM and GRU layers are Legacy steps in a form cuDNN's
// RNN API takes.
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "partitioner/explain.h"
#include "runtime/cuda_steps_rnn.h"
#include "runtime/session.h"

namespace {

std::unique_ptr<runtime::Session> Load(const std::string& model) {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  auto session = runtime::Session::Create("models/zoo/" + model + "/model.onnx", options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? *std::move(session) : nullptr;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

class PartitionGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PartitionGoldenTest, SummaryMatchesGolden) {
  auto session = Load(GetParam());
  ASSERT_NE(session, nullptr);
  const std::string golden = ReadFile("tests/zoo/golden/" + GetParam() + ".txt");
  ASSERT_FALSE(golden.empty()) << "missing tests/zoo/golden/" << GetParam() << ".txt";
  EXPECT_EQ(partitioner::ExplainSummary(session->plan()), golden);
}

INSTANTIATE_TEST_SUITE_P(Zoo, PartitionGoldenTest,
                         ::testing::Values("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small",
                                           "squeezenet1_1", "vgg11_bn", "densenet121", "vit_b_16", "lstm", "gru",
                                           "alexnet_lrn", "transformer_encoder", "yolo_dynamic"));

// Kind of the step that covers each node of the given op type.
std::vector<exec::StepKind> KindsOf(const exec::Plan& plan, const std::string& op_type, bool head_only) {
  std::vector<exec::StepKind> kinds;
  for (const exec::Step& step : plan.steps) {
    for (size_t i = 0; i < step.nodes.size(); ++i) {
      if (plan.graph.node(step.nodes[i]).op_type != op_type) continue;
      if (head_only && i != 0) ADD_FAILURE() << op_type << " inside a step, not heading it";
      kinds.push_back(step.kind);
    }
  }
  return kinds;
}

TEST(PartitionPropertiesTest, Resnet50ConvsHeadFusedGraphsThatAbsorbAddsAndRelus) {
  auto session = Load("resnet50");
  ASSERT_NE(session, nullptr);
  const exec::Plan& plan = session->plan();
  const auto convs = KindsOf(plan, "Conv", /*head_only=*/true);
  EXPECT_EQ(convs.size(), 53u);
  for (exec::StepKind k : convs) EXPECT_EQ(k, exec::StepKind::kFusedGraph);
  const auto adds = KindsOf(plan, "Add", false);
  EXPECT_EQ(adds.size(), 16u);
  for (exec::StepKind k : adds) EXPECT_EQ(k, exec::StepKind::kFusedGraph);
  const auto relus = KindsOf(plan, "Relu", false);
  EXPECT_EQ(relus.size(), 49u);
  for (exec::StepKind k : relus) EXPECT_EQ(k, exec::StepKind::kFusedGraph);
  EXPECT_TRUE(KindsOf(plan, "BatchNormalization", false).empty());
}

TEST(PartitionPropertiesTest, MobilenetV2DepthwiseConvsAreLegacyWithTheirRelu6) {
  auto session = Load("mobilenet_v2");
  ASSERT_NE(session, nullptr);
  const exec::Plan& plan = session->plan();
  int depthwise = 0;
  for (const exec::Step& step : plan.steps) {
    const ir::Node& head = plan.graph.node(step.nodes[0]);
    if (head.op_type != "Conv" || head.attrs.GetInt("group", 1) == 1) continue;
    ++depthwise;
    EXPECT_EQ(step.kind, exec::StepKind::kLegacy) << head.name;
    ASSERT_EQ(step.nodes.size(), 2u) << head.name;
    EXPECT_EQ(plan.graph.node(step.nodes[1]).op_type, "Clip") << head.name;
  }
  EXPECT_EQ(depthwise, 17);
}

TEST(PartitionPropertiesTest, RecurrentLayersAreLegacyStepsCudnnTakes) {
  for (const auto& [model, op] : {std::pair<std::string, std::string>{"lstm", "LSTM"}, {"gru", "GRU"}}) {
    auto session = Load(model);
    ASSERT_NE(session, nullptr);
    const exec::Plan& plan = session->plan();
    int layers = 0;
    for (const exec::Step& step : plan.steps) {
      const ir::Node& head = plan.graph.node(step.nodes[0]);
      if (head.op_type != op) continue;
      ++layers;
      EXPECT_EQ(step.kind, exec::StepKind::kLegacy) << head.name;
      EXPECT_EQ(exec::RecurrentRejection(plan.graph, head), "") << head.name;
    }
    EXPECT_EQ(layers, 2) << model;
  }
}

}  // namespace
