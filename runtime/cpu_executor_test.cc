// CpuExecutor: intermediates are freed after their last reader, outputs survive, constants are shared.
#include "runtime/cpu_executor.h"

#include "gtest/gtest.h"
#include "ir/graph.h"

namespace exec {
namespace {

// x -> Relu -> Relu -> ... (n times) -> y, every value float32[1000].
ir::Graph ReluChain(int n) {
  ir::Graph g;
  const ir::TensorType type{ir::DType::kFloat32, ir::Shape{ir::Dim(1000)}};
  ir::ValueId prev = g.AddValue("x", type);
  g.inputs().push_back(prev);
  for (int i = 0; i < n; ++i) {
    ir::Node node;
    node.name = "relu" + std::to_string(i);
    node.op_type = "Relu";
    node.opset = 13;
    node.inputs = {prev};
    prev = g.AddValue("v" + std::to_string(i), type);
    node.outputs = {prev};
    g.AddNode(std::move(node));
  }
  g.outputs().push_back(prev);
  return g;
}

TEST(CpuExecutorTest, FreesIntermediatesAfterTheirLastReader) {
  absl::StatusOr<Plan> plan = MakeNodePerStepPlan(ReluChain(10));
  ASSERT_TRUE(plan.ok()) << plan.status();
  // Each step releases exactly its input (except the first, whose input is the graph input x).
  for (size_t s = 1; s < plan->steps.size(); ++s) {
    ASSERT_EQ(plan->steps[s].release_after.size(), 1u);
    EXPECT_EQ(plan->steps[s].release_after[0], plan->steps[s].inputs[0]);
  }
  ir::Tensor x = *ir::Tensor::Create(ir::DType::kFloat32, {1000});
  for (int i = 0; i < 1000; ++i) x.data<float>()[i] = static_cast<float>(i % 7) - 3.0f;
  RunStats stats;
  auto out = CpuExecutor(*plan).Run({x}, &stats);
  ASSERT_TRUE(out.ok()) << out.status();
  // Ten intermediates of 4000 bytes were made, but never more than two lived at once.
  EXPECT_LE(stats.peak_live_bytes, 2 * 4000);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(out->at(0).data<float>()[i], std::max(0.0f, x.data<float>()[i]));
  }
}

TEST(CpuExecutorTest, RejectsWrongInputCount) {
  absl::StatusOr<Plan> plan = MakeNodePerStepPlan(ReluChain(1));
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(CpuExecutor(*plan).Run({}).ok());
}

}  // namespace
}  // namespace exec
