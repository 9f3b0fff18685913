// Tests of the own depthwise convolution kernel (kernels/cuda/depthwise_conv.h): the support rules (host
// only), then every output element of many shapes against a double-precision CPU reference computed on
// the very inputs the GPU sees (float16 inputs rounded first), float32 within 1e-5 and float16 within
// 2e-3 relative, and a bandwidth printout of MobileNetV2's depthwise layers (no assertion). The GPU tests
// skip when no GPU is usable.
#include "kernels/cuda/depthwise_conv.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/half.h"
#include "kernels/cuda/kernel_testing.h"

namespace kernels::cuda {
namespace {

using Activation = DepthwiseConvParams::Activation;

struct Shape {
  int n, c, h, w, r, s;
  int pad_top, pad_left, pad_bottom, pad_right;
  int stride_h, stride_w;
  int dilation_h = 1, dilation_w = 1;
};

DepthwiseConvParams MakeParams(const Shape& s, Activation activation, bool fp16) {
  DepthwiseConvParams p;
  p.n = s.n, p.c = s.c, p.h = s.h, p.w = s.w, p.r = s.r, p.s = s.s;
  p.pad_top = s.pad_top, p.pad_left = s.pad_left, p.pad_bottom = s.pad_bottom, p.pad_right = s.pad_right;
  p.stride_h = s.stride_h, p.stride_w = s.stride_w, p.dilation_h = s.dilation_h, p.dilation_w = s.dilation_w;
  p.out_h = (s.h + s.pad_top + s.pad_bottom - ((s.r - 1) * s.dilation_h + 1)) / s.stride_h + 1;
  p.out_w = (s.w + s.pad_left + s.pad_right - ((s.s - 1) * s.dilation_w + 1)) / s.stride_w + 1;
  p.activation = activation;
  p.fp16 = fp16;
  return p;
}

std::string Describe(const DepthwiseConvParams& p) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "n%d c%d %dx%d filter %dx%d pads t%d l%d b%d r%d stride %d,%d dilation %d,%d -> %dx%d act %d %s", p.n,
                p.c, p.h, p.w, p.r, p.s, p.pad_top, p.pad_left, p.pad_bottom, p.pad_right, p.stride_h, p.stride_w,
                p.dilation_h, p.dilation_w, p.out_h, p.out_w, static_cast<int>(p.activation), p.fp16 ? "fp16" : "fp32");
  return text;
}

// ---------------------------------------------------------------------------------------------------------
// Support rules: host only, no GPU needed.

Shape Mobile3x3() { return Shape{2, 32, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1}; }

TEST(DepthwiseConvSupportTest, AcceptsValidShapesOfEveryPath) {
  EXPECT_TRUE(DepthwiseConvSupported(MakeParams(Mobile3x3(), DepthwiseConvParams::kNone, true)));
  EXPECT_TRUE(DepthwiseConvSupported(MakeParams(Shape{1, 5, 9, 9, 3, 3, 2, 2, 2, 2, 1, 1, 2, 2}, {}, false)));
  EXPECT_TRUE(DepthwiseConvSupported(MakeParams(Shape{1, 5, 9, 9, 2, 4, 0, 1, 1, 2, 3, 1}, {}, false)));
  EXPECT_TRUE(DepthwiseConvSupported(MakeParams(Shape{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1}, {}, true)));
}

