// Squeeze-excite matching: the MLPs torchvision's EfficientNet (SiLU, Sigmoid) and MobileNetV3
// (Relu, HardSigmoid) export become one Kernel step, also after channel padding put a Pad inside;
// chains whose values are read elsewhere, that do not start on a pooled 1x1 value, or whose batch
// is large, do not.
#include "partitioner/squeeze_excite.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "partitioner/channel_padding.h"
#include "partitioner/cover.h"
#include "partitioner/explain.h"
#include "partitioner/fusion_rules.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using test::Attrs;
using test::GraphBuilder;
using test::RandomTensor;

struct SeOptions {
  int64_t channels = 16, reduced = 4;
  bool mobilenet = false;         // Relu + HardSigmoid instead of SiLU + Sigmoid
  bool hidden_is_output = false;  // fc1's output also a graph output
  bool pooled = true;             // the MLP reads GlobalAveragePool's [N, C, 1, 1]
  int64_t batch = 2;
  ir::DType dtype = ir::DType::kFloat32;
};

// x[N, C, 4, 4] -> GlobalAveragePool -> MLP -> Mul(x, scale).
ir::Graph SqueezeExciteGraph(const SeOptions& o) {
  GraphBuilder b;
  const int64_t c = o.channels, r = o.reduced;
  ir::ValueId x = b.Input("x", {o.batch, c, 4, 4}, o.dtype);
  ir::ValueId s = o.pooled ? b.Op("pool", "GlobalAveragePool", {x}) : x;
  ir::ValueId h = b.Op("fc1", "Conv",
                       {s, b.Constant("w1", RandomTensor({r, c, 1, 1}, 1, -1, 1, o.dtype)),
                        b.Constant("b1", RandomTensor({r}, 2, -1, 1, o.dtype))});
  ir::ValueId a;
  if (o.mobilenet) {
    a = b.Op("relu", "Relu", {h});
  } else {
    a = b.Op("silu_mul", "Mul", {h, b.Op("silu_sigmoid", "Sigmoid", {h})});
  }
  ir::ValueId z = b.Op("fc2", "Conv",
                       {a, b.Constant("w2", RandomTensor({c, r, 1, 1}, 3, -1, 1, o.dtype)),
                        b.Constant("b2", RandomTensor({c}, 4, -1, 1, o.dtype))});
  ir::ValueId gate = o.mobilenet ? b.Op("gate", "HardSigmoid", {z}, Attrs({{"alpha", 1.f / 6}, {"beta", 0.5f}}))
                                 : b.Op("gate", "Sigmoid", {z});
  b.Output(b.Op("scale", "Mul", {x, gate}));
  if (o.hidden_is_output) b.Output(h);
  return b.Build().value();
}

// The cover's step that holds node `name`.
const exec::Step& StepOf(const std::vector<exec::Step>& steps, const ir::Graph& g, const std::string& name) {
  for (const exec::Step& s : steps) {
    for (ir::NodeId n : s.nodes) {
      if (g.node(n).name == name) return s;
    }
  }
  static const exec::Step kNone;
  return kNone;
}

std::vector<exec::Step> Cover(const ir::Graph& g) {
  absl::StatusOr<std::vector<exec::Step>> steps = CoverGraph(g, Sm90Rules());
  EXPECT_TRUE(steps.ok()) << steps.status();
  return steps.ok() ? *std::move(steps) : std::vector<exec::Step>{};
}

TEST(SqueezeExciteTest, EfficientNetMlpIsOneKernelStep) {
  const ir::Graph g = SqueezeExciteGraph({});
  const std::vector<exec::Step> steps = Cover(g);
  const exec::Step& se = StepOf(steps, g, "fc1");
  EXPECT_EQ(se.kind, exec::StepKind::kKernel);
  EXPECT_EQ(se.pattern, "Conv+Sigmoid+Mul+Conv+Sigmoid");
  std::optional<SqueezeExciteForm> form = MatchSqueezeExciteStep(g, se.nodes);
  ASSERT_TRUE(form.has_value());
  EXPECT_EQ(form->channels, 16);
  EXPECT_EQ(form->reduced, 4);
  EXPECT_EQ(form->w2_row, 4);
  EXPECT_EQ(form->activation, SqueezeExciteForm::kSilu);
  EXPECT_EQ(form->gate, SqueezeExciteForm::kSigmoid);
  EXPECT_EQ(g.value(form->output).name, "gate");
  EXPECT_EQ(se.outputs, std::vector<ir::ValueId>{form->output});
  EXPECT_EQ(StepOf(steps, g, "scale").nodes.size(), 1u);  // the channel scale stays its own step
  exec::Plan plan;
  plan.graph = g;
  plan.steps = steps;
  EXPECT_THAT(ExplainSummary(plan), ::testing::HasSubstr("squeeze-excite MLPs as one step: 1\n"));
  EXPECT_THAT(ExplainJson(plan), ::testing::HasSubstr("\"squeeze_excite\": 1"));
}

