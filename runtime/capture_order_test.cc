// StepNodes on a real capture: kernels launched with programmatic dependent launch get
// programmatic edges; those between steps become full dependencies, those within a step stay, and
// the replay computes what the stream would. Skips without a GPU (or where the driver makes no
// programmatic edges).
#include "runtime/capture_order.h"

#include <vector>

#include "gtest/gtest.h"
#include "runtime/capture_order_test_kernels.h"
#include "runtime/kernel_step_testing.h"

namespace exec {
namespace {

constexpr int kCount = 1000;

int CountProgrammaticEdges(cudaGraph_t graph) {
  size_t count = 0;
  EXPECT_EQ(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count), cudaSuccess);
  std::vector<cudaGraphNode_t> from(count), to(count);
  std::vector<cudaGraphEdgeData> edges(count);
  EXPECT_EQ(cudaGraphGetEdges(graph, from.data(), to.data(), edges.data(), &count), cudaSuccess);
  int programmatic = 0;
  for (const cudaGraphEdgeData& e : edges) programmatic += e.type == cudaGraphDependencyTypeProgrammatic;
  return programmatic;
}

class CaptureOrderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernel_testing::GpuUsable()) GTEST_SKIP() << "no usable GPU";
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&x_), kCount * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(x_, 0, kCount * sizeof(float)), cudaSuccess);
  }
  void TearDown() override {
    if (graph_ != nullptr) cudaGraphDestroy(graph_);
    if (x_ != nullptr) cudaFree(x_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  // Step 0: one plain launch; step 1: two programmatic launches.
  void CaptureTwoSteps(StepNodes& nodes) {
    ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    EXPECT_EQ(capture_testing::LaunchAddOne(x_, kCount, false, stream_), cudaSuccess);
    EXPECT_TRUE(nodes.MarkStep(stream_, 0).ok());
    EXPECT_EQ(capture_testing::LaunchAddOne(x_, kCount, true, stream_), cudaSuccess);
    EXPECT_EQ(capture_testing::LaunchAddOne(x_, kCount, true, stream_), cudaSuccess);
    EXPECT_TRUE(nodes.MarkStep(stream_, 1).ok());
    ASSERT_EQ(cudaStreamEndCapture(stream_, &graph_), cudaSuccess);
  }

  cudaStream_t stream_ = nullptr;
  float* x_ = nullptr;
  cudaGraph_t graph_ = nullptr;
};

TEST_F(CaptureOrderTest, EdgesBetweenStepsBecomeFullAndTheReplayMatchesTheStream) {
  StepNodes nodes;
  CaptureTwoSteps(nodes);
  const int before = CountProgrammaticEdges(graph_);
  if (before == 0) GTEST_SKIP() << "this driver/GPU captured no programmatic edges";
  ASSERT_EQ(before, 2);
  absl::StatusOr<int> changed = nodes.SerializeSteps(graph_);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(*changed, 1);                        // step 0 -> step 1
  EXPECT_EQ(CountProgrammaticEdges(graph_), 1);  // within step 1: kept
  EXPECT_EQ(*nodes.SerializeSteps(graph_), 0);   // nothing left to change

  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph_, 0), cudaSuccess);
  for (int replay = 0; replay < 2; ++replay) ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  cudaGraphExecDestroy(exec);
  std::vector<float> x(kCount);
  ASSERT_EQ(cudaMemcpy(x.data(), x_, kCount * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(x[i], 6.0f) << "element " << i;  // 2 replays x 3 adds
}

TEST_F(CaptureOrderTest, MarkStepOutsideACaptureIsAnError) {
  StepNodes nodes;
  absl::Status marked = nodes.MarkStep(stream_, 0);
  EXPECT_EQ(marked.code(), absl::StatusCode::kFailedPrecondition) << marked;
}

}  // namespace
}  // namespace exec
