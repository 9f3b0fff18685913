// kernels/cudnn/gpu_test_util.h: helpers of the GPU tests — a fixture that skips without a GPU,
// device buffers, seeded inputs (rounded to the I/O precision), CPU references in double and an
// every-element comparison. Test-only.
#ifndef ONNXRUN_KERNELS_CUDNN_GPU_TEST_UTIL_H_
#define ONNXRUN_KERNELS_CUDNN_GPU_TEST_UTIL_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/half.h"
#include "kernels/cudnn/fused_graph.h"
#include "kernels/cudnn/status.h"

namespace cudnn::testing {

// bf16: inputs and output rounded to 8 significant bits (2^-8 each), accumulation in float.
constexpr double kRtolFp32 = 1e-4, kRtolTf32 = 1e-3, kRtolFp16 = 1e-2, kRtolBf16 = 2e-2;

// Owns cudaMalloc'd memory.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes > 0 && cudaMalloc(&ptr_, bytes) != cudaSuccess) ptr_ = nullptr;
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A float's 16-bit storage bits in `t` (fp16 or bf16) and back.
inline uint16_t ToBits(IoType t, float v) {
  return t == IoType::kBFloat16 ? ir::FloatToBFloat16Bits(v) : ir::FloatToHalfBits(v);
}
inline float FromBits(IoType t, uint16_t bits) {
  return t == IoType::kBFloat16 ? ir::BFloat16BitsToFloat(bits) : ir::HalfBitsToFloat(bits);
}
inline float RoundTo(IoType t, float v) { return Is16Bit(t) ? FromBits(t, ToBits(t, v)) : v; }

// Uniform in [lo, hi), already rounded to `t` so the reference sees what the GPU sees.
inline std::vector<float> Random(size_t n, IoType t, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = RoundTo(t, dist(gen));
  return v;
}

inline DeviceBuffer Upload(const std::vector<float>& v, IoType t) {
  DeviceBuffer buf(v.size() * ElementBytes(t));
  if (Is16Bit(t)) {
    std::vector<uint16_t> bits(v.size());
    for (size_t i = 0; i < v.size(); ++i) bits[i] = ToBits(t, v[i]);
    cudaMemcpy(buf.get(), bits.data(), buf.bytes(), cudaMemcpyHostToDevice);
  } else {
    cudaMemcpy(buf.get(), v.data(), buf.bytes(), cudaMemcpyHostToDevice);
  }
  return buf;
}

inline std::vector<float> Download(const DeviceBuffer& buf, size_t n, IoType t) {
  std::vector<float> out(n);
  cudaDeviceSynchronize();
  if (Is16Bit(t)) {
    std::vector<uint16_t> bits(n);
    cudaMemcpy(bits.data(), buf.get(), n * 2, cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < n; ++i) out[i] = FromBits(t, bits[i]);
  } else {
    cudaMemcpy(out.data(), buf.get(), n * 4, cudaMemcpyDeviceToHost);
  }
  return out;
}

// Every element: |got - want| <= rtol * max(|want|, 1). Inputs are O(1) by construction.
inline ::testing::AssertionResult AllClose(const std::vector<float>& got, const std::vector<double>& want,
                                           double rtol) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " vs " << want.size();
  }
  size_t bad = 0;
  double worst = 0;
  std::ostringstream first;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(got[i] - want[i]);
    const double limit = rtol * std::max(std::fabs(want[i]), 1.0);
    worst = std::max(worst, err / std::max(std::fabs(want[i]), 1.0));
    if (!(err <= limit)) {
      if (bad++ < 5) first << " [" << i << "] got " << got[i] << " want " << want[i] << ";";
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess() << "max scaled error " << worst;
  return ::testing::AssertionFailure() << bad << " of " << got.size() << " elements off (rtol " << rtol << ", worst "
                                       << worst << "):" << first.str();
}

// Logical [d0,d1,d2,d3] → offset through strides.
struct View4 {
  std::vector<int64_t> dims, strides;
  int64_t at(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return a * strides[0] + b * strides[1] + c * strides[2] + d * strides[3];
  }
  int64_t size() const { return dims[0] * dims[1] * dims[2] * dims[3]; }
};

struct ConvRefParams {
  int64_t groups = 1, pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
};

// y[n,k,p,q] = sum x[n, g*Cg+c, p*sh-ph+r, q*sw-pw+s] * w[k,c,r,s] (+ bias[k]); stored per views.
inline std::vector<double> ConvRef(const std::vector<float>& x, const View4& xv, const std::vector<float>& w,
                                   const View4& wv, const View4& yv, const ConvRefParams& p,
                                   const std::vector<float>* bias) {
  std::vector<double> y(yv.size(), 0.0);
  const int64_t kg = yv.dims[1] / p.groups, cg = wv.dims[1];
  for (int64_t n = 0; n < yv.dims[0]; ++n)
    for (int64_t k = 0; k < yv.dims[1]; ++k)
      for (int64_t oh = 0; oh < yv.dims[2]; ++oh)
        for (int64_t ow = 0; ow < yv.dims[3]; ++ow) {
          double acc = bias ? (*bias)[k] : 0.0;
          const int64_t g = k / kg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t r = 0; r < wv.dims[2]; ++r)
              for (int64_t s = 0; s < wv.dims[3]; ++s) {
                const int64_t ih = oh * p.stride_h - p.pad_h + r, iw = ow * p.stride_w - p.pad_w + s;
                if (ih < 0 || iw < 0 || ih >= xv.dims[2] || iw >= xv.dims[3]) continue;
                acc += double{x[xv.at(n, g * cg + c, ih, iw)]} * w[wv.at(k, c, r, s)];
              }
          y[yv.at(n, k, oh, ow)] = acc;
        }
  return y;
}

// Skips every test when no GPU is usable; owns a cuDNN handle otherwise.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      GTEST_SKIP() << "no GPU: cudaGetDeviceCount -> " << cudaGetErrorName(e) << ", count " << count;
    }
    const cudnnStatus_t s = cudnnCreate(&handle_);
    ASSERT_EQ(s, CUDNN_STATUS_SUCCESS) << "GPU present but cudnnCreate failed: " << cudnnGetErrorString(s);
  }
  void TearDown() override {
    if (handle_ != nullptr) cudnnDestroy(handle_);
  }
  cudnnHandle_t handle_ = nullptr;
};

}  // namespace cudnn::testing

#endif  // ONNXRUN_KERNELS_CUDNN_GPU_TEST_UTIL_H_
