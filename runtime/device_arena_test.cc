// PackBlocks: buffers alive at the same time never overlap, buffers that are not share memory, and
// the arena is as small as the largest set alive at once where the sizes allow it.
#include "runtime/device_arena.h"

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
  EXPECT_EQ(layout.sizes, (std::vector<size_t>{100, 300, 5000, 16, 7000}));
  // At event 6 blocks 0, 1 and 4 are alive: 256 + 512 + 7168 bytes after rounding.
  EXPECT_EQ(layout.bytes, 7936u);
}

TEST(PackBlocksTest, NoBlocksNoArena) {
  const ArenaLayout layout = PackBlocks({});
  EXPECT_EQ(layout.bytes, 0u);
  EXPECT_TRUE(layout.offsets.empty());
}

}  // namespace
}  // namespace exec
