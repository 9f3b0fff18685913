// Tests of CastPadToNhwc (kernels/cuda/cast_pad.h) on the GPU: NCHW float32 / float16 in, NHWC
// float32 / float16 / bfloat16 out with the channels zero-padded, for the packed channel counts (2, 4,
// 8) and the per-channel loop (5), every output element against the input rounded to the output
// type (a cast is exact up to that rounding). Skipped without a GPU.
#include "kernels/cuda/cast_pad.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/kernel_testing.h"

namespace kernels::cuda {
namespace {

using CastPadGpuTest = testing::GpuTest;
using testing::RoundTo;

size_t Bytes(FloatType t) { return testing::StorageBytes(t); }

void ExpectCastPad(FloatType in, FloatType out, int64_t n, int64_t c, int64_t hw, int64_t c_out) {
  std::vector<float> x(n * c * hw);
  for (size_t i = 0; i < x.size(); ++i) x[i] = RoundTo(in, 0.37f * static_cast<float>(i % 101) - 17.3f);
  const std::vector<uint8_t> x_bytes = testing::Encode(in, x);
  const size_t y_bytes = n * hw * c_out * Bytes(out);
  void *dx = nullptr, *dy = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, x_bytes.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, y_bytes), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx, x_bytes.data(), x_bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(dy, 0x7f, y_bytes), cudaSuccess);  // padding must be written, not left
  ASSERT_EQ(CastPadToNhwc(in, out, dx, dy, n, c, hw, c_out, nullptr), cudaSuccess);
  std::vector<uint8_t> y(y_bytes);
  ASSERT_EQ(cudaMemcpy(y.data(), dy, y_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  int bad = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t p = 0; p < hw; ++p) {
      for (int64_t ch = 0; ch < c_out; ++ch) {
        const size_t at = ((b * hw + p) * c_out + ch) * Bytes(out);
        const float got = testing::Decode(out, &y[at]);
        const float want = ch < c ? RoundTo(out, x[(b * c + ch) * hw + p]) : 0.0f;
        if (got != want && ++bad <= 5)
          ADD_FAILURE() << "n " << b << " pixel " << p << " channel " << ch << ": got " << got << ", want " << want;
      }
    }
  }
  EXPECT_EQ(bad, 0) << "c " << c << " -> " << c_out;
  cudaFree(dx);
  cudaFree(dy);
}

TEST_F(CastPadGpuTest, PackedChannelCountsMatchTheCast) {
  for (int64_t c_out : {2, 4, 8}) {
    ExpectCastPad(FloatType::kFloat32, FloatType::kFloat16, 3, c_out == 2 ? 1 : 3, 37 * 41, c_out);
    ExpectCastPad(FloatType::kFloat32, FloatType::kFloat32, 2, c_out == 2 ? 2 : 3, 1000, c_out);
    ExpectCastPad(FloatType::kFloat16, FloatType::kFloat16, 2, c_out == 2 ? 1 : 3, 999, c_out);
    ExpectCastPad(FloatType::kFloat32, FloatType::kBFloat16, 1, c_out == 2 ? 1 : 3, 513, c_out);
  }
}

TEST_F(CastPadGpuTest, OtherChannelCountsMatchTheCast) {
  ExpectCastPad(FloatType::kFloat32, FloatType::kFloat16, 2, 3, 777, 5);
  ExpectCastPad(FloatType::kFloat32, FloatType::kFloat16, 2, 3, 777, 3);  // no padding
}

TEST_F(CastPadGpuTest, ImageNetShapedBatchMatchesTheCast) {
  ExpectCastPad(FloatType::kFloat32, FloatType::kFloat16, 80, 3, 224 * 224 + 3, 4);
}

// The stem input of an ImageNet batch of 256 (fp32 NCHW -> fp16 and fp32 x 4 channels): time and
// bandwidth beside a memset of the output (the write ceiling). Prints; asserts only the launches.
TEST_F(CastPadGpuTest, PrintsBandwidthOfAnImageNetBatch) {
  constexpr int64_t kN = 256, kC = 3, kHw = 224 * 224;
  void *dx = nullptr, *dy = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, kN * kC * kHw * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, kN * kHw * 8 * 2), cudaSuccess);
  ASSERT_EQ(cudaMemset(dx, 0, kN * kC * kHw * 4), cudaSuccess);
  const struct {
    FloatType out;
    int64_t c_out;
    const char* name;
  } cases[] = {{FloatType::kFloat16, 4, "fp16 x 4"}, {FloatType::kFloat32, 4, "fp32 x 4"}};
  for (const auto& c : cases) {
    ASSERT_EQ(CastPadToNhwc(FloatType::kFloat32, c.out, dx, dy, kN, kC, kHw, c.c_out, nullptr), cudaSuccess);
    const double bytes = kN * kHw * (kC * 4.0 + c.c_out * Bytes(c.out));
    const float ms = testing::MeanLaunchMs(
        [&] { CastPadToNhwc(FloatType::kFloat32, c.out, dx, dy, kN, kC, kHw, c.c_out, nullptr); });
    const size_t y_bytes = kN * kHw * c.c_out * Bytes(c.out);
    const float memset_ms = testing::MeanLaunchMs([&] { cudaMemsetAsync(dy, 1, y_bytes); });
    std::printf("cast-pad 256x3x224x224 fp32 -> %s NHWC: %.4f ms, %.0f GB/s (memset of y: %.4f ms, %.0f GB/s)\n",
                c.name, ms, bytes / (ms * 1e-3) / 1e9, memset_ms, y_bytes / (memset_ms * 1e-3) / 1e9);
  }
  cudaFree(dx);
  cudaFree(dy);
}

}  // namespace
}  // namespace kernels::cuda
