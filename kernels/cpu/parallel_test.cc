// Tests of ParallelFor (parallel.h): every index runs exactly once, chunks respect the minimum
// size, calls from inside a chunk run inline, and several threads may call at once.
#include "kernels/cpu/parallel.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace kernels::cpu {
namespace {

TEST(ParallelForTest, RunsEveryIndexOnce) {
  for (int64_t count : {0, 1, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(count);
    ParallelFor(count, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
    });
    for (int64_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << count;
  }
}

TEST(ParallelForTest, ChunksAreAtLeastTheMinimum) {
  std::atomic<int> chunks{0};
  ParallelFor(1000, 400, [&](int64_t begin, int64_t end) {
    EXPECT_TRUE(end - begin >= 400 || end == 1000) << begin << ".." << end;
    chunks.fetch_add(1);
  });
  EXPECT_LE(chunks.load(), 3);
  EXPECT_GE(ParallelThreads(), 1);
}

TEST(ParallelForTest, NestedCallsRunInline) {
  std::atomic<int64_t> sum{0};
  ParallelFor(64, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const std::thread::id outer = std::this_thread::get_id();
      ParallelFor(100, 1, [&](int64_t b, int64_t e) {
        EXPECT_EQ(std::this_thread::get_id(), outer);
        sum.fetch_add(e - b);
      });
    }
  });
  EXPECT_EQ(sum.load(), 64 * 100);
}

TEST(ParallelForTest, ManyCallersAtOnce) {
  std::vector<std::thread> callers;
  std::vector<int64_t> totals(8, 0);
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([t, &totals] {
      for (int round = 0; round < 200; ++round) {
        std::atomic<int64_t> sum{0};
        ParallelFor(5000, 16, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) sum.fetch_add(i);
        });
        totals[t] += sum.load();
      }
    });
  }
  for (std::thread& c : callers) c.join();
  for (int64_t total : totals) EXPECT_EQ(total, int64_t{200} * (4999 * 5000 / 2));
}

}  // namespace
}  // namespace kernels::cpu
