// MatchScaledConvs on small imported graphs (no GPU needed): which gate Mul + 1x1 conv step pairs the
// GPU may fold (runtime/scaled_conv_form.h), and the shapes, readers and convs it must refuse.
#include "runtime/scaled_conv_form.h"

#include "gtest/gtest.h"
#include "tests/util/covered_plan.h"
#include "tests/util/onnx_builder.h"

namespace exec {
namespace {

using testing_util::MakeNode;
using testing_util::TensorInfo;

struct Case {
  bool residual = false;
  bool gate_first = false;  // Mul(gate, x) instead of Mul(x, gate)
  int kernel = 1;           // the conv's kernel size
  bool product_is_output = false;
  bool full_gate = false;  // the "gate" is a whole map [2, 32, 8, 8]
};

// x [2, 32, 8, 8] * gate [2, 32, 1, 1] -> Conv(w [16, 32, k, k], b) (-> Add(r)) -> y.
Plan MakePlan(const Case& c) {
  onnx::ModelProto m = testing_util::MakeModel(13);
  auto* g = m.mutable_graph();
  *g->add_input() = TensorInfo("x", {2, 32, 8, 8});
  const int64_t gate_hw = c.full_gate ? 8 : 1;
  *g->add_input() = TensorInfo("gate", {2, 32, gate_hw, gate_hw});
  *g->add_input() = TensorInfo("r", {2, 16, 8, 8});
  testing_util::AddInitializer(m, "w", {16, 32, c.kernel, c.kernel});
  testing_util::AddInitializer(m, "b", {16});
  *g->add_node() = c.gate_first ? MakeNode("Mul", {"gate", "x"}, {"p"}, "gate_mul")
                                : MakeNode("Mul", {"x", "gate"}, {"p"}, "gate_mul");
  onnx::NodeProto conv = MakeNode("Conv", {"p", "w", "b"}, {"c"}, "project");
  const int pad = c.kernel / 2;
  testing_util::SetIntsAttr(conv, "pads", {pad, pad, pad, pad});
  *g->add_node() = conv;
  if (c.residual) *g->add_node() = MakeNode("Add", {"c", "r"}, {"y"}, "residual");
  *g->add_output() = TensorInfo(c.residual ? "y" : "c", {2, 16, 8, 8});
  if (c.product_is_output) *g->add_output() = TensorInfo("p", {2, 32, 8, 8});
  absl::StatusOr<Plan> plan = testing_util::CoveredPlan(m);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : Plan{};
}

// The one form found, or nullopt (failing when there are several).
std::optional<ScaledConvForm> OnlyForm(const Plan& plan, size_t* conv_step = nullptr) {
  std::optional<ScaledConvForm> found;
  const std::vector<std::optional<ScaledConvForm>> forms = MatchScaledConvs(plan);
  EXPECT_EQ(forms.size(), plan.steps.size());
  for (size_t s = 0; s < forms.size(); ++s) {
    if (!forms[s]) continue;
    EXPECT_FALSE(found) << "a second form at step " << s;
    found = forms[s];
    if (conv_step != nullptr) *conv_step = s;
  }
  return found;
}

ir::ValueId ValueNamed(const ir::Graph& g, const std::string& name) {
  for (size_t v = 0; v < g.values().size(); ++v) {
    if (g.value(static_cast<ir::ValueId>(v)).name == name) return static_cast<ir::ValueId>(v);
  }
  ADD_FAILURE() << "no value " << name;
  return ir::kNoValue;
}

TEST(ScaledConvFormTest, GateMulBeforeOneByOneConvMatches) {
  for (bool gate_first : {false, true}) {
    const Plan plan = MakePlan({.gate_first = gate_first});
    size_t conv_step = 0;
    const std::optional<ScaledConvForm> form = OnlyForm(plan, &conv_step);
    ASSERT_TRUE(form) << "gate first " << gate_first;
    EXPECT_EQ(plan.steps[form->mul_step].kind, StepKind::kKernel);
    EXPECT_EQ(plan.steps[conv_step].kind, StepKind::kFusedGraph);
    EXPECT_EQ(form->x, ValueNamed(plan.graph, "x"));
    EXPECT_EQ(form->gate, ValueNamed(plan.graph, "gate"));
    EXPECT_EQ(form->weights, ValueNamed(plan.graph, "w"));
    EXPECT_EQ(form->bias, ValueNamed(plan.graph, "b"));
    EXPECT_EQ(form->residual, ir::kNoValue);
    EXPECT_EQ(form->channels, 32);
    EXPECT_EQ(form->out_channels, 16);
  }
}

TEST(ScaledConvFormTest, ResidualAddAfterTheConvIsPartOfTheForm) {
  const Plan plan = MakePlan({.residual = true});
  const std::optional<ScaledConvForm> form = OnlyForm(plan);
  ASSERT_TRUE(form);
  EXPECT_EQ(form->residual, ValueNamed(plan.graph, "r"));
}

TEST(ScaledConvFormTest, OtherConvsReadersAndShapesDoNotMatch) {
  EXPECT_FALSE(OnlyForm(MakePlan({.kernel = 3}))) << "a 3x3 conv is no matmul per pixel";
  EXPECT_FALSE(OnlyForm(MakePlan({.product_is_output = true}))) << "the product must stay visible";
  EXPECT_FALSE(OnlyForm(MakePlan({.full_gate = true}))) << "a full map is not a per-channel gate";
}

}  // namespace
}  // namespace exec
