// GPU tests of the own CUDA kernels against their definitions computed on the host (libm for the
// math): every element, float32 exact for copies, 1e-5 relative for math, 1e-2 for float16.
// Skipped when no GPU is usable.
#include <cuda_runtime_api.h>

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "ir/half.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/strided_copy.h"

namespace kernels::cuda {
namespace {

class CudaKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) GTEST_SKIP() << "no usable GPU";
  }
  template <typename T>
  T* ToDevice(const std::vector<T>& host) {
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, host.size() * sizeof(T) + 1), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    buffers_.push_back(p);
    return static_cast<T*>(p);
  }
  template <typename T>
  std::vector<T> ToHost(const T* device, size_t n) {
    std::vector<T> host(n);
    EXPECT_EQ(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
  void TearDown() override {
    for (void* p : buffers_) cudaFree(p);
  }
  std::vector<void*> buffers_;
};

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A 4-D copy over `dims`, reading through `src` strides and writing through `dst` strides.
CopyShape Copy4d(const int64_t (&dims)[4], const int64_t (&src)[4], const int64_t (&dst)[4]) {
  CopyShape shape;
  shape.rank = 4;
  for (int d = 0; d < 4; ++d) {
    shape.dims[d] = dims[d];
    shape.src_strides[d] = src[d];
    shape.dst_strides[d] = dst[d];
  }
  return shape;
}

TEST_F(CudaKernelsTest, NchwToNhwcTransposeMatchesDefinition) {
  const int64_t n = 2, c = 5, h = 3, w = 7;
  std::vector<float> x = Random(n * c * h * w, 1);
  float* dx = ToDevice(x);
  float* dy = ToDevice(std::vector<float>(x.size()));
  // Iterate over logical (n, c, h, w); read NCHW, write NHWC.
  const CopyShape shape = Copy4d({n, c, h, w}, {c * h * w, h * w, w, 1}, {h * w * c, 1, w * c, c});
  ASSERT_EQ(StridedCopy(dx, dy, shape, 4, nullptr), cudaSuccess);
  std::vector<float> y = ToHost(dy, x.size());
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw)
          ASSERT_EQ(y[((in * h + ih) * w + iw) * c + ic], x[((in * c + ic) * h + ih) * w + iw]);
}

// A transpose that keeps the innermost dim (attention's head split [B, S, H, D] -> [B, H, S, D]):
// 2-byte elements moved 8 at a time when D allows, one at a time when it does not.
TEST_F(CudaKernelsTest, HeadSplitTransposeMatchesDefinitionForWideAndNarrowRows) {
  for (const int64_t d : {16, 24, 6, 7}) {
    const int64_t b = 2, s = 5, h = 3;
    std::vector<uint16_t> x(b * s * h * d);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint16_t>(i * 7 + 1);
    uint16_t* dx = ToDevice(x);
    uint16_t* dy = ToDevice(std::vector<uint16_t>(x.size()));
    // Iterate over the output (b, h, s, d); read [B, S, H, D].
    const CopyShape shape = Copy4d({b, h, s, d}, {s * h * d, d, h * d, 1}, {h * s * d, s * d, d, 1});
    ASSERT_EQ(StridedCopy(dx, dy, shape, 2, nullptr), cudaSuccess);
    std::vector<uint16_t> y = ToHost(dy, x.size());
    for (int64_t ib = 0; ib < b; ++ib)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t is = 0; is < s; ++is)
          for (int64_t id = 0; id < d; ++id)
            ASSERT_EQ(y[((ib * h + ih) * s + is) * d + id], x[((ib * s + is) * h + ih) * d + id]) << "D=" << d;
  }
}

TEST_F(CudaKernelsTest, FillWritesEveryElement) {
  uint16_t* d = ToDevice(std::vector<uint16_t>(1001, 0));
  ASSERT_EQ(Fill(d, 1001, 2, 0x3c00, nullptr), cudaSuccess);
  for (uint16_t v : ToHost(d, 1001)) ASSERT_EQ(v, 0x3c00);
}

TEST_F(CudaKernelsTest, UnaryOpsMatchLibm) {
  const std::vector<float> x = Random(4099, 2);
  struct Case {
    UnaryOp op;
    float alpha, beta;
    float (*ref)(float, float, float);
  };
  const Case cases[] = {
      {UnaryOp::kRelu, 0, 0, [](float v, float, float) { return std::max(v, 0.f); }},
      {UnaryOp::kSigmoid, 0, 0, [](float v, float, float) { return 1.f / (1.f + std::exp(-v)); }},
      {UnaryOp::kTanh, 0, 0, [](float v, float, float) { return std::tanh(v); }},
      {UnaryOp::kClip, 0, 6, [](float v, float lo, float hi) { return std::min(hi, std::max(lo, v)); }},
      {UnaryOp::kHardSwish, 0, 0,
       [](float v, float, float) { return v * std::min(1.f, std::max(0.f, v / 6.f + 0.5f)); }},
      {UnaryOp::kGelu, 0, 0, [](float v, float, float) { return 0.5f * v * (1.f + std::erf(v / std::sqrt(2.f))); }},
      {UnaryOp::kElu, 0.7f, 0, [](float v, float a, float) { return v >= 0 ? v : a * (std::exp(v) - 1.f); }},
  };
  float* dx = ToDevice(x);
  float* dy = ToDevice(std::vector<float>(x.size()));
  for (const Case& c : cases) {
    ASSERT_EQ(Unary(c.op, FloatType::kFloat32, dx, dy, x.size(), c.alpha, c.beta, nullptr), cudaSuccess);
    std::vector<float> y = ToHost(dy, x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = c.ref(x[i], c.alpha, c.beta);
      ASSERT_NEAR(y[i], want, 1e-5f * std::max(1.f, std::fabs(want))) << static_cast<int>(c.op) << " at " << i;
    }
  }
}

