// Tests of GlobalAvgPoolNhwc (kernels/cuda/global_avg_pool.h): how many row slices it asks for (host
// only), then every output against a double-precision mean of the very inputs the GPU reads, for the
// vector and scalar paths, one and several slices, float32 / float16 / bfloat16 (float32 within 1e-5,
// 16-bit within their output rounding), and GlobalAvgPoolFromSums. The GPU tests skip without a GPU.
#include "kernels/cuda/global_avg_pool.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/kernel_testing.h"

namespace kernels::cuda {
namespace {

TEST(GlobalAvgPoolSplitsTest, SlicesOnlyWhenTheBatchLeavesTheGpuIdle) {
  EXPECT_EQ(GlobalAvgPoolSplits(256, 49, 1152), 1);  // 256 images: enough blocks
  EXPECT_EQ(GlobalAvgPoolSplits(1, 49, 1152), 1);    // too few rows to split
  EXPECT_GT(GlobalAvgPoolSplits(1, 112 * 112, 32), 1);
  EXPECT_LE(GlobalAvgPoolSplits(1, 112 * 112, 32), 64);
  EXPECT_GT(GlobalAvgPoolSplits(32, 56 * 56, 144), 1);
}

using GlobalAvgPoolGpuTest = testing::GpuTest;

size_t Bytes(FloatType t) { return testing::StorageBytes(t); }

void ExpectMeans(FloatType type, int64_t n, int64_t hw, int64_t c, int splits) {
  std::vector<float> x(n * hw * c);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = testing::RoundTo(type, static_cast<float>((i * 7919) % 1009) / 101.0f - 4.0f);
  const std::vector<uint8_t> bytes = testing::Encode(type, x);
  void *dx = nullptr, *dy = nullptr, *scratch = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, bytes.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, n * c * Bytes(type)), cudaSuccess);
  if (splits > 1) ASSERT_EQ(cudaMalloc(&scratch, splits * n * c * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(GlobalAvgPoolNhwc(type, dx, dy, n, hw, c, static_cast<float*>(scratch), splits, nullptr), cudaSuccess);
  std::vector<uint8_t> y(n * c * Bytes(type));
  ASSERT_EQ(cudaMemcpy(y.data(), dy, y.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  const double tolerance = type == FloatType::kFloat32 ? 1e-5 : type == FloatType::kFloat16 ? 1e-3 : 8e-3;
  int bad = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      double sum = 0;
      for (int64_t p = 0; p < hw; ++p) sum += x[(b * hw + p) * c + ch];
      const double want = sum / static_cast<double>(hw);
      const double got = testing::Decode(type, &y[(b * c + ch) * Bytes(type)]);
      if (std::fabs(got - want) > tolerance * std::max(1.0, std::fabs(want)) && ++bad <= 5) {
        ADD_FAILURE() << "image " << b << " channel " << ch << ": got " << got << ", want " << want;
      }
    }
  }
  EXPECT_EQ(bad, 0) << "n " << n << " hw " << hw << " c " << c << " splits " << splits;
  for (void* d : {dx, dy, scratch}) cudaFree(d);
}

TEST_F(GlobalAvgPoolGpuTest, VectorPathMatchesTheMean) {
  ExpectMeans(FloatType::kFloat16, 3, 49, 1152, 1);
  ExpectMeans(FloatType::kBFloat16, 4, 196, 672, 1);
  ExpectMeans(FloatType::kFloat32, 2, 49, 2560, 1);  // more than 256 vectors: several blocks per image
  // One image: blocks of fewer vectors (down to 8) and more row groups each.
  ExpectMeans(FloatType::kFloat16, 1, 49, 2048, 1);
  ExpectMeans(FloatType::kFloat32, 1, 49, 1280, 1);
  ExpectMeans(FloatType::kBFloat16, 1, 7, 200, 1);
}

TEST_F(GlobalAvgPoolGpuTest, RowSlicesAddUpToTheMean) {
  ExpectMeans(FloatType::kFloat16, 2, 112 * 112, 32, GlobalAvgPoolSplits(2, 112 * 112, 32));
  ExpectMeans(FloatType::kFloat32, 1, 3136, 144, 7);
}

TEST_F(GlobalAvgPoolGpuTest, ScalarPathMatchesTheMean) {  // channels not a multiple of the vector
  ExpectMeans(FloatType::kFloat32, 2, 300, 21, 1);
  ExpectMeans(FloatType::kFloat16, 1, 1000, 13, 3);
}

TEST_F(GlobalAvgPoolGpuTest, RefusesBadArguments) {
  EXPECT_EQ(GlobalAvgPoolNhwc(FloatType::kFloat16, nullptr, nullptr, 0, 1, 1, nullptr, 1, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(GlobalAvgPoolNhwc(FloatType::kFloat16, nullptr, nullptr, 1, 1000, 8, nullptr, 2, nullptr),
            cudaErrorInvalidValue);  // slices without scratch
}

// The mean from channel sums (what a depthwise conv summed while writing the map): every output is
// the sum divided by hw, rounded to the storage type.
TEST_F(GlobalAvgPoolGpuTest, MeanFromSumsDividesEverySum) {
  constexpr int64_t kCount = 3 * 1152 + 5, kHw = 196;
  std::vector<float> sums(kCount);
  for (int64_t i = 0; i < kCount; ++i) sums[i] = static_cast<float>((i * 7919) % 2003) * 0.37f - 300.0f;
  for (FloatType type : {FloatType::kFloat32, FloatType::kFloat16, FloatType::kBFloat16}) {
    void *dsums = nullptr, *dy = nullptr;
    ASSERT_EQ(cudaMalloc(&dsums, kCount * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dy, kCount * Bytes(type)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dsums, sums.data(), kCount * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(GlobalAvgPoolFromSums(type, static_cast<const float*>(dsums), dy, kCount, kHw, nullptr), cudaSuccess);
    std::vector<uint8_t> y(kCount * Bytes(type));
    ASSERT_EQ(cudaMemcpy(y.data(), dy, y.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    // Half an ulp of the storage type for the rounding, plus float's for sum * (1 / hw).
    const double tolerance = type == FloatType::kFloat32 ? 2e-7 : type == FloatType::kFloat16 ? 5e-4 : 4e-3;
    int bad = 0;
    for (int64_t i = 0; i < kCount; ++i) {
      const double want = static_cast<double>(sums[i]) / kHw;
      const double got = testing::Decode(type, &y[i * Bytes(type)]);
      if (std::fabs(got - want) > tolerance * std::fabs(want) + 1e-30 && ++bad <= 5) {
        ADD_FAILURE() << "element " << i << ": got " << got << ", want " << want;
      }
    }
    EXPECT_EQ(bad, 0);
    for (void* d : {dsums, dy}) cudaFree(d);
  }
  EXPECT_EQ(GlobalAvgPoolFromSums(FloatType::kFloat16, nullptr, nullptr, 1, 1, nullptr), cudaErrorInvalidValue);
}

// EfficientNet-B0's squeeze-excite pools at batch 256, fp16, on zero-filled buffers: the time and
// bandwidth with the slices GlobalAvgPoolSplits picks beside 1, 2, 4, 8 and 16 slices. Prints;
// asserts only that the launches succeed (speed is the benchmarks' business).
TEST_F(GlobalAvgPoolGpuTest, PrintsBandwidthOfSqueezeExcitePools) {
  struct Layer {
    int64_t hw, c;
  };
  const Layer layers[] = {{112 * 112, 32}, {56 * 56, 96},  {56 * 56, 144},
                          {28 * 28, 240},  {14 * 14, 480}, {7 * 7, 1152}};
  constexpr int64_t kBatch = 256;
  constexpr int kMaxSplits = 64;
  void *x = nullptr, *y = nullptr, *scratch = nullptr;
  ASSERT_EQ(cudaMalloc(&x, kBatch * 56 * 56 * 144 * 2), cudaSuccess);  // the largest layer
  ASSERT_EQ(cudaMalloc(&y, kBatch * 1152 * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&scratch, kMaxSplits * kBatch * 1152 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(x, 0, kBatch * 56 * 56 * 144 * 2), cudaSuccess);
  for (const Layer& l : layers) {
    const int chosen = GlobalAvgPoolSplits(kBatch, l.hw, l.c);
    std::printf("global avg pool of %lld rows x %lld channels, batch 256, fp16:", static_cast<long long>(l.hw),
                static_cast<long long>(l.c));
    for (int splits : {chosen, 1, 2, 4, 8, 16}) {
      auto launch = [&] {
        return GlobalAvgPoolNhwc(FloatType::kFloat16, x, y, kBatch, l.hw, l.c, static_cast<float*>(scratch), splits,
                                 nullptr);
      };
      ASSERT_EQ(launch(), cudaSuccess);
      const float ms = testing::MeanLaunchMs(launch);
      std::printf(" %s%d: %.4f ms (%.0f GB/s)", splits == chosen ? "chosen " : "", splits, ms,
                  2.0 * kBatch * l.hw * l.c / (ms * 1e-3) / 1e9);
    }
    std::printf("\n");
  }
  for (void* d : {x, y, scratch}) cudaFree(d);
}

// The pools at the end of resnet50 (2048 channels) and mobilenet_v2 (1280) at batch 1, fp16: they
// are latency-bound, a few microseconds each. Prints; asserts only that the launches succeed.
TEST_F(GlobalAvgPoolGpuTest, PrintsBatchOnePools) {
  void *x = nullptr, *y = nullptr;
  ASSERT_EQ(cudaMalloc(&x, 49 * 2048 * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&y, 2048 * 2), cudaSuccess);
  ASSERT_EQ(cudaMemset(x, 0, 49 * 2048 * 2), cudaSuccess);
  for (int64_t c : {2048, 1280}) {
    auto launch = [&] { return GlobalAvgPoolNhwc(FloatType::kFloat16, x, y, 1, 49, c, nullptr, 1, nullptr); };
    ASSERT_EQ(launch(), cudaSuccess);
    std::printf("global avg pool of 49 rows x %lld channels, batch 1, fp16: %.4f ms\n", static_cast<long long>(c),
                testing::MeanLaunchMs(launch));
  }
  for (void* d : {x, y}) cudaFree(d);
}

}  // namespace
}  // namespace kernels::cuda
