// The measured choice between a conv step's cuDNN graph, its split form and (fp16, tf32) the own
// 1x1-conv kernel (runtime/cuda_measured_choice.cc): a 1x1 Conv + bias + Sigmoid·Mul (SiLU) model,
// fp32, tf32 and fp16, and a stem conv (the kernel's window form); and for a transformer's feed-forward block (MatMul +
// bias + GELU, MatMul + bias + residual) between each matmul step's graph and cuBLASLt's matmul + the own epilogue
// kernel. Whatever is chosen, the output equals the CPU's run of the same plan through the step-by-step run, the
// capture and the replays; --explain's note shows the times; a second session on the same plan cache reads the decision
// instead of timing again. Skipped without a GPU.
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/util/compare.h"
#include "tests/util/onnx_builder.h"

namespace {

std::string ConvSiluModel() {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {4, 16, 32, 32});
  *g->add_output() = testing_util::TensorInfo("y", {4, 32, 32, 32});
  std::vector<float> w(32 * 16), b(32);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 37) % 23) / 23.0f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.05f * static_cast<float>(i) - 0.8f;
  testing_util::AddFloatInitializer(model, "w", {32, 16, 1, 1}, w);
  testing_util::AddFloatInitializer(model, "b", {32}, b);
  *g->add_node() = testing_util::MakeNode("Conv", {"x", "w", "b"}, {"c"}, "conv");
  *g->add_node() = testing_util::MakeNode("Sigmoid", {"c"}, {"s"}, "sigmoid");
  *g->add_node() = testing_util::MakeNode("Mul", {"c", "s"}, {"y"}, "silu");
  return model.SerializeAsString();
}

ir::Tensor RandomInput(const std::vector<int64_t>& dims) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kFloat32, dims);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// The note of the session's conv step ("" when none mentions a measurement).
std::string MeasuredNote(const runtime::Session& session) {
  for (const std::string& note : session.gpu_step_notes()) {
    if (absl::StrContains(note, "measured")) return note;
  }
  return "";
}

// GPU options with a fresh plan cache in `cache_dir`.
runtime::SessionOptions FreshCacheOptions(const std::string& precision, const std::string& cache_dir) {
  std::filesystem::remove_all(cache_dir);
  runtime::SessionOptions options;
  options.device = runtime::Device::kCuda;
  options.precision = precision;
  options.gpu.plan_cache_dir = cache_dir;
  return options;
}

// Three GPU runs (step by step with the measured choice, captured, replayed), every output compared
// with the CPU's run of the same plan.
void ExpectGpuRunsMatchCpu(runtime::Session& session, const std::vector<runtime::NamedTensor>& inputs,
                           testing_util::Tolerance tol) {
  auto cpu = session.RunOn(runtime::Device::kCpu, inputs, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  for (int run = 0; run < 3; ++run) {
    auto gpu = session.Run(inputs);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    for (size_t o = 0; o < gpu->size(); ++o) {
      EXPECT_EQ(testing_util::CompareTensors((*gpu)[o].tensor, (*cpu)[o].tensor, tol), "")
          << (*gpu)[o].name << " run " << run;
    }
  }
}

class MeasuredChoiceGpuTest : public testing::TestWithParam<std::string> {};

TEST_P(MeasuredChoiceGpuTest, ChosenFormMatchesCpuAndTheDecisionIsCached) {
  const runtime::SessionOptions options =
      FreshCacheOptions(GetParam(), testing::TempDir() + "/measured_choice_" + GetParam());
  const testing_util::Tolerance tol = GetParam() == "fp16"   ? testing_util::Tolerance{1e-2, 1e-3}
                                      : GetParam() == "tf32" ? testing_util::Tolerance{2e-3, 2e-3}
                                                             : testing_util::Tolerance{1e-4, 1e-5};
  const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput({4, 16, 32, 32})}};
  for (const bool warm : {false, true}) {
    auto session = runtime::Session::CreateFromBytes(ConvSiluModel(), options);
    if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
      GTEST_SKIP() << session.status().message();
    }
    ASSERT_TRUE(session.ok()) << session.status();
    ExpectGpuRunsMatchCpu(**session, inputs, tol);
    EXPECT_EQ((*session)->gpu()->graph_status(), "CUDA graph replay");
    const std::string note = MeasuredNote(**session);
    EXPECT_TRUE(absl::StrContains(note, "cuDNN graph")) << note;
    // A 1x1 conv of 16 channels: in fp16 and tf32 the own pointwise-conv kernel is a third candidate
    // (strict fp32 does not allow its TF32 math).
    EXPECT_EQ(absl::StrContains(note, "own 1x1-conv kernel"), GetParam() != "fp32") << note;
    const exec::MeasuredChoices m = (*session)->gpu()->measured_choices();
    if (warm) {
      EXPECT_TRUE(absl::StrContains(note, "decision from the plan cache")) << note;
      EXPECT_EQ(m.timed, 0);
      EXPECT_GE(m.from_cache, 1);
    } else {
      EXPECT_TRUE(absl::StrContains(note, "at the first run")) << note;
      EXPECT_GE(m.timed, 1);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, MeasuredChoiceGpuTest, testing::Values("fp32", "tf32", "fp16"));

