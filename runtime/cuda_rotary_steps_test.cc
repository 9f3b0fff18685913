// Tests of the RotaryEmbedding device runner (runtime/device_runners_rotary.cc): each form runs
// through RunCudaKernel and through the host reference on the same inputs, every output element
// compared (float32 1e-5 relative, float16 1e-2): heads-first and [B, seq, hidden] X, position ids
// or per-position caches, interleaved pairs, a partial rotary dim, an NHWC-stored X, a captured
// replay; a position id past the cache zeroes that position only. Also the support rules (run
// without a GPU).
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda_kernel_steps.h"
#include "runtime/kernel_step_testing.h"

namespace exec {
namespace {

using ir::DType;
using ir::Tensor;
using kernel_testing::Case;
using kernel_testing::Ints;
using kernel_testing::Random;

// Position ids [batch, seq] in [0, rows), deterministic.
Tensor Positions(int64_t batch, int64_t seq, int64_t rows) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < batch * seq; ++i) ids.push_back((i * 5 + 3) % rows);
  return *Ints(ids).Reshaped({batch, seq});
}

class CudaRotaryStepsTest : public kernel_testing::KernelStepTest {};

TEST_F(CudaRotaryStepsTest, Forms) {
  Case a("RotaryEmbedding", 23);
  a.In(Random(DType::kFloat32, {2, 3, 5, 8}, 1)).In(Random(DType::kFloat32, {2, 5, 4}, 2));
  a.In(Random(DType::kFloat32, {2, 5, 4}, 3)).Label("[B, heads, seq, head], a cache row per position");
  Check(a);
  Case b("RotaryEmbedding", 23);
  b.In(Random(DType::kFloat16, {2, 5, 24}, 4)).In(Random(DType::kFloat16, {7, 4}, 5));
  b.In(Random(DType::kFloat16, {7, 4}, 6)).In(Positions(2, 5, 7)).Attr("num_heads", int64_t{3});
  b.Label("fp16 [B, seq, hidden], position ids");
  Check(b);
  Case c("RotaryEmbedding", 23);
  c.In(Random(DType::kFloat32, {1, 2, 6, 10}, 7)).In(Random(DType::kFloat32, {9, 3}, 8));
  c.In(Random(DType::kFloat32, {9, 3}, 9)).In(Positions(1, 6, 9));
  c.Attr("interleaved", int64_t{1}).Attr("rotary_embedding_dim", int64_t{6}).Label("interleaved, 6 of 10 rotated");
  Check(c);
  Case d("RotaryEmbedding", 23);
  d.In(Random(DType::kFloat32, {2, 4, 3, 6}, 10), /*nhwc=*/true).In(Random(DType::kFloat32, {2, 3, 2}, 11));
  d.In(Random(DType::kFloat32, {2, 3, 2}, 12)).Attr("rotary_embedding_dim", int64_t{4}).Label("NHWC-stored X");
  Check(d);
  Case e("RotaryEmbedding", 23);
  e.In(Random(DType::kFloat16, {4, 8, 32, 64}, 13)).In(Random(DType::kFloat16, {40, 32}, 14));
  e.In(Random(DType::kFloat16, {40, 32}, 15)).In(Positions(4, 32, 40)).Label("captured");
  CheckCaptured(e);
}

TEST_F(CudaRotaryStepsTest, PositionPastTheCacheZeroesThatPosition) {
  Tensor positions = Positions(1, 4, 6);
  positions.data<int64_t>()[2] = 6;  // the cache has rows 0..5
  Tensor x = Random(DType::kFloat32, {1, 4, 8}, 1), cos = Random(DType::kFloat32, {6, 4}, 2);
  Tensor sin = Random(DType::kFloat32, {6, 4}, 3);
  Case bad("RotaryEmbedding", 23);
  bad.In(x).In(cos).In(sin).In(positions).Attr("num_heads", int64_t{1});
  std::vector<DeviceTensor> inputs = UploadInputs(bad);
  absl::StatusOr<std::vector<DeviceTensor>> got = RunCudaKernel(bad.graph(), bad.node(), inputs, stream_);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<Tensor> y = Download((*got)[0], stream_);
  ASSERT_TRUE(y.ok()) << y.status();
  // Every other position as the host computes it with a valid id there.
  positions.data<int64_t>()[2] = 0;
  absl::StatusOr<std::vector<Tensor>> want = RunNodeOnCpu(bad.node(), {&x, &cos, &sin, &positions});
  ASSERT_TRUE(want.ok()) << want.status();
  for (int64_t i = 0; i < y->num_elements(); ++i) {
    if (i / 8 == 2) {
      EXPECT_EQ(y->data<float>()[i], 0.f) << "element " << i;
    } else {
      EXPECT_NEAR(y->data<float>()[i], (*want)[0].data<float>()[i], 1e-5) << "element " << i;
    }
  }
}

bool Supports(Case& c) { return CudaKernelSupports(c.graph(), c.node()); }

TEST(CudaRotarySupportsTest, FormsLeftToTheHost) {
  Case no_heads("RotaryEmbedding", 23);
  no_heads.In(Random(DType::kFloat32, {1, 4, 8}, 1)).In(Random(DType::kFloat32, {1, 4, 4}, 2));
  no_heads.In(Random(DType::kFloat32, {1, 4, 4}, 3));
  EXPECT_FALSE(Supports(no_heads)) << "a 3-D X needs num_heads";
  Case int32_ids("RotaryEmbedding", 23);
  int32_ids.In(Random(DType::kFloat32, {1, 1, 4, 8}, 1)).In(Random(DType::kFloat32, {6, 4}, 2));
  int32_ids.In(Random(DType::kFloat32, {6, 4}, 3)).In(Ints({0, 1, 2, 3}, DType::kInt32));
  EXPECT_FALSE(Supports(int32_ids));
  Case ok("RotaryEmbedding", 23);
  ok.In(Random(DType::kFloat16, {1, 1, 4, 8}, 1)).In(Random(DType::kFloat16, {6, 4}, 2));
  ok.In(Random(DType::kFloat16, {6, 4}, 3)).In(Positions(1, 4, 6));
  EXPECT_TRUE(Supports(ok));
}

}  // namespace
}  // namespace exec
