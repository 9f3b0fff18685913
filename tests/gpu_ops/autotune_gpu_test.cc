// Autotuning for requests in flight (CudaExecutorOptions::autotune_streams, runtime/plan_autotune.h):
// a 3x3 conv + bias + Relu model whose plan is tuned as 3 executions at once on 3 streams gives the
// CPU's output through the step-by-step run, the capture and the replays (tests/util/gpu_runs.h); its note says how it
// was timed; a warm start reads that plan from the cache, and a latency-tuned session on the same cache does not take
// it (its own key). Skipped without a GPU.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/util/gpu_runs.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/pass_test_util.h"

namespace {

std::string ConvReluModel() {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {1, 32, 28, 28});
  *g->add_output() = testing_util::TensorInfo("y", {1, 64, 28, 28});
  std::vector<float> w(64 * 32 * 3 * 3), b(64);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 37) % 23) / 230.0f - 0.05f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.02f * static_cast<float>(i) - 0.6f;
  testing_util::AddFloatInitializer(model, "w", {64, 32, 3, 3}, w);
  testing_util::AddFloatInitializer(model, "b", {64}, b);
  onnx::NodeProto conv = testing_util::MakeNode("Conv", {"x", "w", "b"}, {"c"}, "conv");
  testing_util::SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  *g->add_node() = conv;
  *g->add_node() = testing_util::MakeNode("Relu", {"c"}, {"y"}, "relu");
  return model.SerializeAsString();
}

// The conv step's note ("" when no step ran on a cuDNN graph).
std::string GraphNote(const runtime::Session& session) {
  for (const std::string& note : session.gpu_step_notes()) {
    if (absl::StrContains(note, "cuDNN operation graph")) return note;
  }
  return "";
}

class StreamTuneGpuTest : public testing::TestWithParam<std::string> {};

TEST_P(StreamTuneGpuTest, ThroughputTunedPlanMatchesCpuAndIsCachedUnderItsOwnKey) {
  const std::string cache_dir = testing::TempDir() + "/stream_tune_" + GetParam();
  std::filesystem::remove_all(cache_dir);
  int streams = 3;
  auto tuned = [&](exec::CudaExecutorOptions& gpu) {
    gpu.plan_cache = true;
    gpu.plan_cache_dir = cache_dir;
    gpu.autotune_streams = streams;
  };
  const std::vector<runtime::NamedTensor> inputs = {
      {"x", partitioner::test::RandomTensor({1, 32, 28, 28}, /*seed=*/5)}};
  // TF32's error is relative to the products summed (288 per output, outputs up to ~1), not to an
  // output that cancels near 0: 3.6e-4 apart at 0.012 on the H200.
  std::optional<testing_util::Tolerance> tol;
  if (GetParam() == "tf32") tol = testing_util::Tolerance{1e-3, 1e-3};
  for (const bool warm : {false, true}) {
    auto session =
        testing_util::ExpectGpuRunsMatchCpu(ConvReluModel(), GetParam(), inputs, warm ? "warm" : "cold", tol, tuned);
    if (session == nullptr) GTEST_SKIP() << "no usable GPU";
    const std::string note = GraphNote(*session);
    if (warm) {  // no timing: the tuned plan is read
      EXPECT_TRUE(absl::StrContains(note, "plan from the cache")) << note;
    } else {
      EXPECT_TRUE(absl::StrContains(note, "3 executions at once on 3 streams")) << note;
    }
  }
  // The same cache, tuned for one request at a time: a plan of its own.
  streams = 1;
  auto latency = testing_util::ExpectGpuRunsMatchCpu(ConvReluModel(), GetParam(), inputs, "latency-tuned", tol, tuned);
  ASSERT_NE(latency, nullptr);
  const std::string note = GraphNote(*latency);
  EXPECT_TRUE(absl::StrContains(note, "cuDNN operation graph")) << note;
  EXPECT_FALSE(absl::StrContains(note, "plan from the cache")) << note;
  EXPECT_FALSE(absl::StrContains(note, "at once")) << note;
}

INSTANTIATE_TEST_SUITE_P(Precisions, StreamTuneGpuTest, testing::Values("tf32", "fp16"));

}  // namespace
