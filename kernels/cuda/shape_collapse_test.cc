// CollapseDims: merged shapes must visit the same offsets in the same order as
// the original ones.
#include "kernels/cuda/shape_collapse.h"

#include <vector>

#include "gtest/gtest.h"

namespace kernels::cuda {
namespace {

// Every (offset per stride array) in iteration order.
std::vector<std::vector<int64_t>> Offsets(int rank, const int64_t* dims, const std::vector<std::vector<int64_t>>& s) {
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= dims[d];
  std::vector<std::vector<int64_t>> out;
  for (int64_t linear = 0; linear < total; ++linear) {
    std::vector<int64_t> offsets(s.size(), 0);
    int64_t rest = linear;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t i = rest % dims[d];
      rest /= dims[d];
      for (size_t k = 0; k < s.size(); ++k) offsets[k] += i * s[k][d];
    }
    out.push_back(offsets);
  }
  return out;
}

// Collapses and checks that the offsets are unchanged; returns the new rank.
int CollapseAndCheck(std::vector<int64_t> dims, std::vector<std::vector<int64_t>> strides) {
  const int rank = static_cast<int>(dims.size());
  const auto before = Offsets(rank, dims.data(), strides);
  std::vector<int64_t*> ptrs;
  for (auto& s : strides) ptrs.push_back(s.data());
  const int new_rank = CollapseDims(rank, dims.data(), ptrs.data(), static_cast<int>(ptrs.size()));
  EXPECT_EQ(Offsets(new_rank, dims.data(), strides), before);
  return new_rank;
}

TEST(CollapseDimsTest, SameLayoutBinaryBecomesOneDim) {
  EXPECT_EQ(CollapseAndCheck({2, 3, 4, 5}, {{60, 20, 5, 1}, {60, 20, 5, 1}, {60, 20, 5, 1}}), 1);
}

TEST(CollapseDimsTest, NhwcPerChannelBroadcastBecomesTwoDims) {
  // Iterating N,H,W,C: a dense, b = [N,C,1,1] read at (n, c), out dense.
  EXPECT_EQ(CollapseAndCheck({2, 3, 4, 5}, {{60, 20, 5, 1}, {5, 0, 0, 1}, {60, 20, 5, 1}}), 3);
  EXPECT_EQ(CollapseAndCheck({1, 3, 4, 5}, {{60, 20, 5, 1}, {0, 0, 0, 1}, {60, 20, 5, 1}}), 2);
}

TEST(CollapseDimsTest, TransposeKeepsItsDimsAndDropsOnes) {
  // NCHW -> NHWC copy of [2,3,1,5]: the size-1 dim goes, nothing else merges.
  EXPECT_EQ(CollapseAndCheck({2, 3, 1, 5}, {{15, 5, 5, 1}, {15, 1, 15, 3}}), 3);
}

TEST(CollapseDimsTest, AllOnesIsOneElement) { EXPECT_EQ(CollapseAndCheck({1, 1}, {{1, 1}, {1, 1}}), 1); }

TEST(CollapseDimsTest, SliceWithStrideKeepsTheInnerDimApart) {
  // Every other column of rows 10 apart: src strides {10, 2}, dst dense {4, 1}; with rows 8
  // apart the same read is one evenly strided run.
  EXPECT_EQ(CollapseAndCheck({3, 4}, {{10, 2}, {4, 1}}), 2);
  EXPECT_EQ(CollapseAndCheck({3, 4}, {{8, 2}, {4, 1}}), 1);
}

}  // namespace
}  // namespace kernels::cuda