TEST_F(CudaKernelsTest, BroadcastAddOfPerChannelBiasInFloat16) {
  const int64_t n = 2, c = 8, hw = 9;
  std::vector<float> a = Random(n * c * hw, 3), b = Random(c, 4);
  std::vector<uint16_t> ah(a.size()), bh(b.size());
  for (size_t i = 0; i < a.size(); ++i) ah[i] = ir::FloatToHalfBits(a[i]);
  for (size_t i = 0; i < b.size(); ++i) bh[i] = ir::FloatToHalfBits(b[i]);
  uint16_t* da = ToDevice(ah);
  uint16_t* db = ToDevice(bh);
  uint16_t* dy = ToDevice(std::vector<uint16_t>(a.size()));
  CopyShape shape;
  shape.rank = 3;
  shape.dims[0] = n, shape.dims[1] = c, shape.dims[2] = hw;
  shape.src_strides[0] = c * hw, shape.src_strides[1] = hw, shape.src_strides[2] = 1;
  const int64_t b_strides[3] = {0, 1, 0};
  ASSERT_EQ(Binary(BinaryOp::kAdd, FloatType::kFloat16, da, db, dy, shape, b_strides, nullptr), cudaSuccess);
  std::vector<uint16_t> y = ToHost(dy, a.size());
  for (int64_t i = 0; i < n * c * hw; ++i) {
    const float want = ir::HalfBitsToFloat(ah[i]) + ir::HalfBitsToFloat(bh[(i / hw) % c]);
    ASSERT_NEAR(ir::HalfBitsToFloat(y[i]), want, 1e-2f * std::max(1.f, std::fabs(want))) << i;
  }
}

// The 16-byte packed paths: a channels-last [N,H,W,C] tensor times a per-(n,c) scale (the
// squeeze-excite multiply, C a multiple of 8 in fp16), a same-shape multiply and a unary op on a
// multiple of the pack size; every element against the host.
TEST_F(CudaKernelsTest, PackedPathsMatchTheHost) {
  const int64_t n = 3, hw = 5, c = 16;
  std::vector<float> a = Random(n * hw * c, 5), s = Random(n * c, 6);
  std::vector<uint16_t> ah(a.size()), sh(s.size());
  for (size_t i = 0; i < a.size(); ++i) ah[i] = ir::FloatToHalfBits(a[i]);
  for (size_t i = 0; i < s.size(); ++i) sh[i] = ir::FloatToHalfBits(s[i]);
  uint16_t* da = ToDevice(ah);
  uint16_t* ds = ToDevice(sh);
  uint16_t* dy = ToDevice(std::vector<uint16_t>(a.size()));
  CopyShape shape;
  shape.rank = 3;
  shape.dims[0] = n, shape.dims[1] = hw, shape.dims[2] = c;
  shape.src_strides[0] = hw * c, shape.src_strides[1] = c, shape.src_strides[2] = 1;
  const int64_t s_strides[3] = {c, 0, 1};
  ASSERT_EQ(Binary(BinaryOp::kMul, FloatType::kFloat16, da, ds, dy, shape, s_strides, nullptr), cudaSuccess);
  std::vector<uint16_t> y = ToHost(dy, a.size());
  for (int64_t i = 0; i < n * hw * c; ++i) {
    const float want = ir::HalfBitsToFloat(ah[i]) * ir::HalfBitsToFloat(sh[(i / (hw * c)) * c + i % c]);
    ASSERT_NEAR(ir::HalfBitsToFloat(y[i]), want, 1e-2f * std::max(1.f, std::fabs(want))) << i;
  }

  const std::vector<float> x = Random(4096, 7), z = Random(4096, 8);
  float* dx = ToDevice(x);
  float* dz = ToDevice(z);
  float* dout = ToDevice(std::vector<float>(x.size()));
  CopyShape flat;
  flat.rank = 1;
  flat.dims[0] = 4096, flat.src_strides[0] = 1;
  const int64_t z_strides[1] = {1};
  ASSERT_EQ(Binary(BinaryOp::kSub, FloatType::kFloat32, dx, dz, dout, flat, z_strides, nullptr), cudaSuccess);
  std::vector<float> diff = ToHost(dout, x.size());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(diff[i], x[i] - z[i]) << i;
  ASSERT_EQ(Unary(UnaryOp::kSigmoid, FloatType::kFloat32, dx, dout, x.size(), 0, 0, nullptr), cudaSuccess);
  std::vector<float> sig = ToHost(dout, x.size());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(sig[i], 1.f / (1.f + std::exp(-x[i])), 1e-6f) << i;
}

TEST_F(CudaKernelsTest, ConvertFloatRoundTripsThroughHalfLikeTheHost) {
  const std::vector<float> x = Random(1000, 5);
  float* dx = ToDevice(x);
  uint16_t* dh = ToDevice(std::vector<uint16_t>(x.size()));
  float* dy = ToDevice(std::vector<float>(x.size()));
  ASSERT_EQ(ConvertFloat(FloatType::kFloat32, FloatType::kFloat16, dx, dh, x.size(), nullptr), cudaSuccess);
  ASSERT_EQ(ConvertFloat(FloatType::kFloat16, FloatType::kFloat32, dh, dy, x.size(), nullptr), cudaSuccess);
  const std::vector<uint16_t> h = ToHost(dh, x.size());
  const std::vector<float> y = ToHost(dy, x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(h[i], ir::FloatToHalfBits(x[i])) << i;  // IEEE round to nearest even on both sides
    ASSERT_EQ(y[i], ir::HalfBitsToFloat(h[i])) << i;
  }
}

}  // namespace
}  // namespace kernels::cuda