TEST(DepthwiseConvSupportTest, RejectsInvalidShapesWithAReason) {
  const auto rejected = [](const DepthwiseConvParams& p) {
    const char* reason = nullptr;
    const bool supported = DepthwiseConvSupported(p, &reason);
    EXPECT_FALSE(supported) << Describe(p);
    EXPECT_NE(reason, nullptr) << Describe(p);
    int dummy = 0;
    EXPECT_EQ(DepthwiseConvNhwc(p, &dummy, &dummy, nullptr, &dummy, nullptr), cudaErrorInvalidValue) << Describe(p);
  };
  DepthwiseConvParams p = MakeParams(Mobile3x3(), DepthwiseConvParams::kNone, true);
  p.out_h += 1;
  rejected(p);
  p = MakeParams(Mobile3x3(), DepthwiseConvParams::kNone, true);
  p.out_w -= 1;
  rejected(p);
  p = MakeParams(Mobile3x3(), DepthwiseConvParams::kNone, true);
  p.c = 0;
  rejected(p);
  p = MakeParams(Mobile3x3(), DepthwiseConvParams::kNone, true);
  p.stride_w = 0;
  rejected(p);
  p = MakeParams(Mobile3x3(), DepthwiseConvParams::kNone, true);
  p.dilation_h = 0;
  rejected(p);
  p = MakeParams(Mobile3x3(), DepthwiseConvParams::kNone, true);
  p.pad_left = -1;
  rejected(p);
  // A filter larger than the padded input.
  rejected(MakeParams(Shape{1, 4, 2, 2, 5, 5, 1, 1, 1, 1, 1, 1}, {}, true));
  // An image of 2^31 elements.
  rejected(MakeParams(Shape{1, 1 << 15, 256, 256, 1, 1, 0, 0, 0, 0, 1, 1}, {}, true));
  // 2^24 channels.
  rejected(MakeParams(Shape{1, 1 << 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1}, {}, true));
}

