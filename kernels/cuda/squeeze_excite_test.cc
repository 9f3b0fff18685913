// The squeeze-excite kernel against a double reference, every element: EfficientNet's (SiLU,
// Sigmoid) and MobileNetV3's (Relu, HardSigmoid) MLPs at their real widths, a W2 widened by
// channel padding, float16 / bfloat16 / float32, batches that give 1, 2 and 8 samples per block,
// the gate applied to the map it feeds (scale_map); parameters it cannot take are refused.
#include "kernels/cuda/squeeze_excite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/kernel_testing.h"

namespace kernels::cuda {
namespace {

using namespace testing;  // NOLINT: the kernel test helpers
using Params = SqueezeExciteParams;

class SqueezeExciteGpuTest : public GpuTest {};

// An MLP of C channels and R hidden units (W2 rows of r_row >= R) in `type`, SiLU and Sigmoid.
Params MlpParams(int64_t batch, int64_t c, int64_t r, int64_t r_row, FloatType type) {
  Params p;
  p.batch = batch;
  p.channels = c;
  p.reduced = r;
  p.w2_row = r_row;
  p.type = type;
  return p;
}

// y[n, c] for the float-valued (already rounded) operands, in double.
std::vector<double> Reference(const Params& p, const std::vector<float>& x, const std::vector<float>& w1,
                              const std::vector<float>& b1, const std::vector<float>& w2,
                              const std::vector<float>& b2) {
  std::vector<double> y(p.batch * p.channels);
  std::vector<double> hidden(p.reduced);
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t r = 0; r < p.reduced; ++r) {
      double h = b1[r];
      for (int64_t c = 0; c < p.channels; ++c) h += static_cast<double>(w1[r * p.channels + c]) * x[n * p.channels + c];
      hidden[r] = p.activation == Params::kRelu ? std::max(h, 0.0) : h / (1 + std::exp(-h));
    }
    for (int64_t c = 0; c < p.channels; ++c) {
      double z = b2[c];
      for (int64_t k = 0; k < p.reduced; ++k) z += static_cast<double>(w2[c * p.w2_row + k]) * hidden[k];
      y[n * p.channels + c] =
          p.gate == Params::kSigmoid ? 1 / (1 + std::exp(-z)) : std::clamp(p.alpha * z + p.beta, 0.0, 1.0);
    }
  }
  return y;
}

