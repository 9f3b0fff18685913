// DeviceTensor's layout arithmetic (no GPU needed: no buffer is allocated): strides of the stored
// layout, and strides for reading a tensor broadcast to a larger output, checked against the
// definitions on every index.
#include "runtime/device_tensor.h"

#include <vector>

#include "gtest/gtest.h"

namespace exec {
namespace {

DeviceTensor Described(std::vector<int64_t> dims, bool nhwc) {
  DeviceTensor t;
  t.dtype = ir::DType::kFloat32;
  t.dims = std::move(dims);
  t.nhwc = nhwc;
  return t;
}

TEST(DeviceTensorTest, StridesOfLogicalAndNhwcLayouts) {
  EXPECT_EQ(Described({2, 3, 4, 5}, false).strides(), (std::vector<int64_t>{60, 20, 5, 1}));
  // NHWC: element (n, c, h, w) lives at n*HWC + h*WC + w*C + c.
  EXPECT_EQ(Described({2, 3, 4, 5}, true).strides(), (std::vector<int64_t>{60, 1, 15, 3}));
}

// Every output index maps to the element numpy broadcasting reads, in the tensor's own layout.
TEST(DeviceTensorTest, BroadcastStridesReadTheBroadcastElement) {
  const std::vector<int64_t> out = {2, 3, 4, 5};
  for (bool nhwc : {false, true}) {
    const DeviceTensor per_channel = Described({1, 3, 1, 1}, false);
    EXPECT_EQ(per_channel.BroadcastStrides(out), (std::vector<int64_t>{0, 1, 0, 0}));
    const DeviceTensor full = Described(out, nhwc);
    EXPECT_EQ(full.BroadcastStrides(out), full.strides());
  }
  // Lower rank aligns to the right: [4, 1] against [2, 3, 4, 5] reads element h.
  const DeviceTensor column = Described({4, 1}, false);
  const std::vector<int64_t> s = column.BroadcastStrides(out);
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t h = 0; h < 4; ++h) {
        for (int64_t w = 0; w < 5; ++w) EXPECT_EQ(n * s[0] + c * s[1] + h * s[2] + w * s[3], h);
      }
    }
  }
}

}  // namespace
}  // namespace exec