// A stem: 3x3 stride 2 pad 1 conv of a 3-channel image (its channels padded to 4: 8-byte pixels in
// fp16, 16-byte in tf32) + bias + SiLU. The own kernel's window form is a candidate beside the cuDNN graph;
// whichever wins, every run matches the CPU's run of the same plan.
class StemChoiceGpuTest : public testing::TestWithParam<std::string> {};

TEST_P(StemChoiceGpuTest, StemWindowIsTimedAndMatchesCpu) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {8, 3, 64, 64});
  *g->add_output() = testing_util::TensorInfo("y", {8, 32, 32, 32});
  std::vector<float> w(32 * 3 * 3 * 3), b(32);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 37) % 23) / 23.0f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.05f * static_cast<float>(i) - 0.8f;
  testing_util::AddFloatInitializer(model, "w", {32, 3, 3, 3}, w);
  testing_util::AddFloatInitializer(model, "b", {32}, b);
  onnx::NodeProto conv = testing_util::MakeNode("Conv", {"x", "w", "b"}, {"c"}, "stem");
  testing_util::SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  testing_util::SetIntsAttr(conv, "strides", {2, 2});
  *g->add_node() = conv;
  *g->add_node() = testing_util::MakeNode("Sigmoid", {"c"}, {"s"}, "sigmoid");
  *g->add_node() = testing_util::MakeNode("Mul", {"c", "s"}, {"y"}, "silu");
  const runtime::SessionOptions options =
      FreshCacheOptions(GetParam(), testing::TempDir() + "/measured_choice_stem_" + GetParam());
  auto session = runtime::Session::CreateFromBytes(model.SerializeAsString(), options);
  if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
    GTEST_SKIP() << session.status().message();
  }
  ASSERT_TRUE(session.ok()) << session.status();
  // 27 products (|x| <= 2, |w| <= 0.5): fp16 rounding, or TF32's 2^-10 of each product.
  const testing_util::Tolerance tol =
      GetParam() == "fp16" ? testing_util::Tolerance{1e-2, 1e-3} : testing_util::Tolerance{2e-3, 2e-3};
  ExpectGpuRunsMatchCpu(**session, {{"x", RandomInput({8, 3, 64, 64})}}, tol);
  const std::string note = MeasuredNote(**session);
  EXPECT_TRUE(absl::StrContains(note, "own stem-conv kernel (3x3 stride 2)")) << note;
}

INSTANTIATE_TEST_SUITE_P(Precisions, StemChoiceGpuTest, testing::Values("tf32", "fp16"));

// Two 1x1 convs with the same cuDNN graph: one takes its bias as an input (the own kernel fits), the
// other as a following Add node (it does not). Whichever decision the first caches, the second
// step reads it and must still run (the graph when the own kernel does not fit) and match the CPU.
std::string TwinConvModel() {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {16, 16, 64, 64});
  std::vector<float> w(96 * 16), b(96);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 37) % 23) / 23.0f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.01f * static_cast<float>(i) - 0.4f;
  testing_util::AddFloatInitializer(model, "w", {96, 16, 1, 1}, w);
  testing_util::AddFloatInitializer(model, "b", {96}, b);
  testing_util::AddFloatInitializer(model, "b3", {96, 1, 1}, b);
  *g->add_node() = testing_util::MakeNode("Conv", {"x", "w", "b"}, {"c1"}, "conv_bias_input");
  *g->add_node() = testing_util::MakeNode("Relu", {"c1"}, {"y1"}, "relu1");
  *g->add_node() = testing_util::MakeNode("Conv", {"x", "w"}, {"c2"}, "conv_bias_node");
  *g->add_node() = testing_util::MakeNode("Add", {"c2", "b3"}, {"a2"}, "bias_add");
  *g->add_node() = testing_util::MakeNode("Relu", {"a2"}, {"y2"}, "relu2");
  *g->add_output() = testing_util::TensorInfo("y1", {16, 96, 64, 64});
  *g->add_output() = testing_util::TensorInfo("y2", {16, 96, 64, 64});
  return model.SerializeAsString();
}

TEST(MeasuredChoiceSharedDecisionTest, AStepTheOwnKernelDoesNotFitRunsTheGraph) {
  const runtime::SessionOptions options = FreshCacheOptions("fp16", testing::TempDir() + "/measured_choice_twins");
  const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput({16, 16, 64, 64})}};
  for (const bool warm : {false, true}) {
    auto session = runtime::Session::CreateFromBytes(TwinConvModel(), options);
    if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
      GTEST_SKIP() << session.status().message();
    }
    ASSERT_TRUE(session.ok()) << session.status();
    ExpectGpuRunsMatchCpu(**session, inputs, {1e-2, 1e-3});
    for (const std::string& note : (*session)->gpu_step_notes()) {
      if (absl::StrContains(note, "measured")) std::printf("%s: %s\n", warm ? "warm" : "cold", note.c_str());
    }
  }
}

