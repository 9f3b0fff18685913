// The tanh GELU as torch exports approximate="tanh" before opset 20 (Mul/Add/Tanh nodes after a
// MatMul + bias) on the GPU through the whole Session, in fp16 and bf16: the partitioner makes it one
// Gelu node and the matmul, bias and GELU one cuDNN operation graph (GELU_APPROX_TANH_FWD); the
// output matches the reference plan (no passes, every node on the CPU reference kernels, fp32) and
// the CPU running the same plan, on the step-by-step run, the capture and a replay. Without a usable
// GPU only the CPU's run of the plan is checked, then the case skips.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/util/compare.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/pass_test_util.h"

namespace {

constexpr int64_t kRows = 4, kSeq = 16, kIn = 64, kOut = 128;

std::vector<float> Random(size_t n, unsigned seed, float scale) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// y = 0.5 * (h * (1 + tanh(sqrt(2/pi) * (h + 0.044715 * (h * (h * h)))))), h = x W + b.
std::string TanhGeluModel() {
  onnx::ModelProto model = testing_util::MakeModel(17);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {kRows, kSeq, kIn});
  *g->add_output() = testing_util::TensorInfo("y", {kRows, kSeq, kOut});
  testing_util::AddFloatInitializer(model, "w", {kIn, kOut}, Random(kIn * kOut, 1, 1 / std::sqrt(float{kIn})));
  testing_util::AddFloatInitializer(model, "b", {kOut}, Random(kOut, 2, 0.5f));
  const std::vector<std::pair<std::string, float>> constants = {
      {"half", 0.5f}, {"one", 1.0f}, {"beta", std::sqrt(2 / M_PI)}, {"kappa", 0.044715f}};
  for (const auto& [name, value] : constants) testing_util::AddFloatInitializer(model, name, {}, {value});
  const std::vector<std::vector<std::string>> nodes = {
      {"MatMul", "x", "w", "xw"},      {"Add", "xw", "b", "h"},        {"Mul", "h", "h", "sq"},
      {"Mul", "h", "sq", "cube"},      {"Mul", "kappa", "cube", "kc"}, {"Add", "h", "kc", "sum"},
      {"Mul", "beta", "sum", "inner"}, {"Tanh", "inner", "", "t"},     {"Add", "one", "t", "plus"},
      {"Mul", "h", "plus", "hp"},      {"Mul", "half", "hp", "y"}};
  for (const std::vector<std::string>& n : nodes) {
    std::vector<std::string> inputs = {n[1]};
    if (!n[2].empty()) inputs.push_back(n[2]);
    *g->add_node() = testing_util::MakeNode(n[0], inputs, {n[3]}, n[3]);
  }
  return model.SerializeAsString();
}

std::vector<runtime::NamedTensor> Inputs() {
  return {{"x", partitioner::test::RandomTensor({kRows, kSeq, kIn}, 3, -2, 2)}};
}

class TanhGeluGpuTest : public testing::TestWithParam<std::string> {};

TEST_P(TanhGeluGpuTest, JoinsTheMatmulGraphAndMatchesTheReferencePlan) {
  const std::string precision = GetParam();
  const testing_util::Tolerance tol = precision == "bf16" ? testing_util::Tolerance{8e-2, 4e-2}  // fp16's x 8
                                                          : testing_util::Tolerance{1e-2, 5e-3};
  runtime::SessionOptions reference_options;
  reference_options.device = runtime::Device::kCpu;
  reference_options.fuse = false;
  auto reference_session = runtime::Session::CreateFromBytes(TanhGeluModel(), reference_options);
  ASSERT_TRUE(reference_session.ok()) << reference_session.status();
  auto reference = (*reference_session)->Run(Inputs());
  ASSERT_TRUE(reference.ok()) << reference.status();

  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  options.precision = precision;
  options.gpu.plan_cache = false;
  options.gpu.measure_choices = false;  // the graph, never the split form
  auto cpu_session = runtime::Session::CreateFromBytes(TanhGeluModel(), options);
  ASSERT_TRUE(cpu_session.ok()) << cpu_session.status();
  auto cpu = (*cpu_session)->Run(Inputs());
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(testing_util::CompareTensors((*cpu)[0].tensor, (*reference)[0].tensor, tol), "");
  int gelu_steps = 0;
  for (const exec::Step& step : (*cpu_session)->plan().steps) gelu_steps += step.pattern == "MatMul+Add+Gelu";
  EXPECT_EQ(gelu_steps, 1) << "the tanh GELU did not become one Gelu joined to its matmul";
  options.device = runtime::Device::kCuda;
  auto session = runtime::Session::CreateFromBytes(TanhGeluModel(), options);
  if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
    GTEST_SKIP() << session.status().message();
  }
  ASSERT_TRUE(session.ok()) << session.status();
  for (int run = 0; run < 3; ++run) {  // step by step, captured, replayed
    auto gpu = (*session)->Run(Inputs());
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    EXPECT_EQ(testing_util::CompareTensors((*gpu)[0].tensor, (*reference)[0].tensor, tol), "") << "run " << run;
    EXPECT_EQ(testing_util::CompareTensors((*gpu)[0].tensor, (*cpu)[0].tensor, tol), "") << "run " << run;
  }
  const exec::Plan& plan = (*session)->plan();
  const std::vector<std::string> notes = (*session)->gpu_step_notes();
  ASSERT_EQ(notes.size(), plan.steps.size());
  bool fused = false;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].pattern != "MatMul+Add+Gelu") continue;
    fused = absl::StrContains(notes[i], "cuDNN operation graph");
    EXPECT_TRUE(fused) << notes[i];
  }
  EXPECT_TRUE(fused) << "no MatMul+Add+Gelu step on cuDNN";
}

INSTANTIATE_TEST_SUITE_P(Precisions, TanhGeluGpuTest, testing::Values("fp16", "bf16"));

}  // namespace
