// One Session, many threads: 8 threads call Run at once on models/tiny_cnn with
// different inputs (different data and batch sizes), and each output must equal
// the output of a single-threaded Run of the same input. Runs under
// --config=tsan in CI (tools/test.sh).
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/util/compare.h"

namespace {

constexpr int kThreads = 8;
constexpr int kRunsPerThread = 3;

// A [batch,3,32,32] input, floats in [-1, 1) from `seed`.
ir::Tensor MakeImage(int64_t batch, uint32_t seed) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kFloat32, {batch, 3, 32, 32});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = real(rng);
  return t;
}

// kThreads threads run at once, thread t running inputs[t + r * kThreads] for r < kRunsPerThread;
// per input, how its output differs from expected[i] ("" when it matches within `tol`).
std::vector<std::string> RunFromThreads(const runtime::Session& s, const std::vector<ir::Tensor>& inputs,
                                        const std::vector<ir::Tensor>& expected, testing_util::Tolerance tol) {
  const std::string input_name = s.inputs().at(0).name;
  std::vector<std::string> errors(inputs.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRunsPerThread; ++r) {
        const size_t i = static_cast<size_t>(t + r * kThreads);
        auto out = s.Run({{input_name, inputs[i]}});
        errors[i] =
            !out.ok() ? out.status().ToString() : testing_util::CompareTensors(out->at(0).tensor, expected[i], tol);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return errors;
}

TEST(ConcurrentRunTest, EightThreadsMatchSingleThreadedRuns) {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  auto session = runtime::Session::Create("models/tiny_cnn/model.onnx", options);
  ASSERT_TRUE(session.ok()) << session.status();
  const runtime::Session& s = **session;
  const std::string input_name = s.inputs().at(0).name;

  // Inputs and their single-threaded outputs, one per (thread, run).
  std::vector<ir::Tensor> inputs;
  std::vector<ir::Tensor> expected;
  for (int i = 0; i < kThreads * kRunsPerThread; ++i) {
    inputs.push_back(MakeImage(1 + i % 3, static_cast<uint32_t>(i)));
    auto out = s.Run({{input_name, inputs.back()}});
    ASSERT_TRUE(out.ok()) << out.status();
    expected.push_back(out->at(0).tensor);
  }

  const std::vector<std::string> errors = RunFromThreads(s, inputs, expected, {.rtol = 1e-6, .atol = 1e-7});
  for (size_t i = 0; i < errors.size(); ++i) EXPECT_EQ(errors[i], "") << "input " << i;
}

// models/tiny_cnn on the GPU; the tests using it skip where no GPU is usable.
class ConcurrentRunGpuTest : public testing::Test {
 protected:
  void SetUp() override {
    runtime::SessionOptions options;
    options.device = runtime::Device::kCuda;
    auto session = runtime::Session::Create("models/tiny_cnn/model.onnx", options);
    if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
      GTEST_SKIP() << session.status().message();
    }
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = *std::move(session);
  }
  std::unique_ptr<runtime::Session> session_;
};

// The GPU backend under the same load: runs with dims seen before are captured
// into CUDA graphs and replayed, from several threads, with batch sizes 1-3
// (three graphs); every output must match the CPU backend's (fp32, rtol 1e-4).
// Skipped without a GPU.
TEST_F(ConcurrentRunGpuTest, CudaGraphReplaysMatchTheCpuFromEightThreads) {
  const runtime::Session& s = *session_;
  const std::string input_name = s.inputs().at(0).name;
  std::vector<ir::Tensor> inputs, expected;
  for (int i = 0; i < kThreads * kRunsPerThread; ++i) {
    inputs.push_back(MakeImage(1 + i % 3, static_cast<uint32_t>(100 + i)));
    auto out = s.RunOn(runtime::Device::kCpu, {{input_name, inputs.back()}}, nullptr);
    ASSERT_TRUE(out.ok()) << out.status();
    expected.push_back(out->at(0).tensor);
  }
  // Sequentially first: run 1 builds the plans, run 2 captures, run 3 replays.
  for (int r = 0; r < 3; ++r) {
    auto out = s.Run({{input_name, inputs[0]}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(testing_util::CompareTensors(out->at(0).tensor, expected[0], {.rtol = 1e-4, .atol = 1e-5}), "")
        << "run " << r;
  }
  EXPECT_EQ(s.gpu()->graph_status(), "CUDA graph replay");
  const std::vector<std::string> errors = RunFromThreads(s, inputs, expected, {.rtol = 1e-4, .atol = 1e-5});
  for (size_t i = 0; i < errors.size(); ++i) EXPECT_EQ(errors[i], "") << "input " << i;
}

// Runs from several threads overlap on the GPU: each holds its own execution context (stream,
// captured graph) and replays without a lock, so the executor sees graph replays in flight at
// the same time. 8 threads x 50 replays of batch 1 (correct outputs checked too). Skipped without
// a GPU.
TEST_F(ConcurrentRunGpuTest, RunsFromThreadsOverlapOnTheirOwnContexts) {
  const runtime::Session& s = *session_;
  const std::string input_name = s.inputs().at(0).name;
  const ir::Tensor input = MakeImage(1, 7);
  auto want = s.RunOn(runtime::Device::kCpu, {{input_name, input}}, nullptr);
  ASSERT_TRUE(want.ok()) << want.status();
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 50 && errors[t].empty(); ++r) {
        auto out = s.Run({{input_name, input}});
        errors[t] = !out.ok() ? out.status().ToString()
                              : testing_util::CompareTensors(out->at(0).tensor, want->at(0).tensor,
                                                             {.rtol = 1e-4, .atol = 1e-5});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  EXPECT_GE(s.gpu()->contexts_created(), 2);
  EXPECT_GE(s.gpu()->max_replays_in_flight(), 2) << "replays from different threads never overlapped";
}

}  // namespace