TEST(DepthwiseConvSupportTest, RejectsNullTensors) {
  const DepthwiseConvParams p = MakeParams(Mobile3x3(), DepthwiseConvParams::kNone, true);
  int dummy = 0;
  EXPECT_EQ(DepthwiseConvNhwc(p, nullptr, &dummy, nullptr, &dummy, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(DepthwiseConvNhwc(p, &dummy, nullptr, nullptr, &dummy, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(DepthwiseConvNhwc(p, &dummy, &dummy, nullptr, nullptr, nullptr), cudaErrorInvalidValue);
}

// ---------------------------------------------------------------------------------------------------------
// GPU tests.

using testing::DeviceBuffer;

class DepthwiseConvGpuTest : public testing::GpuTest {};

float RoundToHalf(float v) { return ir::HalfBitsToFloat(ir::FloatToHalfBits(v)); }

// Uniform in [lo, hi), rounded to float16 when `fp16`, so the reference sees what the GPU sees.
std::vector<float> Random(size_t count, bool fp16, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = fp16 ? RoundToHalf(dist(rng)) : dist(rng);
  return v;
}

// The values as stored on the device (float32 or float16 bits).
std::vector<char> Encode(const std::vector<float>& v, bool fp16) {
  std::vector<char> bytes(v.size() * (fp16 ? 2 : 4));
  for (size_t i = 0; i < v.size(); ++i) {
    if (fp16) {
      const uint16_t bits = ir::FloatToHalfBits(v[i]);
      std::memcpy(bytes.data() + 2 * i, &bits, 2);
    } else {
      std::memcpy(bytes.data() + 4 * i, &v[i], 4);
    }
  }
  return bytes;
}

float Decode(const char* bytes, size_t i, bool fp16) {
  if (fp16) {
    uint16_t bits;
    std::memcpy(&bits, bytes + 2 * i, 2);
    return ir::HalfBitsToFloat(bits);
  }
  float v;
  std::memcpy(&v, bytes + 4 * i, 4);
  return v;
}

double Activate(Activation act, double v) {
  switch (act) {
    case DepthwiseConvParams::kNone: return v;
    case DepthwiseConvParams::kRelu: return std::max(v, 0.0);
    case DepthwiseConvParams::kRelu6: return std::min(std::max(v, 0.0), 6.0);
    case DepthwiseConvParams::kSilu: return v / (1.0 + std::exp(-v));
  }
  return v;
}

// The definition, in double: y and, per output, the sum of the magnitudes of its terms (|bias| included),
// which bounds the float accumulation's rounding error.
void Reference(const DepthwiseConvParams& p, const std::vector<float>& x, const std::vector<float>& w,
               const std::vector<float>& bias, std::vector<double>* y, std::vector<double>* magnitude) {
  y->assign(static_cast<size_t>(p.n) * p.out_h * p.out_w * p.c, 0.0);
  magnitude->assign(y->size(), 0.0);
  size_t out = 0;
  for (int n = 0; n < p.n; ++n)
    for (int oh = 0; oh < p.out_h; ++oh)
      for (int ow = 0; ow < p.out_w; ++ow)
        for (int c = 0; c < p.c; ++c, ++out) {
          double sum = bias.empty() ? 0.0 : bias[c], mag = std::fabs(sum);
          for (int r = 0; r < p.r; ++r) {
            const int ih = oh * p.stride_h - p.pad_top + r * p.dilation_h;
            if (ih < 0 || ih >= p.h) continue;
            for (int s = 0; s < p.s; ++s) {
              const int iw = ow * p.stride_w - p.pad_left + s * p.dilation_w;
              if (iw < 0 || iw >= p.w) continue;
              const double term = static_cast<double>(x[((static_cast<size_t>(n) * p.h + ih) * p.w + iw) * p.c + c]) *
                                  w[(static_cast<size_t>(c) * p.r + r) * p.s + s];
              sum += term;
              mag += std::fabs(term);
            }
          }
          (*y)[out] = Activate(p.activation, sum);
          (*magnitude)[out] = mag;
        }
}

// Where the kernel can sum channels: runs p again on the same device inputs with channel_sums and
// checks that y is bit-identical to `y_bytes` (the run without sums) and that every sums[n, c] is
// the sum over the output pixels of those stored outputs (float atomics: within 1e-5 of the sum of
// magnitudes, plus 2^-20 absolute). Elsewhere, asking for sums is refused.
void CheckChannelSums(const DepthwiseConvParams& p, const char* x, const char* w, const char* bias,
                      const std::vector<char>& y_bytes, size_t y_offset_bytes) {
  const size_t count = static_cast<size_t>(p.n) * p.c;
  DeviceBuffer y_buffer(y_offset_bytes + y_bytes.size()), sums(count * sizeof(float));
  char* y = y_buffer.get() + y_offset_bytes;  // as misaligned as the run without sums
  ASSERT_NE(y_buffer.get(), nullptr);
  ASSERT_NE(sums.get(), nullptr);
  float* sums_ptr = reinterpret_cast<float*>(sums.get());
  if (!DepthwiseConvSumsChannels(p)) {
    EXPECT_EQ(DepthwiseConvNhwc(p, x, w, bias, y, nullptr, sums_ptr), cudaErrorInvalidValue);
    return;
  }
  ASSERT_EQ(cudaMemset(sums.get(), 0, count * sizeof(float)), cudaSuccess);
  ASSERT_EQ(DepthwiseConvNhwc(p, x, w, bias, y, nullptr, sums_ptr), cudaSuccess);
  std::vector<char> got_y(y_bytes.size());
  std::vector<float> got_sums(count);
  ASSERT_EQ(cudaMemcpy(got_y.data(), y, got_y.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(got_sums.data(), sums.get(), count * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(got_y, y_bytes) << "y differs when the kernel also sums its channels";
  std::vector<double> want(count, 0.0), magnitude(count, 0.0);
  const size_t pixels = static_cast<size_t>(p.out_h) * p.out_w;
  for (size_t i = 0; i < count * pixels; ++i) {
    const size_t nc = i / (pixels * p.c) * p.c + i % p.c;
    const double v = Decode(y_bytes.data(), i, p.fp16);
    want[nc] += v;
    magnitude[nc] += std::fabs(v);
  }
  int bad = 0;
  for (size_t i = 0; i < count && bad < 10; ++i) {
    if (!(std::fabs(got_sums[i] - want[i]) <= 1e-5 * magnitude[i] + 0x1p-20)) {
      ADD_FAILURE() << "sums[" << i / p.c << ", " << i % p.c << "] = " << got_sums[i] << ", want " << want[i];
      ++bad;
    }
  }
}

// Runs p on seeded inputs and checks every output element against Reference, and that nothing past y
// was written; then the channel sums (CheckChannelSums). `offset` elements shift x and y from their allocations'
// (256-byte aligned) start, which takes the narrower vector widths.
void CheckAgainstReference(const DepthwiseConvParams& p, bool with_bias, uint32_t seed, int offset = 0) {
  SCOPED_TRACE(Describe(p) + (with_bias ? " bias" : " no bias") + " offset " + std::to_string(offset));
  ASSERT_TRUE(DepthwiseConvSupported(p));
  const size_t element = p.fp16 ? 2 : 4;
  const size_t x_count = static_cast<size_t>(p.n) * p.h * p.w * p.c;
  const size_t y_count = static_cast<size_t>(p.n) * p.out_h * p.out_w * p.c;
  constexpr size_t kGuard = 64;  // elements after y that must stay untouched
  const std::vector<float> x = Random(x_count, p.fp16, seed, -3.f, 3.f);
  const std::vector<float> w = Random(static_cast<size_t>(p.c) * p.r * p.s, p.fp16, seed + 1, -1.f, 1.f);
  const std::vector<float> bias = with_bias ? Random(p.c, p.fp16, seed + 2, -1.f, 1.f) : std::vector<float>();

  DeviceBuffer dx((x_count + offset) * element), dw(w.size() * element + 1), db(p.c * element);
  DeviceBuffer dy((y_count + offset + kGuard) * element);
  ASSERT_NE(dx.get(), nullptr);
  ASSERT_NE(dy.get(), nullptr);
  const std::vector<char> xb = Encode(x, p.fp16), wb = Encode(w, p.fp16), bb = Encode(bias, p.fp16);
  ASSERT_EQ(cudaMemcpy(dx.get() + offset * element, xb.data(), xb.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dw.get(), wb.data(), wb.size(), cudaMemcpyHostToDevice), cudaSuccess);
  if (with_bias) {
    ASSERT_EQ(cudaMemcpy(db.get(), bb.data(), bb.size(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  // 0xff bytes: NaN in both types, so an output the kernel skips fails the comparison.
  const size_t y_bytes = (y_count + offset + kGuard) * element;
  ASSERT_EQ(cudaMemset(dy.get(), 0xff, y_bytes), cudaSuccess);

  ASSERT_EQ(DepthwiseConvNhwc(p, dx.get() + offset * element, dw.get(), with_bias ? db.get() : nullptr,
                              dy.get() + offset * element, nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<char> yb(y_bytes);
  ASSERT_EQ(cudaMemcpy(yb.data(), dy.get(), y_bytes, cudaMemcpyDeviceToHost), cudaSuccess);

  std::vector<double> want, magnitude;
  Reference(p, x, w, bias, &want, &magnitude);
  // float16: the output's rounding (2^-11 relative; absolute steps of 2^-24 below 2^-14) dominates;
  // float32: the accumulation's. The magnitude term allows the float accumulation's rounding where
  // terms cancel.
  const double rel = p.fp16 ? 2e-3 : 1e-5, abs = 1e-6, floor = p.fp16 ? 0x1p-24 : 0.0;
  int bad = 0;
  for (size_t i = 0; i < y_count && bad < 10; ++i) {
    const double got = Decode(yb.data() + offset * element, i, p.fp16);
    const double tolerance = rel * std::fabs(want[i]) + abs * magnitude[i] + floor;
    if (!(std::fabs(got - want[i]) <= tolerance)) {
      ADD_FAILURE() << "y[" << i << "] (n,h,w,c = " << i / p.c / p.out_w / p.out_h << "," << i / p.c / p.out_w % p.out_h
                    << "," << i / p.c % p.out_w << "," << i % p.c << ") = " << got << ", want " << want[i] << " within "
                    << tolerance;
      ++bad;
    }
  }
  for (size_t i = 0; i < kGuard; ++i) {
    uint8_t all_ones = 0xff;
    for (size_t b = 0; b < element; ++b) all_ones &= yb[(offset + y_count + i) * element + b];
    ASSERT_EQ(all_ones, 0xff) << "wrote past y at element " << i;
  }
  for (int i = 0; i < offset; ++i) {
    for (size_t b = 0; b < element; ++b) ASSERT_EQ(static_cast<uint8_t>(yb[i * element + b]), 0xff) << "wrote before y";
  }
  const std::vector<char> y_only(yb.begin() + offset * element, yb.begin() + (offset + y_count) * element);
  CheckChannelSums(p, dx.get() + offset * element, dw.get(), with_bias ? db.get() : nullptr, y_only, offset * element);
}

constexpr Activation kActivations[] = {DepthwiseConvParams::kNone, DepthwiseConvParams::kRelu,
                                       DepthwiseConvParams::kRelu6, DepthwiseConvParams::kSilu};
constexpr int kChannels[] = {1, 3, 6, 8, 17, 144};

// Every shape with every channel count, in float32 and float16; the activation and the bias rotate so
// that each shape sees all four activations and both bias cases.
// `rows_per_thread` > 0 makes the tiled kernel's threads compute strips of that many output rows;
// `kernel` picks the 5x5 / 7x7 kernel.
void CheckShapes(const std::vector<Shape>& shapes, int rows_per_thread = 0,
                 DepthwiseConvParams::Kernel kernel = DepthwiseConvParams::kRegisterTiles) {
  uint32_t seed = 1;
  for (const Shape& base : shapes) {
    for (int ci = 0; ci < static_cast<int>(std::size(kChannels)); ++ci) {
      Shape shape = base;
      shape.c = kChannels[ci];
      for (const bool fp16 : {false, true}) {
        const Activation act = kActivations[(ci + (fp16 ? 2 : 0)) % 4];
        DepthwiseConvParams p = MakeParams(shape, act, fp16);
        p.rows_per_thread = rows_per_thread;
        p.kernel = kernel;
        CheckAgainstReference(p, (ci + fp16) % 2 == 0, seed += 3);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Shape{n, c (replaced), h, w, r, s, pad top, left, bottom, right, stride h, w [, dilation h, w]}.
TEST_F(DepthwiseConvGpuTest, Filter3x3MatchesReference) {
  CheckShapes({
      {1, 0, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1},       // stride 1, pad 1
      {3, 0, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1},         // odd sizes, out_w not a multiple of 4
      {1, 0, 5, 2, 3, 3, 1, 1, 1, 1, 1, 1},         // narrower than a tile
      {1, 0, 3, 3, 3, 3, 0, 0, 0, 0, 1, 1},         // no padding, 1x1 output
      {3, 0, 14, 14, 3, 3, 1, 1, 1, 1, 2, 2},       // stride 2, even sizes
      {1, 0, 15, 13, 3, 3, 1, 1, 1, 1, 2, 2},       // stride 2, odd sizes
      {3, 0, 14, 14, 3, 3, 0, 0, 1, 1, 2, 2},       // stride 2, TF-style SAME (pads after only)
      {1, 0, 9, 11, 3, 3, 2, 0, 1, 3, 1, 1},        // asymmetric pads
      {1, 0, 10, 17, 3, 3, 1, 1, 1, 1, 2, 1},       // stride 2 in H only
      {3, 0, 11, 10, 3, 3, 1, 1, 1, 1, 1, 2},       // stride 2 in W only
      {1, 0, 12, 9, 3, 3, 2, 1, 2, 1, 1, 1, 2, 1},  // dilation 2 in H only (tiled kernel)
  });
}

std::vector<Shape> Filter5x5And7x7Shapes() {
  return {
      {1, 0, 11, 13, 5, 5, 2, 2, 2, 2, 1, 1},  // 5x5 stride 1
      {3, 0, 14, 15, 5, 5, 2, 2, 2, 2, 2, 2},  // 5x5 stride 2
      {1, 0, 6, 6, 5, 5, 1, 2, 3, 0, 1, 1},    // 5x5 asymmetric pads
      {3, 0, 9, 10, 7, 7, 3, 3, 3, 3, 1, 1},   // 7x7 stride 1 (ConvNeXt)
      {1, 0, 16, 13, 7, 7, 3, 3, 3, 3, 2, 2},  // 7x7 stride 2
  };
}

TEST_F(DepthwiseConvGpuTest, Filter5x5And7x7MatchReference) { CheckShapes(Filter5x5And7x7Shapes()); }

// The shared-memory tile kernel on the shapes above and on ones with several column tiles (more than
// 32 output columns at stride 1, 16 at stride 2) and row tiles (more output rows than one tile's
// input rows fit in shared memory), odd channel counts (one float16 per vector) and 3 chunks (144).
TEST_F(DepthwiseConvGpuTest, SharedTilesMatchReference) {
  std::vector<Shape> shapes = Filter5x5And7x7Shapes();
  shapes.insert(shapes.end(), {
                                  {2, 0, 5, 5, 5, 5, 0, 0, 0, 0, 1, 1},    // no padding, 1x1 output
                                  {2, 0, 40, 70, 5, 5, 2, 2, 2, 2, 1, 1},  // 3 column tiles, several row tiles
                                  {1, 0, 57, 75, 5, 5, 1, 2, 2, 1, 2, 2},  // stride 2, 3 column tiles, odd pads
                                  {1, 0, 30, 41, 7, 7, 3, 3, 3, 3, 1, 1},  // 7x7, 2 column tiles
                                  {2, 0, 28, 28, 5, 5, 0, 0, 4, 4, 2, 2},  // TF-style SAME: pads after only
                              });
  CheckShapes(shapes, 0, DepthwiseConvParams::kSharedTiles);
  // Worth timing only where the kernel takes the shape and has a tile per SM.
  const auto params = [](int n, int k, int stride, int dilation) {
    return MakeParams(Shape{n, 480, 14, 14, k, k, 2, 2, 2, 2, stride, stride, dilation, dilation},
                      DepthwiseConvParams::kNone, true);
  };
  EXPECT_TRUE(DepthwiseConvSharedTilesFit(params(32, 5, 1, 1)));
  EXPECT_FALSE(DepthwiseConvSharedTilesFit(params(1, 5, 1, 1)));   // 8 tiles
  EXPECT_FALSE(DepthwiseConvSharedTilesFit(params(32, 3, 1, 1)));  // 3x3: the register kernel
  EXPECT_FALSE(DepthwiseConvSharedTilesFit(params(32, 5, 1, 2)));  // dilation
  DepthwiseConvParams unequal = params(32, 5, 1, 1);
  unequal.stride_w = 2, unequal.out_w = 7;
  EXPECT_FALSE(DepthwiseConvSharedTilesFit(unequal));
}

// Strips of 2, 3 and 5 rows (not dividing out_h): for 5x5 and 7x7 filters the input rows shift
// through registers for stride_h 1 and 2; 3x3 filters and dilation in H load every row anew.
TEST_F(DepthwiseConvGpuTest, RowStripsMatchReference) {
  for (const int rows : {2, 3, 5}) {
    SCOPED_TRACE("rows per thread " + std::to_string(rows));
    CheckShapes(
        {
            {2, 0, 13, 9, 3, 3, 1, 1, 1, 1, 1, 1},        // 3x3 stride 1
            {2, 0, 15, 13, 3, 3, 1, 1, 1, 1, 2, 2},       // 3x3 stride 2, odd sizes
            {1, 0, 14, 14, 3, 3, 0, 0, 1, 1, 2, 2},       // 3x3 stride 2, pads after only
            {2, 0, 11, 13, 5, 5, 2, 2, 2, 2, 1, 1},       // 5x5 stride 1
            {1, 0, 14, 15, 5, 5, 2, 2, 2, 2, 2, 2},       // 5x5 stride 2
            {1, 0, 9, 10, 7, 7, 3, 3, 3, 3, 1, 1},        // 7x7 stride 1
            {1, 0, 16, 13, 7, 7, 3, 3, 3, 3, 2, 1},       // 7x7 stride 2 in H only
            {1, 0, 12, 9, 3, 3, 2, 1, 2, 1, 1, 1, 2, 1},  // dilation 2 in H: no shifting
        },
        rows);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST_F(DepthwiseConvGpuTest, GenericPathMatchesReference) {
  CheckShapes({
      {1, 0, 12, 13, 3, 3, 2, 2, 2, 2, 1, 1, 2, 2},  // dilation 2
      {3, 0, 15, 15, 3, 3, 1, 3, 2, 1, 2, 2, 1, 3},  // dilation 3 in W, asymmetric pads, stride 2
      {1, 0, 13, 11, 3, 3, 1, 1, 1, 1, 3, 3},        // stride 3
      {1, 0, 8, 9, 3, 5, 1, 2, 1, 2, 1, 1},          // non-square filter
      {3, 0, 7, 12, 1, 7, 0, 3, 0, 3, 1, 1},         // 1x7
      {1, 0, 9, 9, 9, 9, 4, 4, 4, 4, 1, 1},          // 9x9
      {1, 0, 6, 5, 1, 1, 0, 0, 0, 0, 1, 1},          // 1x1
  });
}

TEST_F(DepthwiseConvGpuTest, MisalignedTensorsTakeNarrowerVectors) {
  // C = 8 allows 4-wide vectors; x and y one or two elements past an aligned start do not.
  for (const bool fp16 : {false, true}) {
    for (const int offset : {1, 2}) {
      CheckAgainstReference(MakeParams(Shape{2, 8, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1}, DepthwiseConvParams::kRelu6, fp16),
                            true, 100 + offset, offset);
      CheckAgainstReference(MakeParams(Shape{1, 8, 9, 10, 5, 5, 2, 2, 2, 2, 2, 2}, DepthwiseConvParams::kNone, fp16),
                            false, 200 + offset, offset);
    }
  }
}

TEST_F(DepthwiseConvGpuTest, LargeBatchLoopsOverRows) {
  // More output rows than the GPU's resident threads take at once (a few channels and a narrow
  // image): every thread computes several rows.
  CheckAgainstReference(MakeParams(Shape{64, 4, 600, 64, 3, 3, 1, 1, 1, 1, 1, 1}, DepthwiseConvParams::kSilu, true),
                        true, 7);
  CheckAgainstReference(MakeParams(Shape{64, 2, 1200, 64, 3, 3, 1, 1, 1, 1, 2, 2}, DepthwiseConvParams::kRelu, false),
                        true, 8);
}

// Not a test of correctness: prints the bandwidth of MobileNetV2's (3x3) and EfficientNet-B0's 5x5
// depthwise layers at batch 256 (input read once + output written once, per time), and the time
// with channel sums (zeroing them included); for 5x5 the register-tiled and shared-tile kernels' times
// at batch 256, 32 and 1. To be read on the GPU machine.
TEST_F(DepthwiseConvGpuTest, PrintsBandwidthOfMobileNetV2AndEfficientNetLayers) {
  struct Layer {
    int c, h, stride, k;
  };
  const Layer layers[] = {{32, 112, 1, 3}, {96, 112, 2, 3}, {144, 56, 1, 3}, {144, 56, 2, 3},
                          {192, 28, 1, 3}, {192, 28, 2, 3}, {384, 14, 1, 3}, {576, 14, 1, 3},
                          {576, 14, 2, 3}, {960, 7, 1, 3},  {144, 56, 2, 5}, {240, 28, 1, 5},
                          {480, 14, 1, 5}, {672, 14, 1, 5}, {672, 14, 2, 5}, {1152, 7, 1, 5}};
  constexpr int kBatch = 256, kMaxWeights = 1152 * 25;
  size_t max_bytes = 0;
  for (const Layer& l : layers) max_bytes = std::max(max_bytes, size_t{kBatch} * l.h * l.h * l.c * 2);
  DeviceBuffer x(max_bytes), y(max_bytes), w(kMaxWeights * 2), b(1152 * 2), sums(kBatch * 1152 * sizeof(float));
  ASSERT_NE(x.get(), nullptr);
  ASSERT_NE(y.get(), nullptr);
  ASSERT_EQ(cudaMemset(x.get(), 0, max_bytes), cudaSuccess);
  ASSERT_EQ(cudaMemset(w.get(), 0, kMaxWeights * 2), cudaSuccess);
  ASSERT_EQ(cudaMemset(b.get(), 0, 1152 * 2), cudaSuccess);
  for (const Layer& l : layers) {
    const int pad = l.k / 2;
    DepthwiseConvParams p = MakeParams(Shape{kBatch, l.c, l.h, l.h, l.k, l.k, pad, pad, pad, pad, l.stride, l.stride},
                                       DepthwiseConvParams::kRelu6, true);
    ASSERT_EQ(DepthwiseConvNhwc(p, x.get(), w.get(), b.get(), y.get(), nullptr), cudaSuccess);
    const float ms = testing::MeanLaunchMs([&] { DepthwiseConvNhwc(p, x.get(), w.get(), b.get(), y.get(), nullptr); });
    float* sums_ptr = reinterpret_cast<float*>(sums.get());
    const float summing_ms = testing::MeanLaunchMs([&] {
      cudaMemsetAsync(sums_ptr, 0, size_t{kBatch} * l.c * sizeof(float), nullptr);
      DepthwiseConvNhwc(p, x.get(), w.get(), b.get(), y.get(), nullptr, sums_ptr);
    });
    ASSERT_GT(ms, 0) << "the CUDA events failed";
    const double bytes = 2.0 * p.n * p.c * (double{1} * p.h * p.w + double{1} * p.out_h * p.out_w);
    std::printf("depthwise %dx%d s%d fp16 relu6 %dx%dx%dx%d (NHWC): %.4f ms, %.0f GB/s; with channel sums %.4f ms\n",
                l.k, l.k, l.stride, p.n, p.h, p.w, p.c, ms, bytes / (ms * 1e-3) / 1e9, summing_ms);
    if (l.k == 3) continue;
    for (const int batch : {kBatch, 32, 1}) {  // the two kernels of 5x5 / 7x7 filters side by side
      p.n = batch;
      float kernel_ms[2] = {};
      for (const auto kernel : {DepthwiseConvParams::kRegisterTiles, DepthwiseConvParams::kSharedTiles}) {
        p.kernel = kernel;
        kernel_ms[kernel] =
            testing::MeanLaunchMs([&] { DepthwiseConvNhwc(p, x.get(), w.get(), b.get(), y.get(), nullptr); });
      }
      p.kernel = DepthwiseConvParams::kRegisterTiles;
      std::printf("  batch %3d: register tiles %.4f ms, shared tiles %.4f ms%s\n", batch, kernel_ms[0], kernel_ms[1],
                  DepthwiseConvSharedTilesFit(p) ? "" : " (too few tiles: not timed by the executor)");
    }
  }
}

}  // namespace
}  // namespace kernels::cuda