TEST(SqueezeExciteTest, MobileNetV3MlpWithHardSigmoid) {
  SeOptions o;
  o.mobilenet = true;
  const ir::Graph g = SqueezeExciteGraph(o);
  const std::vector<exec::Step> steps = Cover(g);
  std::optional<SqueezeExciteForm> form = MatchSqueezeExciteStep(g, StepOf(steps, g, "fc1").nodes);
  ASSERT_TRUE(form.has_value());
  EXPECT_EQ(form->activation, SqueezeExciteForm::kRelu);
  EXPECT_EQ(form->gate, SqueezeExciteForm::kHardSigmoid);
  EXPECT_FLOAT_EQ(form->alpha, 1.f / 6);
  EXPECT_FLOAT_EQ(form->beta, 0.5f);
}

TEST(SqueezeExciteTest, ChannelPaddingPadJoinsTheStep) {
  SeOptions o;
  o.channels = 40;
  o.reduced = 10;  // fp16: padded to 12 before fc2
  o.dtype = ir::DType::kFloat16;
  ir::Graph g = SqueezeExciteGraph(o);
  const ir::Graph before = g;
  ChannelPadding padding(/*alignment_bytes=*/8);
  ASSERT_TRUE(padding.Run(g).ok());
  ASSERT_EQ(padding.padded(), 1);
  EXPECT_EQ(test::CompareGraphs(g, before, test::RandomInputs(g), {1e-2, 1e-2}), "");
  const std::vector<exec::Step> steps = Cover(g);
  const exec::Step& se = StepOf(steps, g, "fc1");
  EXPECT_EQ(se.pattern, "Conv+Sigmoid+Mul+Pad+Conv+Sigmoid");
  std::optional<SqueezeExciteForm> form = MatchSqueezeExciteStep(g, se.nodes);
  ASSERT_TRUE(form.has_value());
  EXPECT_EQ(form->reduced, 10);
  EXPECT_EQ(form->w2_row, 12);
}

TEST(SqueezeExciteTest, ValueReadOutsideTheChainIsNotMatched) {
  SeOptions o;
  o.hidden_is_output = true;
  const ir::Graph g = SqueezeExciteGraph(o);
  const std::vector<exec::Step> steps = Cover(g);
  EXPECT_NE(StepOf(steps, g, "fc1").pattern, "Conv+Sigmoid+Mul+Conv+Sigmoid");
  EXPECT_FALSE(MatchSqueezeExciteStep(g, StepOf(steps, g, "fc1").nodes).has_value());
}

TEST(SqueezeExciteTest, LargeBatchKeepsTheCudnnSteps) {
  SeOptions o;
  o.batch = kMaxSqueezeExciteBatch + 1;
  const ir::Graph g = SqueezeExciteGraph(o);
  const std::vector<exec::Step> steps = Cover(g);
  EXPECT_EQ(StepOf(steps, g, "fc1").kind, exec::StepKind::kFusedGraph);
  EXPECT_NE(StepOf(steps, g, "fc1").pattern, "Conv+Sigmoid+Mul+Conv+Sigmoid");
}

TEST(SqueezeExciteTest, WideMlpKeepsTheCudnnSteps) {  // MobileNetV3-Large's widest: 960 x 240
  SeOptions o;
  o.mobilenet = true;
  o.channels = 960;
  o.reduced = 240;
  ASSERT_GT(o.channels * o.reduced, kMaxSqueezeExciteWeights);
  const ir::Graph g = SqueezeExciteGraph(o);
  EXPECT_NE(StepOf(Cover(g), g, "fc1").pattern, "Conv+Relu+Conv+HardSigmoid");
  o.reduced = 48;  // 960 x 48: one step
  const ir::Graph narrow = SqueezeExciteGraph(o);
  EXPECT_EQ(StepOf(Cover(narrow), narrow, "fc1").pattern, "Conv+Relu+Conv+HardSigmoid");
}

TEST(SqueezeExciteTest, ConvOnAFeatureMapIsNotMatched) {
  SeOptions o;
  o.pooled = false;  // fc1 reads x[2, C, 4, 4]
  const ir::Graph g = SqueezeExciteGraph(o);
  const ValueReaders readers = [&](ir::ValueId v) {
    std::vector<ir::NodeId> r;
    for (ir::NodeId n = 0; n < static_cast<ir::NodeId>(g.nodes().size()); ++n) {
      for (ir::ValueId in : g.node(n).inputs) {
        if (in == v) r.push_back(n);
      }
    }
    return r;
  };
  EXPECT_FALSE(MatchSqueezeExcite(g, 0, readers).has_value());
}

}  // namespace
}  // namespace partitioner
