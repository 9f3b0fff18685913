// PackBlocks: buffers alive at the same time never overlap, buffers that are not share memory, and
// the arena is as small as the largest set alive at once where the sizes allow it. ArenaAllocator:
// the recorded order and sizes are served, and a buffer kept longer than recorded is reported.
#include "runtime/device_arena.h"

#include <cstddef>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace exec {
namespace {

// True when no two blocks alive at once overlap in the layout.
bool Disjoint(const std::vector<ArenaBlock>& blocks, const ArenaLayout& layout) {
  for (size_t a = 0; a < blocks.size(); ++a) {
    for (size_t b = a + 1; b < blocks.size(); ++b) {
      const int64_t end_a = blocks[a].died < 0 ? INT64_MAX : blocks[a].died;
      const int64_t end_b = blocks[b].died < 0 ? INT64_MAX : blocks[b].died;
      if (blocks[a].born >= end_b || blocks[b].born >= end_a) continue;
      if (layout.offsets[a] < layout.offsets[b] + blocks[b].bytes &&
          layout.offsets[b] < layout.offsets[a] + blocks[a].bytes) {
        return false;
      }
    }
  }
  return true;
}

TEST(PackBlocksTest, ChainReusesTheMemoryOfDeadBuffers) {
  // x -> a -> b -> c: each buffer dies once the next exists (events: alloc x 0, alloc a 1, free x
  // 2, alloc b 3, free a 4, alloc c 5, free b 6; c lives on).
  const std::vector<ArenaBlock> blocks = {{1024, 0, 2}, {1024, 1, 4}, {1024, 3, 6}, {1024, 5, -1}};
  const ArenaLayout layout = PackBlocks(blocks);
  EXPECT_TRUE(Disjoint(blocks, layout));
  EXPECT_EQ(layout.bytes, 2048u);  // two alive at once at most
  EXPECT_EQ(layout.offsets[0], layout.offsets[2]);
  EXPECT_EQ(layout.offsets[1], layout.offsets[3]);
}

TEST(PackBlocksTest, BuffersAliveTogetherGetDisjointAlignedRanges) {
  const std::vector<ArenaBlock> blocks = {{100, 0, -1}, {300, 1, -1}, {5000, 2, 4}, {16, 3, 5}, {7000, 6, 7}};
  const ArenaLayout layout = PackBlocks(blocks, 256);
  EXPECT_TRUE(Disjoint(blocks, layout));
  for (size_t offset : layout.offsets) EXPECT_EQ(offset % 256, 0u);
  std::vector<size_t> sizes;
  for (const ArenaBlock& b : layout.blocks) sizes.push_back(b.bytes);
  EXPECT_EQ(sizes, (std::vector<size_t>{100, 300, 5000, 16, 7000}));
  // At event 6 blocks 0, 1 and 4 are alive: 256 + 512 + 7168 bytes after rounding.
  EXPECT_EQ(layout.bytes, 7936u);
}

TEST(PackBlocksTest, NoBlocksNoArena) {
  const ArenaLayout layout = PackBlocks({});
  EXPECT_EQ(layout.bytes, 0u);
  EXPECT_TRUE(layout.offsets.empty());
}

// The chain above served from a host buffer (ArenaAllocator only hands out offsets).
class ArenaAllocatorTest : public ::testing::Test {
 protected:
  const std::vector<ArenaBlock> blocks_ = {{1024, 0, 2}, {1024, 1, 4}, {1024, 3, 6}, {1024, 5, -1}};
  std::shared_ptr<void> arena_{new char[4096], [](void* p) { delete[] static_cast<char*>(p); }};
};

TEST_F(ArenaAllocatorTest, TheRecordedLifetimesMatch) {
  ArenaAllocator allocator(arena_, PackBlocks(blocks_));
  absl::StatusOr<std::shared_ptr<void>> x = allocator.Allocate(1024, nullptr);
  absl::StatusOr<std::shared_ptr<void>> a = allocator.Allocate(1024, nullptr);
  ASSERT_TRUE(x.ok() && a.ok());
  x->reset();
  absl::StatusOr<std::shared_ptr<void>> b = allocator.Allocate(1024, nullptr);
  ASSERT_TRUE(b.ok());
  a->reset();
  absl::StatusOr<std::shared_ptr<void>> c = allocator.Allocate(1024, nullptr);
  ASSERT_TRUE(c.ok());
  b->reset();
  EXPECT_TRUE(allocator.complete());
  EXPECT_EQ(allocator.LifetimeMismatch(), "");
  EXPECT_EQ(static_cast<char*>(c->get()) - static_cast<char*>(arena_.get()),
            static_cast<std::ptrdiff_t>(PackBlocks(blocks_).offsets[3]));
}

TEST_F(ArenaAllocatorTest, ABufferKeptLongerIsReported) {
  ArenaAllocator allocator(arena_, PackBlocks(blocks_));
  absl::StatusOr<std::shared_ptr<void>> x = allocator.Allocate(1024, nullptr);
  absl::StatusOr<std::shared_ptr<void>> a = allocator.Allocate(1024, nullptr);
  absl::StatusOr<std::shared_ptr<void>> b = allocator.Allocate(1024, nullptr);  // x still alive: shares its bytes
  ASSERT_TRUE(x.ok() && a.ok() && b.ok());
  x->reset();
  EXPECT_EQ(allocator.LifetimeMismatch(),
            "buffer 0 (1024 bytes) lived from event 0 to 3, the recorded run's from 0 to 2");
}

TEST_F(ArenaAllocatorTest, TheListenerHearsEveryAllocationAndDeathUntilCleared) {
  ArenaAllocator allocator(arena_, PackBlocks(blocks_));
  int heard = 0;
  cudaStream_t heard_stream = nullptr;
  const cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x10);  // only passed through
  allocator.set_listener([&](cudaStream_t s) {
    ++heard;
    heard_stream = s;
  });
  absl::StatusOr<std::shared_ptr<void>> x = allocator.Allocate(1024, stream);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(heard, 1);
  EXPECT_EQ(heard_stream, stream);
  absl::StatusOr<std::shared_ptr<void>> a = allocator.Allocate(1024, stream);
  ASSERT_TRUE(a.ok());
  x->reset();
  EXPECT_EQ(heard, 3);
  allocator.set_listener(nullptr);
  a->reset();
  EXPECT_EQ(heard, 3);
}

TEST_F(ArenaAllocatorTest, AnotherSizeOrOneMoreRequestIsRefused) {
  ArenaAllocator allocator(arena_, PackBlocks(blocks_));
  EXPECT_EQ(allocator.Allocate(512, nullptr).status().code(), absl::StatusCode::kFailedPrecondition);
  std::vector<std::shared_ptr<void>> kept;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<std::shared_ptr<void>> served = allocator.Allocate(1024, nullptr);
    ASSERT_TRUE(served.ok()) << served.status();
    kept.push_back(*std::move(served));
  }
  EXPECT_TRUE(allocator.complete());
  EXPECT_EQ(allocator.Allocate(1024, nullptr).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace exec