// With from_sums the kernel reads x as float channel sums over a 7x7 map (x * 49) and the scale 1/49.
// With map_pixels > 0 it multiplies a random [N, map_pixels, C] map by the gates (scale_map), which
// is checked instead of the gates: every element against map * the reference gate.
void ExpectMatchesReference(Params p, bool from_sums = false, int64_t map_pixels = 0) {
  std::mt19937 gen(static_cast<uint32_t>(p.channels * 13 + p.reduced));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto random = [&](int64_t count, float scale) {
    std::vector<float> v(count);
    for (float& e : v) e = RoundTo(p.type, dist(gen) * scale);
    return v;
  };
  const std::vector<float> x = random(p.batch * p.channels, 2.f), b1 = random(p.reduced, 1.f),
                           b2 = random(p.channels, 1.f);
  const std::vector<float> w1 = random(p.reduced * p.channels, 2.f / std::sqrt(static_cast<float>(p.channels)));
  std::vector<float> w2 = random(p.channels * p.w2_row, 2.f / std::sqrt(static_cast<float>(p.reduced)));
  for (int64_t c = 0; c < p.channels; ++c) {  // channel padding's zeros
    for (int64_t k = p.reduced; k < p.w2_row; ++k) w2[c * p.w2_row + k] = 0.f;
  }
  std::vector<float> sums(x.size());
  for (size_t i = 0; i < x.size(); ++i) sums[i] = x[i] * 49.f;
  float* d_sums = from_sums ? static_cast<float*>(ToDevice(Encode(FloatType::kFloat32, sums))) : nullptr;
  p.channel_sums = d_sums;
  p.sums_scale = 1.f / 49.f;
  void* dx = from_sums ? nullptr : ToDevice(Encode(p.type, x));
  const std::vector<float> map = random(p.batch * map_pixels * p.channels, 3.f);
  void* dmap = map_pixels > 0 ? ToDevice(Encode(p.type, map)) : nullptr;
  p.scale_map = dmap;
  p.map_pixels = map_pixels;
  const size_t y_count = map_pixels > 0 ? map.size() : x.size();
  void* dy = ToDevice(Encode(p.type, std::vector<float>(y_count, 0.f)));
  p.w1 = ToDevice(Encode(p.type, w1));
  p.b1 = ToDevice(Encode(p.type, b1));
  p.w2 = ToDevice(Encode(p.type, w2));
  p.b2 = ToDevice(Encode(p.type, b2));
  ASSERT_EQ(SqueezeExcite(p, dx, dy, nullptr), cudaSuccess);
  std::vector<uint8_t> got(y_count * StorageBytes(p.type));
  ASSERT_EQ(cudaMemcpy(got.data(), dy, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  std::vector<double> want = Reference(p, x, w1, b1, w2, b2);
  if (map_pixels > 0) {  // the product: map[n, q, c] * gate[n, c]
    const std::vector<double> gates = std::move(want);
    want.resize(map.size());
    for (size_t i = 0; i < map.size(); ++i) {
      const size_t n = i / (map_pixels * p.channels), c = i % p.channels;
      want[i] = map[i] * gates[n * p.channels + c];
    }
  }
  // Gates lie in [0, 1]; a product is held to the same bound relative to the map's magnitude.
  const double tolerance = p.type == FloatType::kFloat32 ? 1e-5 : p.type == FloatType::kFloat16 ? 2e-3 : 1.6e-2;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double value = Decode(p.type, &got[i * StorageBytes(p.type)]);
    const double limit = tolerance * (map_pixels > 0 ? std::max(1.0, static_cast<double>(std::fabs(map[i]))) : 1.0);
    if (!(std::fabs(value - want[i]) <= limit) && ++bad <= 5) {
      ADD_FAILURE() << "element " << i << ": got " << value << ", want " << want[i];
    }
  }
  EXPECT_EQ(bad, 0) << "N " << p.batch << " C " << p.channels << " R " << p.reduced << " R' " << p.w2_row;
  for (const void* d : {static_cast<const void*>(dx), static_cast<const void*>(dy), p.w1, p.b1, p.w2, p.b2,
                        static_cast<const void*>(d_sums), static_cast<const void*>(dmap)}) {
    cudaFree(const_cast<void*>(d));
  }
}

TEST_F(SqueezeExciteGpuTest, EfficientNetAndMobileNetMlpsMatchReference) {
  struct Shape {
    int64_t c, r, r_row;
    Params::Activation act;
    Params::Gate gate;
  };
  const Shape shapes[] = {
      {32, 8, 8, Params::kSilu, Params::kSigmoid},           // EfficientNet-B0's first block
      {240, 10, 12, Params::kSilu, Params::kSigmoid},        // R = 10 padded to 12 in fp16
      {1152, 48, 48, Params::kSilu, Params::kSigmoid},       // its widest
      {960, 240, 240, Params::kRelu, Params::kHardSigmoid},  // MobileNetV3-Large's widest
      {100, 25, 25, Params::kRelu, Params::kSigmoid},        // rows too short for 16-byte loads
  };
  for (FloatType type : {FloatType::kFloat16, FloatType::kBFloat16, FloatType::kFloat32}) {
    for (const Shape& s : shapes) {
      for (int64_t batch : {1, 19, 70}) {  // one sample per block, 2 (a partial last block), 8
        Params p = MlpParams(batch, s.c, s.r, s.r_row, type);
        p.activation = s.act;
        p.gate = s.gate;
        p.alpha = 1.f / 6;
        ExpectMatchesReference(p);
      }
    }
  }
}

// The pooled inputs as float channel sums and their scale (the pool joined to the MLP): the same
// outputs as from the pooled tensor, in every type.
TEST_F(SqueezeExciteGpuTest, ChannelSumsInPlaceOfPooledInputMatchReference) {
  for (FloatType type : {FloatType::kFloat16, FloatType::kBFloat16, FloatType::kFloat32}) {
    for (int64_t batch : {1, 19}) {
      ExpectMatchesReference(MlpParams(batch, 240, 10, 12, type), /*from_sums=*/true);
    }
  }
}

// The gate applied to the map it feeds (scale_map: the Mul joined to the MLP): EfficientNet-B0's
// blocks at batch 1 and 2 (from the channel sums, as the runtime runs them, and from pooled
// inputs), channel counts without 16-byte vectors, and a map of one pixel; every type.
TEST_F(SqueezeExciteGpuTest, GateTimesMapMatchesReference) {
  struct Shape {
    int64_t c, r, r_row, pixels;
  };
  const Shape shapes[] = {
      {32, 8, 8, 112 * 112}, {144, 6, 8, 56 * 56}, {672, 28, 28, 14 * 14},
      {1152, 48, 48, 7 * 7}, {100, 25, 25, 9 * 9},  // no 16-byte vectors along C
      {240, 10, 12, 1},
  };
  for (FloatType type : {FloatType::kFloat16, FloatType::kBFloat16, FloatType::kFloat32}) {
    for (const Shape& s : shapes) {
      for (int64_t batch : {1, 2}) {
        ExpectMatchesReference(MlpParams(batch, s.c, s.r, s.r_row, type), /*from_sums=*/batch == 1, s.pixels);
      }
    }
  }
}

// The widest blocks of MobileNetV3-Large (C 960, R 240) and EfficientNet-B0 (1152, 48) in fp16 at
// batch 1 and 16, on zero weights: prints the time per launch; asserts only that launches succeed.
TEST_F(SqueezeExciteGpuTest, PrintsTimeOfTheWidestBlocks) {
  for (const auto& [c, r] : {std::pair<int64_t, int64_t>{960, 240}, {1152, 48}}) {
    for (int64_t batch : {1, 16}) {
      Params p;
      p.batch = batch;
      p.channels = c;
      p.reduced = p.w2_row = r;
      p.type = FloatType::kFloat16;
      void *x = nullptr, *y = nullptr, *w = nullptr;
      ASSERT_EQ(cudaMalloc(&x, batch * c * 2), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&y, batch * c * 2), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&w, 2 * c * r * 2), cudaSuccess);
      ASSERT_EQ(cudaMemset(x, 0, batch * c * 2), cudaSuccess);
      ASSERT_EQ(cudaMemset(w, 0, 2 * c * r * 2), cudaSuccess);
      p.w1 = w;
      p.w2 = static_cast<char*>(w) + c * r * 2;
      auto launch = [&] { return SqueezeExcite(p, x, y, nullptr); };
      ASSERT_EQ(launch(), cudaSuccess);
      std::printf("squeeze-excite C %lld R %lld batch %lld fp16: %.4f ms\n", static_cast<long long>(c),
                  static_cast<long long>(r), static_cast<long long>(batch), testing::MeanLaunchMs(launch));
      for (void* d : {x, y, w}) cudaFree(d);
    }
  }
}

