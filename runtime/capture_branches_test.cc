// capture_branches: which steps wait for which (the rule, on the CPU), and a real capture of three
// steps rewired so that the two independent ones overlap, replayed against what the stream order
// gives (skips without a GPU).
#include "runtime/capture_branches.h"

#include <cuda_runtime_api.h>

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/capture_order_test_kernels.h"
#include "runtime/kernel_step_testing.h"

namespace exec {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

StepAccesses Step(std::vector<ByteRange> reads, std::vector<ByteRange> writes, bool self_contained = true) {
  return {self_contained, std::move(reads), std::move(writes)};
}

TEST(StepDependenciesTest, StepsThatShareNoBytesDoNotWait) {
  const auto deps = StepDependencies({Step({}, {{0, 100}}), Step({}, {{100, 200}}), Step({{0, 200}}, {{200, 300}})});
  EXPECT_THAT(deps[0], IsEmpty());
  EXPECT_THAT(deps[1], IsEmpty());          // beside step 0
  EXPECT_THAT(deps[2], ElementsAre(0, 1));  // reads what both wrote
}

TEST(StepDependenciesTest, ReadAfterWriteWriteAfterReadAndWriteAfterWriteWait) {
  const ByteRange a{0, 256}, b{256, 512}, c{1024, 2048};
  // 1 reads what 0 wrote; 2 writes bytes 1 read (the arena gave them again); 3 writes what 2 wrote.
  const auto deps = StepDependencies({Step({}, {a}), Step({a}, {c}), Step({}, {{0, 128}}), Step({}, {{1500, 1501}})});
  EXPECT_THAT(deps[1], ElementsAre(0));
  EXPECT_THAT(deps[2], ElementsAre(0, 1));                               // 0 wrote a (write after write), 1 read it
  EXPECT_THAT(deps[3], ElementsAre(1));                                  // 1 wrote c
  const auto apart = StepDependencies({Step({a}, {}), Step({a}, {b})});  // two readers of a
  EXPECT_THAT(apart[1], IsEmpty());
}

TEST(StepDependenciesTest, ABarrierWaitsForEveryStepBeforeItAndEveryStepAfterWaitsForIt) {
  const ByteRange a{0, 256}, b{256, 512}, c{512, 768};
  const auto deps = StepDependencies({Step({}, {a}), Step({}, {b}), Step({a}, {c}), Step({}, {}, false),
                                      Step({}, {{4096, 8192}}), Step({}, {{8192, 9000}})});
  EXPECT_THAT(deps[2], ElementsAre(0));
  EXPECT_THAT(deps[3], ElementsAre(1, 2));  // 0 is waited for through 2
  EXPECT_THAT(deps[4], ElementsAre(3));
  EXPECT_THAT(deps[5], ElementsAre(3));  // beside 4
}

constexpr int kCount = 4096;

// Hands out blocks of kCount floats allocated before the capture (the arena's part in a real
// capture: cudaMalloc is not allowed while a stream captures), freed with the hook.
class PreallocatedHook : public AllocationHook {
 public:
  explicit PreallocatedHook(int blocks) {
    for (int i = 0; i < blocks; ++i) {
      void* p = nullptr;
      if (cudaMalloc(&p, kCount * sizeof(float)) != cudaSuccess) break;
      blocks_.emplace_back(p, [](void* q) { cudaFree(q); });
    }
  }
  size_t blocks() const { return blocks_.size(); }
  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes, cudaStream_t) override {
    if (bytes > kCount * sizeof(float) || next_ >= blocks_.size()) return absl::InternalError("no block left");
    return blocks_[next_++];
  }

 private:
  std::vector<std::shared_ptr<void>> blocks_;
  size_t next_ = 0;
};

