// Test helpers shared by the own kernels' GPU tests: float values in a FloatType's storage (rounded,
// encoded to bytes, decoded), their upload, owned device memory, the bandwidth printouts' timing, and a
// fixture that skips when no GPU is usable.
#ifndef ONNXRUN_KERNELS_CUDA_KERNEL_TESTING_H_
#define ONNXRUN_KERNELS_CUDA_KERNEL_TESTING_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "ir/half.h"
#include "kernels/cuda/elementwise.h"  // FloatType

namespace kernels::cuda::testing {

inline size_t StorageBytes(FloatType t) { return t == FloatType::kFloat32 ? 4 : 2; }

// `v` stored in t and read back (what the GPU reads after an upload).
inline float RoundTo(FloatType t, float v) {
  if (t == FloatType::kFloat16) return ir::HalfBitsToFloat(ir::FloatToHalfBits(v));
  if (t == FloatType::kBFloat16) return ir::BFloat16BitsToFloat(ir::FloatToBFloat16Bits(v));
  return v;
}

inline std::vector<uint8_t> Encode(FloatType t, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * StorageBytes(t));
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == FloatType::kFloat32) {
      std::memcpy(&bytes[i * 4], &values[i], 4);
    } else {
      const uint16_t bits =
          t == FloatType::kFloat16 ? ir::FloatToHalfBits(values[i]) : ir::FloatToBFloat16Bits(values[i]);
      std::memcpy(&bytes[i * 2], &bits, 2);
    }
  }
  return bytes;
}

inline float Decode(FloatType t, const uint8_t* at) {
  if (t == FloatType::kFloat32) {
    float v;
    std::memcpy(&v, at, 4);
    return v;
  }
  uint16_t bits;
  std::memcpy(&bits, at, 2);
  return t == FloatType::kFloat16 ? ir::HalfBitsToFloat(bits) : ir::BFloat16BitsToFloat(bits);
}

// A device copy of `bytes` (cudaFree it); a failed allocation or copy fails the test.
inline void* ToDevice(const std::vector<uint8_t>& bytes) {
  void* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, bytes.size()), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

// The mean milliseconds of one launch() on the legacy default stream: three warm-up calls, then
// `runs` calls between two CUDA events (the clock of the kernels' bandwidth printouts); -1 when an
// event call fails.
template <typename Launch>
float MeanLaunchMs(Launch&& launch, int runs = 20) {
  cudaEvent_t start = nullptr, stop = nullptr;
  float ms = -1;
  if (cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess) {
    for (int i = 0; i < 3; ++i) launch();
    cudaEventRecord(start);
    for (int i = 0; i < runs; ++i) launch();
    cudaEventRecord(stop);
    const bool timed =
        cudaEventSynchronize(stop) == cudaSuccess && cudaEventElapsedTime(&ms, start, stop) == cudaSuccess;
    ms = timed ? ms / runs : -1;
  }
  if (start != nullptr) cudaEventDestroy(start);
  if (stop != nullptr) cudaEventDestroy(stop);
  return ms;
}

// Owns cudaMalloc'd memory (null when the allocation failed).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) {
    if (cudaMalloc(&ptr_, bytes) != cudaSuccess) ptr_ = nullptr;
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  char* get() const { return static_cast<char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

// Skips the test when no GPU is usable (CI machines have none).
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) GTEST_SKIP() << "no usable GPU";
  }
};

}  // namespace kernels::cuda::testing

#endif  // ONNXRUN_KERNELS_CUDA_KERNEL_TESTING_H_