// Host only: what fits the kernel's 48 KiB of shared memory, with and without a map to scale.
TEST(SqueezeExciteFitsTest, SharedMemoryOfTheGateAndOfTheScaledMap) {
  Params p = MlpParams(1, 6144, 8, 8, FloatType::kFloat16);
  EXPECT_EQ(SqueezeExciteSharedBytes(p, /*with_map=*/false), (6144 + 8) * sizeof(float));
  EXPECT_TRUE(SqueezeExciteFits(p, /*with_map=*/false));  // 24.6 KB
  EXPECT_EQ(SqueezeExciteSharedBytes(p, /*with_map=*/true), (2 * 6144 + 8) * sizeof(float));
  EXPECT_FALSE(SqueezeExciteFits(p, /*with_map=*/true));  // 49.2 KB
  p.channels = 1152;
  EXPECT_TRUE(SqueezeExciteFits(p, /*with_map=*/true));
}

TEST_F(SqueezeExciteGpuTest, RefusesWhatItCannotRun) {
  Params p;
  p.batch = 1;
  p.channels = 16;
  p.reduced = 4;
  p.w2_row = 3;  // narrower than R
  int dummy = 0;
  p.w1 = p.w2 = &dummy;
  EXPECT_EQ(SqueezeExcite(p, &dummy, &dummy, nullptr), cudaErrorInvalidValue);
  p.w2_row = 4;
  p.channels = 20000;  // (C + R) floats past 48 KiB of shared memory
  EXPECT_EQ(SqueezeExcite(p, &dummy, &dummy, nullptr), cudaErrorInvalidValue);
  p.channels = 8000;  // fits without a map; 2C + R floats with one do not
  p.scale_map = &dummy;
  p.map_pixels = 49;
  EXPECT_EQ(SqueezeExcite(p, &dummy, &dummy, nullptr), cudaErrorInvalidValue);
  p.channels = 16;
  p.map_pixels = 0;  // a map without pixels
  EXPECT_EQ(SqueezeExcite(p, &dummy, &dummy, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace kernels::cuda