std::vector<float> Download(const std::shared_ptr<void>& block) {
  std::vector<float> host(kCount);
  EXPECT_EQ(cudaMemcpy(host.data(), block.get(), kCount * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

// Whether `graph` has an edge from a node of kernel `from` (index in capture order) to one of `to`.
bool HasEdge(cudaGraph_t graph, const StepAccessLog& log, size_t from, size_t to) {
  size_t count = 0;
  EXPECT_EQ(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count), cudaSuccess);
  std::vector<cudaGraphNode_t> a(count), b(count);
  std::vector<cudaGraphEdgeData> data(count);
  EXPECT_EQ(cudaGraphGetEdges(graph, a.data(), b.data(), data.data(), &count), cudaSuccess);
  for (size_t i = 0; i < count; ++i) {
    if (log.step_of_node().at(a[i]) == from && log.step_of_node().at(b[i]) == to) return true;
  }
  return false;
}

// Captures three steps on `stream` under `log`: step 0 writes x, step 1 writes y (nothing shared),
// step 2 adds to x again (after step 0). Each replay leaves x = 2 and y = 2 everywhere.
cudaGraph_t CaptureThreeSteps(StepAccessLog& log, cudaStream_t stream, std::shared_ptr<void>& x,
                              std::shared_ptr<void>& y) {
  auto add_one = [&](const std::shared_ptr<void>& b) {
    EXPECT_EQ(capture_testing::LaunchAddOne(static_cast<float*>(b.get()), kCount, false, stream), cudaSuccess);
  };
  EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  log.BeginStep(0, true, {});
  x = *log.Allocate(kCount * sizeof(float), stream);
  EXPECT_EQ(cudaMemsetAsync(x.get(), 0, kCount * sizeof(float), stream), cudaSuccess);
  add_one(x);
  log.EndStep(stream, {x.get()});
  log.BeginStep(1, true, {});
  y = *log.Allocate(kCount * sizeof(float), stream);
  EXPECT_EQ(cudaMemsetAsync(y.get(), 0, kCount * sizeof(float), stream), cudaSuccess);
  add_one(y);
  add_one(y);
  log.EndStep(stream, {y.get()});
  log.BeginStep(2, true, {x.get()});
  add_one(x);
  log.EndStep(stream, {x.get()});
  log.EndSteps(stream);  // nothing after the last step
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  return graph;
}

void ExpectTwos(const std::shared_ptr<void>& x, const std::shared_ptr<void>& y) {
  for (float v : Download(x)) ASSERT_EQ(v, 2.0f);  // memset, +1 (step 0), +1 (step 2)
  for (float v : Download(y)) ASSERT_EQ(v, 2.0f);
}

// The three steps captured (on a GPU) by each test, freed after it.
class ThreeStepCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernel_testing::GpuUsable()) GTEST_SKIP() << "no usable GPU";
    ASSERT_EQ(hook_.blocks(), 2u);  // allocated before the capture
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    graph_ = CaptureThreeSteps(log_, stream_, x_, y_);
    ASSERT_NE(graph_, nullptr);
    ASSERT_TRUE(log_.complete());
  }
  void TearDown() override {
    if (graph_ != nullptr) cudaGraphDestroy(graph_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  // Replays `exec` `times` times on the stream and checks x and y.
  void ReplayAndExpectTwos(cudaGraphExec_t exec, int times) {
    for (int i = 0; i < times; ++i) ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    ExpectTwos(x_, y_);
  }

  cudaStream_t stream_ = nullptr;
  PreallocatedHook hook_{2};
  StepAccessLog log_{&hook_};
  std::shared_ptr<void> x_, y_;
  cudaGraph_t graph_ = nullptr;
};

TEST_F(ThreeStepCaptureTest, TwoIndependentStepsOverlapAndTheReplayMatchesTheStreamOrder) {
  ASSERT_TRUE(HasEdge(graph_, log_, 0, 1));  // the chain as captured
  absl::StatusOr<OverlapSummary> summary = LetIndependentStepsOverlap(graph_, log_);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->steps, 3);
  EXPECT_EQ(summary->overlapping, 2);  // step 1 beside step 0; step 2 beside step 1
  EXPECT_FALSE(HasEdge(graph_, log_, 0, 1));
  EXPECT_FALSE(HasEdge(graph_, log_, 1, 2));
  EXPECT_TRUE(HasEdge(graph_, log_, 0, 2));
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph_, 0), cudaSuccess);
  ReplayAndExpectTwos(exec, 3);
  cudaGraphExecDestroy(exec);
}

// InstantiateFaster compares and times both forms: whichever it keeps, its note says so, and the
// kept graph computes what the stream order does.
TEST_F(ThreeStepCaptureTest, InstantiateFasterComparesBothFormsAndKeepsOneThatMatchesTheChain) {
  const std::vector<DeviceTensor> outputs = {{x_, ir::DType::kFloat32, {kCount}}, {y_, ir::DType::kFloat32, {kCount}}};
  std::string description;
  absl::StatusOr<cudaGraphExec_t> exec = InstantiateFaster(graph_, log_, {}, outputs, stream_, &description);
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_THAT(description, ::testing::ContainsRegex("2 of 3 steps overlap the steps before them|2 steps could "
                                                    "overlap, kept in capture order \\(replay"))
      << description;
  ASSERT_EQ(cudaMemset(x_.get(), 0xFF, kCount * sizeof(float)), cudaSuccess);  // NaNs until the replay
  ReplayAndExpectTwos(*exec, 1);
  cudaGraphExecDestroy(*exec);
}

}  // namespace
}  // namespace exec
