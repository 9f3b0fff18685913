// CaptureSegments on real captures: kernels launched with programmatic dependent launch get
// programmatic edges; those across a cut become full dependencies, those within a segment stay;
// a kernel that reads ahead of its griddepcontrol.wait then sees what the kernel before it wrote.
// Skips without a GPU (or where the driver makes no programmatic edges).
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
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&flags_), 2 * sizeof(int)), cudaSuccess);
  }
  void TearDown() override {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    if (graph_ != nullptr) cudaGraphDestroy(graph_);
    if (x_ != nullptr) cudaFree(x_);
    if (flags_ != nullptr) cudaFree(flags_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  void Replay(int times) {
    ASSERT_EQ(cudaGraphInstantiate(&exec_, graph_, 0), cudaSuccess);
    for (int i = 0; i < times; ++i) ASSERT_EQ(cudaGraphLaunch(exec_, stream_), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  }

  cudaStream_t stream_ = nullptr;
  float* x_ = nullptr;
  int* flags_ = nullptr;  // [0]: written by the slow kernel, [1]: what the early reader saw
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

TEST_F(CaptureOrderTest, EdgesAcrossACutBecomeFullAndTheReplayMatchesTheStream) {
  CaptureSegments segments;
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  EXPECT_EQ(capture_testing::LaunchAddOne(x_, kCount, false, stream_), cudaSuccess);
  segments.Cut(stream_);
  EXPECT_EQ(capture_testing::LaunchAddOne(x_, kCount, true, stream_), cudaSuccess);
  EXPECT_EQ(capture_testing::LaunchAddOne(x_, kCount, true, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph_), cudaSuccess);
  segments.Cut(stream_);  // not capturing any more: nothing to do

  const int before = CountProgrammaticEdges(graph_);
  if (before == 0) GTEST_SKIP() << "this driver/GPU captured no programmatic edges";
  ASSERT_EQ(before, 2);
  absl::StatusOr<int> changed = segments.SerializeAcrossSegments(graph_);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(*changed, 1);                        // first launch -> second: across the cut
  EXPECT_EQ(CountProgrammaticEdges(graph_), 1);  // second -> third: one segment, kept
  EXPECT_EQ(DescribeGraph(graph_), "3 nodes (3 kernels), 2 edges (1 programmatic)");
  absl::StatusOr<int> again = segments.SerializeAcrossSegments(graph_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, 0);

  ASSERT_NO_FATAL_FAILURE(Replay(2));
  std::vector<float> x(kCount);
  ASSERT_EQ(cudaMemcpy(x.data(), x_, kCount * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(x[i], 6.0f) << "element " << i;  // 2 replays x 3 adds
}

TEST_F(CaptureOrderTest, AKernelReadingAheadOfItsWaitSeesTheWriteBeforeTheCut) {
  CaptureSegments segments;
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  EXPECT_EQ(cudaMemsetAsync(flags_, 0, 2 * sizeof(int), stream_), cudaSuccess);
  segments.Cut(stream_);
  EXPECT_EQ(capture_testing::LaunchSlowWriter(&flags_[0], stream_), cudaSuccess);
  segments.Cut(stream_);  // as the arena does when a buffer is born or dies between two launches
  EXPECT_EQ(capture_testing::LaunchEarlyReader(&flags_[0], &flags_[1], stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph_), cudaSuccess);
  if (CountProgrammaticEdges(graph_) == 0) GTEST_SKIP() << "this driver/GPU captured no programmatic edges";

  absl::StatusOr<int> changed = segments.SerializeAcrossSegments(graph_);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(*changed, 1);
  EXPECT_EQ(CountProgrammaticEdges(graph_), 0);
  EXPECT_EQ(DescribeGraph(graph_), "3 nodes (2 kernels, 1 memset), 2 edges (0 programmatic)");
  ASSERT_NO_FATAL_FAILURE(Replay(3));
  int seen = 0;
  ASSERT_EQ(cudaMemcpy(&seen, &flags_[1], sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(seen, 1) << "the early reader ran before the slow writer had finished";
}

}  // namespace
}  // namespace exec