// x[4, 128, 256] -> MatMul(w1[256, 1024]) + b1 -> GELU as exporters write it (x/sqrt2, Erf, +1,
// *x, *0.5) -> MatMul(w2[1024, 256]) + b2 + x: two matmul steps, each with a tail the own epilogue
// kernel applies.
std::string FeedForwardModel() {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {4, 128, 256});
  *g->add_output() = testing_util::TensorInfo("y", {4, 128, 256});
  auto weights = [](int64_t count, int salt) {
    std::vector<float> v(count);
    for (int64_t i = 0; i < count; ++i) v[i] = (static_cast<float>((i * 37 + salt) % 41) / 41.0f - 0.5f) * 0.12f;
    return v;
  };
  testing_util::AddFloatInitializer(model, "w1", {256, 1024}, weights(256 * 1024, 1));
  testing_util::AddFloatInitializer(model, "b1", {1024}, weights(1024, 2));
  testing_util::AddFloatInitializer(model, "w2", {1024, 256}, weights(1024 * 256, 3));
  testing_util::AddFloatInitializer(model, "b2", {256}, weights(256, 4));
  testing_util::AddFloatInitializer(model, "sqrt2", {}, std::vector<float>{1.4142135f});
  testing_util::AddFloatInitializer(model, "one", {}, std::vector<float>{1.0f});
  testing_util::AddFloatInitializer(model, "half", {}, std::vector<float>{0.5f});
  const std::vector<std::vector<std::string>> nodes = {
      {"MatMul", "x", "w1", "m1"}, {"Add", "m1", "b1", "h"}, {"Div", "h", "sqrt2", "d"}, {"Erf", "d", "", "e"},
      {"Add", "e", "one", "p"},    {"Mul", "h", "p", "q"},   {"Mul", "q", "half", "g"},  {"MatMul", "g", "w2", "m2"},
      {"Add", "m2", "b2", "o"},    {"Add", "o", "x", "y"}};
  for (const std::vector<std::string>& n : nodes) {
    std::vector<std::string> in = {n[1]};
    if (!n[2].empty()) in.push_back(n[2]);
    *g->add_node() = testing_util::MakeNode(n[0], in, {n[3]}, n[3]);
  }
  return model.SerializeAsString();
}

// Fast GELU on (the default: the erf GELU as cuBLASLt's tanh-form epilogue where the matmul form
// wins) and off (erf in the own epilogue kernel): both match the CPU's erf within fp16 tolerance, the
// warm start reads both decisions from the cache, and where the GELU step's matmul form won, its
// note says where the GELU ran (the timing decides; the note's text is tested on the CPU in
// runtime/matmul_epilogue_form_test).
class MeasuredChoiceMatmulEpilogueTest : public testing::TestWithParam<bool> {};

TEST_P(MeasuredChoiceMatmulEpilogueTest, BothMatmulStepsTimeTheEpilogueFormAndMatchTheCpu) {
  const bool fast_gelu = GetParam();
  runtime::SessionOptions options = FreshCacheOptions("fp16", testing::TempDir() + "/measured_choice_matmul");
  options.gpu.fast_gelu = fast_gelu;
  const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput({4, 128, 256})}};
  for (const bool warm : {false, true}) {
    auto session = runtime::Session::CreateFromBytes(FeedForwardModel(), options);
    if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
      GTEST_SKIP() << session.status().message();
    }
    ASSERT_TRUE(session.ok()) << session.status();
    // |y| reaches ~3; two chained fp16 matmuls (K = 256, 1024) differ from the CPU's by ~0.3% of
    // that range, so the absolute part of the tolerance is 1e-2.
    ExpectGpuRunsMatchCpu(**session, inputs, {1e-2, 1e-2});
    int timed = 0;
    const std::vector<std::string> notes = (*session)->gpu_step_notes();
    for (size_t i = 0; i < notes.size(); ++i) {
      const std::string& note = notes[i];
      if (!absl::StrContains(note, "cuBLASLt matmul + own epilogue kernel")) continue;
      ++timed;
      std::printf("%s: %s\n", warm ? "warm" : "cold", note.c_str());
      const bool gelu = absl::StrContains((*session)->plan().steps[i].pattern, "Gelu");
      if (!gelu || !absl::StrContains(note, "-> matmul + epilogue kernel")) continue;
      // The GELU step ran on cuBLASLt: its note says where the GELU was computed.
      EXPECT_EQ(absl::StrContains(note, "GELU (tanh form) epilogue in place of the model's erf GELU"), fast_gelu)
          << note;
      EXPECT_EQ(absl::StrContains(note, "own epilogue kernel for the activation"), !fast_gelu) << note;
    }
    EXPECT_EQ(timed, 2) << "MatMul+Add+Gelu and MatMul+Add+Add";
    EXPECT_EQ((*session)->gpu()->measured_choices().from_cache, warm ? 2 : 0);
  }
}

INSTANTIATE_TEST_SUITE_P(FastGelu, MeasuredChoiceMatmulEpilogueTest, testing::Bool());

}  // namespace
