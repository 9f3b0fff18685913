// The control-flow interpreter's slicing and stacking (any axis, reversed, zero parts) and its
// errors, which the conformance cases (axis 0 only) do not reach.
#include "kernels/cpu/subgraph.h"

#include "gtest/gtest.h"

namespace kernels::cpu {
namespace {

std::vector<float> Values(const ir::Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

// [[[0,1],[2,3],[4,5]], [[6,7],[8,9],[10,11]]]: shape [2,3,2].
ir::Tensor Cube() {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
  return ir::Tensor::FromFloats(std::move(v), {2, 3, 2});
}

TEST(SubgraphTest, SliceAtEachAxis) {
  absl::StatusOr<ir::Tensor> a0 = SliceAt(Cube(), 0, 1);
  ASSERT_TRUE(a0.ok()) << a0.status();
  EXPECT_EQ(a0->shape(), std::vector<int64_t>({3, 2}));
  EXPECT_EQ(Values(*a0), std::vector<float>({6, 7, 8, 9, 10, 11}));
  absl::StatusOr<ir::Tensor> a1 = SliceAt(Cube(), 1, 2);
  ASSERT_TRUE(a1.ok()) << a1.status();
  EXPECT_EQ(Values(*a1), std::vector<float>({4, 5, 10, 11}));
  absl::StatusOr<ir::Tensor> a2 = SliceAt(Cube(), 2, 0);
  ASSERT_TRUE(a2.ok()) << a2.status();
  EXPECT_EQ(a2->shape(), std::vector<int64_t>({2, 3}));
  EXPECT_EQ(Values(*a2), std::vector<float>({0, 2, 4, 6, 8, 10}));
}

TEST(SubgraphTest, SliceOutsideIsAnError) {
  EXPECT_FALSE(SliceAt(Cube(), 1, 3).ok());
  EXPECT_FALSE(SliceAt(Cube(), 3, 0).ok());
  EXPECT_FALSE(SliceAt(Cube(), 0, -1).ok());
}

TEST(SubgraphTest, StackUndoesSlice) {
  for (int64_t axis = 0; axis < 3; ++axis) {
    std::vector<ir::Tensor> parts;
    for (int64_t i = 0; i < Cube().shape()[axis]; ++i) parts.push_back(*SliceAt(Cube(), axis, i));
    absl::StatusOr<ir::Tensor> stacked = Stack(parts, axis, false, ir::DType::kFloat32, {});
    ASSERT_TRUE(stacked.ok()) << stacked.status();
    EXPECT_EQ(stacked->shape(), Cube().shape());
    EXPECT_EQ(Values(*stacked), Values(Cube()));
  }
}

TEST(SubgraphTest, StackReversed) {
  std::vector<ir::Tensor> parts = {ir::Tensor::FromFloats({1, 2}, {2}), ir::Tensor::FromFloats({3, 4}, {2})};
  absl::StatusOr<ir::Tensor> stacked = Stack(parts, 1, true, ir::DType::kFloat32, {});
  ASSERT_TRUE(stacked.ok()) << stacked.status();
  EXPECT_EQ(stacked->shape(), std::vector<int64_t>({2, 2}));
  EXPECT_EQ(Values(*stacked), std::vector<float>({3, 1, 4, 2}));
}

TEST(SubgraphTest, StackOfNothingIsEmpty) {
  absl::StatusOr<ir::Tensor> stacked = Stack({}, 0, false, ir::DType::kInt64, {4, 5});
  ASSERT_TRUE(stacked.ok()) << stacked.status();
  EXPECT_EQ(stacked->shape(), std::vector<int64_t>({0, 4, 5}));
  EXPECT_EQ(stacked->dtype(), ir::DType::kInt64);
}

TEST(SubgraphTest, StackOfDifferentShapesIsAnError) {
  std::vector<ir::Tensor> parts = {ir::Tensor::FromFloats({1, 2}, {2}), ir::Tensor::FromFloats({3}, {1})};
  EXPECT_FALSE(Stack(parts, 0, false, ir::DType::kFloat32, {}).ok());
  EXPECT_FALSE(Stack({ir::Tensor::FromFloats({1}, {1})}, 3, false, ir::DType::kFloat32, {}).ok());
}

TEST(SubgraphTest, RunBodyChecksItsInputs) {
  ir::Graph body;
  const ir::ValueId x = body.AddValue("x", {ir::DType::kFloat32, ir::Shape{2}});
  body.inputs().push_back(x);
  body.outputs().push_back(x);
  const ir::Tensor wrong = ir::Tensor::FromInt64s({1, 2});
  EXPECT_FALSE(RunBody(body, {}).ok());
  EXPECT_FALSE(RunBody(body, {&wrong}).ok());
  EXPECT_FALSE(RunBody(body, {nullptr}).ok());
  const ir::Tensor right = ir::Tensor::FromFloats({1, 2}, {2});
  absl::StatusOr<std::vector<ir::Tensor>> out = RunBody(body, {&right});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), std::vector<float>({1, 2}));
}

}  // namespace
}  // namespace kernels::cpu
