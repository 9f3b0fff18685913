// Tests of the own 1x1-conv kernel (kernels/cuda/pointwise_conv.h): the support rules (host only),
// then every output element of EfficientNet- and MobileNet-shaped layers, each activation and storage
// type, against a double-precision CPU reference computed on the very inputs the GPU sees (16-bit
// inputs rounded first): float16 within 2e-3 and bfloat16 within 1.6e-2 relative (their output
// rounding plus float accumulation), float32 computed in TF32 within TF32's rounding bound (2^-10 of
// the sum of |x * w|). The GPU tests skip without a GPU.
#include "kernels/cuda/pointwise_conv.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/kernel_testing.h"

namespace kernels::cuda {
namespace {

using Activation = PointwiseConvParams::Activation;

PointwiseConvParams Params(int64_t pixels, int cin, int cout, Activation act = PointwiseConvParams::kNone,
                           FloatType type = FloatType::kFloat32) {
  PointwiseConvParams p;
  p.pixels = pixels, p.cin = cin, p.cout = cout, p.activation = act, p.type = type;
  return p;
}

// Float32 computed in TF32 (what a tf32 plan allows).
PointwiseConvParams Tf32(int64_t pixels, int cin, int cout, Activation act = PointwiseConvParams::kNone) {
  PointwiseConvParams p = Params(pixels, cin, cout, act, FloatType::kFloat32);
  p.allow_tf32 = true;
  return p;
}

TEST(PointwiseConvSupportTest, AcceptsExpandConvShapes) {
  const FloatType half = FloatType::kFloat16;
  EXPECT_TRUE(PointwiseConvSupported(Params(256 * 112 * 112, 16, 96, PointwiseConvParams::kSilu, half)));
  EXPECT_TRUE(PointwiseConvSupported(Params(1, 8, 16, PointwiseConvParams::kNone, half)));
  EXPECT_TRUE(PointwiseConvSupported(Params(3136, 64, 160, PointwiseConvParams::kRelu6, FloatType::kBFloat16)));
  EXPECT_TRUE(PointwiseConvSupported(Params(3136, 64, 384, PointwiseConvParams::kRelu6, half)));
  EXPECT_TRUE(PointwiseConvSupported(Tf32(256 * 112 * 112, 16, 96)));
  EXPECT_TRUE(PointwiseConvSupported(Tf32(784, 40, 240)));
}

TEST(PointwiseConvSupportTest, RejectsOtherShapesWithAReason) {
  const char* reason = nullptr;
  EXPECT_FALSE(PointwiseConvSupported(Params(10, 16, 96), &reason));
  EXPECT_STREQ(reason, "strict float32 (the kernel computes float32 in TF32)");
  auto Half = [](int64_t pixels, int cin, int cout) {
    return Params(pixels, cin, cout, PointwiseConvParams::kNone, FloatType::kFloat16);
  };
  EXPECT_FALSE(PointwiseConvSupported(Half(0, 16, 96), &reason));
  EXPECT_STREQ(reason, "no pixels");
  EXPECT_FALSE(PointwiseConvSupported(Half(10, 12, 96), &reason));
  EXPECT_STREQ(reason, "input channels not a multiple of 8 from 8 to 64");
  EXPECT_FALSE(PointwiseConvSupported(Half(10, 72, 96), &reason));
  EXPECT_STREQ(reason, "input channels not a multiple of 8 from 8 to 64");
  EXPECT_FALSE(PointwiseConvSupported(Half(10, 16, 100), &reason));
  EXPECT_STREQ(reason, "output channels not a positive multiple of 16");
  EXPECT_FALSE(PointwiseConvSupported(Tf32(10, 64, 384), &reason));
  EXPECT_STREQ(reason, "weights over the kernel's shared memory");
}

// ---------------------------------------------------------------------------------------------------------
// GPU: every element against the double-precision reference.

using PointwiseConvGpuTest = testing::GpuTest;
using testing::Decode;
using testing::Encode;

size_t ElementBytes(FloatType type) { return testing::StorageBytes(type); }

// Values rounded to `type` (what the GPU will read).
std::vector<float> RoundTo(FloatType type, std::vector<float> v) {
  for (float& x : v) x = testing::RoundTo(type, x);
  return v;
}

double Reference(Activation act, double v) {
  switch (act) {
    case PointwiseConvParams::kNone: return v;
    case PointwiseConvParams::kRelu: return std::max(v, 0.0);
    case PointwiseConvParams::kRelu6: return std::min(std::max(v, 0.0), 6.0);
    case PointwiseConvParams::kSilu: return v / (1.0 + std::exp(-v));
  }
  return v;
}

void* ToDevice(const std::vector<uint8_t>& bytes) {
  void* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, std::max<size_t>(bytes.size(), 16)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

// Runs p on random inputs (with or without a bias) and checks every output element.
void ExpectMatchesReference(const PointwiseConvParams& p, bool with_bias) {
  std::mt19937 rng(static_cast<unsigned>(p.pixels * 131 + p.cin * 17 + p.cout));
  std::normal_distribution<float> normal(0.f, 1.f);
  auto random = [&](size_t n, float scale) {
    std::vector<float> v(n);
    for (float& x : v) x = normal(rng) * scale;
    return RoundTo(p.type, v);
  };
  const std::vector<float> x = random(p.pixels * p.cin, 1.f);
  const std::vector<float> w = random(static_cast<size_t>(p.cout) * p.cin, 1.f / std::sqrt(p.cin));
  const std::vector<float> bias = random(p.cout, 0.5f);
  void* dx = ToDevice(Encode(p.type, x));
  void* dw = ToDevice(Encode(p.type, w));
  void* db = with_bias ? ToDevice(Encode(p.type, bias)) : nullptr;
  void* dy = nullptr;
  const size_t y_bytes = p.pixels * p.cout * ElementBytes(p.type);
  ASSERT_EQ(cudaMalloc(&dy, y_bytes), cudaSuccess);
  ASSERT_EQ(PointwiseConvNhwc(p, dx, dw, db, dy, nullptr), cudaSuccess);
  std::vector<uint8_t> y(y_bytes);
  ASSERT_EQ(cudaMemcpy(y.data(), dy, y_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  const double tolerance = p.type == FloatType::kFloat16 ? 2e-3 : 1.6e-2;
  int64_t bad = 0;
  for (int64_t px = 0; px < p.pixels; ++px) {
    for (int co = 0; co < p.cout; ++co) {
      double sum = with_bias ? bias[co] : 0.0, magnitude = 0.0;
      for (int ci = 0; ci < p.cin; ++ci) {
        const double product = static_cast<double>(x[px * p.cin + ci]) * w[co * p.cin + ci];
        sum += product;
        magnitude += std::fabs(product);
      }
      const double want = Reference(p.activation, sum);
      const double got = Decode(p.type, &y[(px * p.cout + co) * ElementBytes(p.type)]);
      // TF32 rounds each operand to 11 significant bits (2^-11 relative), so a product is off by at
      // most 2^-10 of itself; the activations change a difference by at most 1.1x.
      const double limit = p.type == FloatType::kFloat32
                               ? 1.1 * std::ldexp(magnitude, -10) + 1e-5 * (1 + std::fabs(want))
                               : tolerance * std::max(1.0, std::fabs(want));
      if (std::fabs(got - want) > limit && ++bad <= 5) {
        ADD_FAILURE() << "pixel " << px << " channel " << co << ": got " << got << ", want " << want;
      }
    }
  }
  EXPECT_EQ(bad, 0) << "cin " << p.cin << " cout " << p.cout << " act " << p.activation;
  for (void* d : {dx, dw, db, dy}) cudaFree(d);
}

TEST_F(PointwiseConvGpuTest, EveryActivationAndTypeMatchesReference) {
  for (FloatType type : {FloatType::kFloat16, FloatType::kBFloat16, FloatType::kFloat32}) {
    for (Activation act : {PointwiseConvParams::kNone, PointwiseConvParams::kRelu, PointwiseConvParams::kRelu6,
                           PointwiseConvParams::kSilu}) {
      PointwiseConvParams p = Params(1000, 16, 96, act, type);
      p.allow_tf32 = true;  // float32 only
      ExpectMatchesReference(p, /*with_bias=*/true);
    }
  }
}

TEST_F(PointwiseConvGpuTest, EveryInputChannelCountMatchesReference) {
  for (int cin = 8; cin <= 64; cin += 8) {
    ExpectMatchesReference(Params(333, cin, 48, PointwiseConvParams::kSilu, FloatType::kFloat16), cin % 16 == 0);
    ExpectMatchesReference(Tf32(333, cin, 48, PointwiseConvParams::kSilu), cin % 16 != 0);
  }
}

TEST_F(PointwiseConvGpuTest, ExpandConvShapesMatchReference) {
  ExpectMatchesReference(Params(777, 24, 144, PointwiseConvParams::kSilu, FloatType::kFloat16), true);
  ExpectMatchesReference(Params(513, 40, 240, PointwiseConvParams::kSilu, FloatType::kFloat16), true);
  ExpectMatchesReference(Params(401, 32, 192, PointwiseConvParams::kRelu6, FloatType::kBFloat16), true);
  // Over the default 48 KiB of shared memory: the kernel's opt-in.
  ExpectMatchesReference(Params(299, 64, 384, PointwiseConvParams::kRelu6, FloatType::kFloat16), true);
  ExpectMatchesReference(Tf32(513, 40, 240, PointwiseConvParams::kSilu), true);
  ExpectMatchesReference(Tf32(777, 24, 144, PointwiseConvParams::kSilu), true);
  ExpectMatchesReference(Tf32(401, 32, 192, PointwiseConvParams::kRelu6), false);
}

// A stem conv (window over 16-byte input pixels) on random inputs: every output element against the
// double-precision conv of the same (rounded) values, outside-the-image taps as 0.
void ExpectWindowMatchesReference(FloatType type, int cin, int n, int in_h, int in_w, int cout, int kernel, int stride,
                                  int pad, Activation act, bool tf32 = true) {
  PointwiseConvParams p = Params(0, cin, cout, act, type);
  p.allow_tf32 = tf32;
  ConvWindow& win = p.window;
  win.kernel_h = win.kernel_w = kernel, win.stride_h = win.stride_w = stride, win.pad_top = win.pad_left = pad;
  win.in_h = in_h, win.in_w = in_w;
  win.out_h = (in_h + 2 * pad - kernel) / stride + 1, win.out_w = (in_w + 2 * pad - kernel) / stride + 1;
  p.pixels = int64_t{n} * win.out_h * win.out_w;
  ASSERT_TRUE(PointwiseConvSupported(p));
  const int taps = kernel * kernel;
  std::mt19937 rng(static_cast<unsigned>(n * 7 + in_h * 131 + cout));
  std::normal_distribution<float> normal(0.f, 1.f);
  auto random = [&](size_t count, float scale) {
    std::vector<float> v(count);
    for (float& x : v) x = normal(rng) * scale;
    return RoundTo(type, v);
  };
  const std::vector<float> x = random(static_cast<size_t>(n) * in_h * in_w * cin, 1.f);
  const std::vector<float> w = random(static_cast<size_t>(cout) * cin * taps, 1.f / std::sqrt(cin * taps));
  const std::vector<float> bias = random(cout, 0.5f);
  void* dx = ToDevice(Encode(type, x));
  void* dw = ToDevice(Encode(type, w));
  void* db = ToDevice(Encode(type, bias));
  void* dy = nullptr;
  const size_t y_bytes = p.pixels * cout * ElementBytes(type);
  ASSERT_EQ(cudaMalloc(&dy, y_bytes), cudaSuccess);
  ASSERT_EQ(PointwiseConvNhwc(p, dx, dw, db, dy, nullptr), cudaSuccess);
  std::vector<uint8_t> y(y_bytes);
  ASSERT_EQ(cudaMemcpy(y.data(), dy, y_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  int64_t bad = 0;
  for (int64_t px = 0; px < p.pixels; ++px) {
    const int ow = static_cast<int>(px % win.out_w), oh = static_cast<int>(px / win.out_w % win.out_h);
    const int64_t image = px / (int64_t{win.out_w} * win.out_h);
    for (int co = 0; co < cout; ++co) {
      double sum = bias[co], magnitude = 0.0;
      for (int r = 0; r < kernel; ++r) {
        for (int c = 0; c < kernel; ++c) {
          const int ih = oh * stride - pad + r, iw = ow * stride - pad + c;
          if (ih < 0 || ih >= in_h || iw < 0 || iw >= in_w) continue;
          for (int ci = 0; ci < cin; ++ci) {
            const double product = static_cast<double>(x[((image * in_h + ih) * in_w + iw) * cin + ci]) *
                                   w[((co * cin + ci) * kernel + r) * kernel + c];
            sum += product;
            magnitude += std::fabs(product);
          }
        }
      }
      const double want = Reference(act, sum);
      const double got = Decode(type, &y[(px * cout + co) * ElementBytes(type)]);
      // Strict float32 (3xTF32): each product within about 2^-21 of itself, plus float32 sums.
      const double limit = type != FloatType::kFloat32
                               ? (type == FloatType::kFloat16 ? 2e-3 : 1.6e-2) * std::max(1.0, std::fabs(want))
                           : tf32 ? 1.1 * std::ldexp(magnitude, -10) + 1e-5 * (1 + std::fabs(want))
                                  : 1.1 * std::ldexp(magnitude, -18) + 1e-6 * (1 + std::fabs(want));
      if (std::fabs(got - want) > limit && ++bad <= 5) {
        ADD_FAILURE() << "pixel " << px << " channel " << co << ": got " << got << ", want " << want;
      }
    }
  }
  EXPECT_EQ(bad, 0) << kernel << "x" << kernel << " stride " << stride << " pad " << pad;
  for (void* d : {dx, dw, db, dy}) cudaFree(d);
}

TEST_F(PointwiseConvGpuTest, StemWindowsMatchReference) {
  // EfficientNet's / MobileNetV2's stem (3x3 stride 2 pad 1 on 4 padded fp16 channels: 8-byte pixels,
  // 32 out, SiLU / ReLU6) on an odd-sized image, 16-byte pixels (8 channels), a stride-1 window, and
  // the tf32 stem (4 float32 channels).
  ExpectWindowMatchesReference(FloatType::kFloat16, 4, 3, 37, 29, 32, 3, 2, 1, PointwiseConvParams::kSilu);
  ExpectWindowMatchesReference(FloatType::kBFloat16, 4, 2, 16, 16, 32, 3, 2, 1, PointwiseConvParams::kRelu6);
  ExpectWindowMatchesReference(FloatType::kFloat16, 8, 3, 37, 29, 32, 3, 2, 1, PointwiseConvParams::kSilu);
  ExpectWindowMatchesReference(FloatType::kFloat16, 8, 2, 9, 11, 48, 3, 1, 0, PointwiseConvParams::kNone);
  ExpectWindowMatchesReference(FloatType::kFloat32, 4, 3, 37, 29, 32, 3, 2, 1, PointwiseConvParams::kSilu);
  ExpectWindowMatchesReference(FloatType::kFloat32, 4, 1, 20, 20, 16, 4, 2, 1, PointwiseConvParams::kRelu);  // K 64
}

// The float32 stem without TF32 (3xTF32), held to float32's accuracy rather than TF32's.
TEST_F(PointwiseConvGpuTest, StrictFloat32StemMatchesReference) {
  ExpectWindowMatchesReference(FloatType::kFloat32, 4, 3, 37, 29, 32, 3, 2, 1, PointwiseConvParams::kSilu, false);
  ExpectWindowMatchesReference(FloatType::kFloat32, 4, 2, 20, 20, 16, 3, 2, 1, PointwiseConvParams::kRelu6, false);
}

TEST(PointwiseConvSupportTest, WindowsNeedEightOrSixteenBytePixelsAndSmallK) {
  PointwiseConvParams p = Params(2 * 8 * 8, 8, 32, PointwiseConvParams::kSilu, FloatType::kFloat16);
  p.window.kernel_h = p.window.kernel_w = 3, p.window.stride_h = p.window.stride_w = 2;
  p.window.pad_top = p.window.pad_left = 1, p.window.in_h = p.window.in_w = 16, p.window.out_h = p.window.out_w = 8;
  EXPECT_TRUE(PointwiseConvSupported(p));
  const char* reason = nullptr;
  PointwiseConvParams wide = p;
  wide.cin = 16;
  EXPECT_FALSE(PointwiseConvSupported(wide, &reason));
  EXPECT_STREQ(reason, "a window over input pixels of other than 8 or 16 bytes");
  PointwiseConvParams big = p;
  big.window.kernel_h = big.window.kernel_w = 7;  // resnet's stem: 392 values
  EXPECT_FALSE(PointwiseConvSupported(big, &reason));
  EXPECT_STREQ(reason, "a window of more than 80 values");
  PointwiseConvParams unsized = p;
  unsized.window.out_h = 0;
  EXPECT_FALSE(PointwiseConvSupported(unsized, &reason));
  EXPECT_STREQ(reason, "a window without its image sizes");
}

TEST_F(PointwiseConvGpuTest, ManyPixelsLoopOverTheGrid) {  // more pixels than the grid has threads
  ExpectMatchesReference(Params(700001, 8, 16, PointwiseConvParams::kRelu, FloatType::kFloat16), true);
}

TEST_F(PointwiseConvGpuTest, RefusesMisalignedOrUnsupportedCalls) {
  void* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4096), cudaSuccess);
  char* base = static_cast<char*>(d);
  const PointwiseConvParams p = Params(4, 16, 16, PointwiseConvParams::kNone, FloatType::kFloat16);
  EXPECT_EQ(PointwiseConvNhwc(p, base + 2, base + 1024, nullptr, base + 2048, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(PointwiseConvNhwc(Params(4, 16, 16), base, base + 1024, nullptr, base + 2048, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(PointwiseConvNhwc(p, base, base + 1024, nullptr, base + 2048, nullptr), cudaSuccess);
  cudaFree(d);
}

// EfficientNet-B0's expand convs at batch 256, fp16 and tf32 + SiLU, on zero-filled buffers: the kernel's
// time and bandwidth beside a cudaMemset of the output (the write ceiling). Prints, asserts only
// that the launches succeed (speed is the benchmarks' business).
TEST_F(PointwiseConvGpuTest, PrintsBandwidthOfExpandConvs) {
  struct Layer {
    int cin, cout, hw;
  };
  const Layer layers[] = {{16, 96, 112}, {24, 144, 56}, {40, 240, 28}, {32, 192, 56}};
  constexpr int kBatch = 256;
  size_t max_x = 0, max_y = 0;
  for (const Layer& l : layers) {
    max_x = std::max(max_x, size_t{kBatch} * l.hw * l.hw * l.cin * 4);
    max_y = std::max(max_y, size_t{kBatch} * l.hw * l.hw * l.cout * 4);
  }
  void *x = nullptr, *y = nullptr, *w = nullptr;
  ASSERT_EQ(cudaMalloc(&x, max_x), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&y, max_y), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&w, 64 * 2048 * 4), cudaSuccess);
  ASSERT_EQ(cudaMemset(x, 0, max_x), cudaSuccess);
  ASSERT_EQ(cudaMemset(w, 0, 64 * 2048 * 4), cudaSuccess);
  for (const Layer& l : layers) {
    for (FloatType type : {FloatType::kFloat16, FloatType::kFloat32}) {
      const PointwiseConvParams p = Tf32(int64_t{kBatch} * l.hw * l.hw, l.cin, l.cout, PointwiseConvParams::kSilu);
      PointwiseConvParams typed = p;
      typed.type = type;
      ASSERT_EQ(PointwiseConvNhwc(typed, x, w, nullptr, y, nullptr), cudaSuccess);
      const double element = ElementBytes(type), x_bytes = element * p.pixels * p.cin,
                   y_bytes = element * p.pixels * p.cout;
      const float ms = testing::MeanLaunchMs([&] { PointwiseConvNhwc(typed, x, w, nullptr, y, nullptr); });
      const float memset_ms = testing::MeanLaunchMs([&] { cudaMemsetAsync(y, 1, static_cast<size_t>(y_bytes)); });
      std::printf("1x1 conv %d->%d at %dx%d, batch %d, %s SiLU: %.4f ms, %.0f GB/s (memset of y: %.4f ms, %.0f GB/s)\n",
                  l.cin, l.cout, l.hw, l.hw, kBatch, type == FloatType::kFloat16 ? "fp16" : "tf32", ms,
                  (x_bytes + y_bytes) / (ms * 1e-3) / 1e9, memset_ms, y_bytes / (memset_ms * 1e-3) / 1e9);
    }
  }
  for (void* d : {x, y, w}) cudaFree(d);
}

}  // namespace
}  // namespace kernels::cuda
