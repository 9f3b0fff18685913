// Test helpers for the own-kernel steps (runtime/cuda_kernel_steps): seeded inputs, a single-node
// graph builder (Case), the element-wise comparison with the host reference (float32 1e-5 relative,
// float16 1e-2, integers and bools exactly) and a GPU fixture whose Check runs a Case through
// RunCudaKernel and through exec::RunNodeOnCpu and compares every output element (CheckCaptured
// does so inside a CUDA-graph capture). The fixture skips when no GPU is usable. Header-only,
// testonly.
#ifndef ONNXRUN_RUNTIME_KERNEL_STEP_TESTING_H_
#define ONNXRUN_RUNTIME_KERNEL_STEP_TESTING_H_

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/half.h"
#include "runtime/cpu_executor.h"
#include "runtime/cuda_kernel_steps.h"
#include "runtime/device_tensor.h"

namespace exec::kernel_testing {

using ir::DType;
using ir::Tensor;

// ---- Inputs ---------------------------------------------------------------------------------------

inline Tensor Random(DType dtype, std::vector<int64_t> dims, uint32_t seed) {
  Tensor t = *Tensor::Create(dtype, std::move(dims));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> real(-3.f, 3.f);
  std::uniform_int_distribution<int> integer(-50, 50);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (dtype) {
      case DType::kFloat32: t.data<float>()[i] = real(gen); break;
      case DType::kFloat16: t.data<uint16_t>()[i] = ir::FloatToHalfBits(real(gen)); break;
      case DType::kInt32: t.data<int32_t>()[i] = integer(gen); break;
      case DType::kInt64: t.data<int64_t>()[i] = integer(gen) * (int64_t{1} << 33); break;
      case DType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(integer(gen)); break;
      case DType::kUint8: t.data<uint8_t>()[i] = static_cast<uint8_t>(integer(gen) + 50); break;
      case DType::kBool: t.data<uint8_t>()[i] = integer(gen) > 0 ? 1 : 0; break;
      default: ADD_FAILURE() << "no generator for " << ir::DTypeName(dtype);
    }
  }
  return t;
}

inline Tensor Ints(std::vector<int64_t> values, DType dtype = DType::kInt64) {
  Tensor t = *Tensor::Create(dtype, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kInt32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      t.data<int64_t>()[i] = values[i];
    }
  }
  return t;
}

inline Tensor Floats(std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Tensor::FromFloats(std::move(values), {n});
}

// ---- A single-node graph --------------------------------------------------------------------------

class Case {
 public:
  explicit Case(std::string op, int opset = 17) {
    node_.op_type = std::move(op);
    node_.name = node_.op_type;
    node_.opset = opset;
  }
  // A graph input (not constant): the value both backends get; stored NHWC on the device when asked.
  Case& In(Tensor t, bool nhwc = false) {
    const ir::ValueId id = graph_.AddValue(Name(), {t.dtype(), ir::ShapeFromInts(t.shape())});
    graph_.inputs().push_back(id);
    return Add(id, std::move(t), nhwc);
  }
  Case& Const(Tensor t) {
    const ir::ValueId id = graph_.AddConstant(Name(), t);
    return Add(id, std::move(t), false);
  }
  Case& None() { return Add(ir::kNoValue, Tensor(), false); }
  Case& Attr(const std::string& name, ir::AttributeValue value) {
    node_.attrs.Set(name, std::move(value));
    return *this;
  }
  // Outputs: true for present, false for absent optional ones (default: one output).
  Case& Outs(std::vector<bool> present) {
    outputs_ = std::move(present);
    return *this;
  }
  const ir::Node& node() {
    if (id_ < 0) {
      for (bool present : outputs_) {
        node_.outputs.push_back(present ? graph_.AddValue(Name()) : ir::kNoValue);
      }
      id_ = graph_.AddNode(node_);
    }
    return graph_.node(id_);
  }
  const ir::Graph& graph() {
    node();
    return graph_;
  }
  const std::vector<Tensor>& values() const { return values_; }
  const std::vector<bool>& nhwc() const { return nhwc_; }
  const std::string& label() const { return label_; }
  Case& Label(std::string label) {
    label_ = std::move(label);
    return *this;
  }

 private:
  std::string Name() { return "v" + std::to_string(graph_.values().size()); }
  Case& Add(ir::ValueId id, Tensor t, bool nhwc) {
    node_.inputs.push_back(id);
    values_.push_back(std::move(t));
    nhwc_.push_back(nhwc);
    return *this;
  }

  ir::Graph graph_;
  ir::Node node_;
  ir::NodeId id_ = -1;
  std::vector<Tensor> values_;
  std::vector<bool> nhwc_;
  std::vector<bool> outputs_ = {true};
  std::string label_;
};

// ---- Comparison -----------------------------------------------------------------------------------

inline void ExpectMatches(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const bool fp16 = want.dtype() == DType::kFloat16;
  const bool real = want.dtype() == DType::kFloat32 || fp16 || want.dtype() == DType::kFloat64;
  const double rtol = fp16 ? 1e-2 : 1e-5, atol = fp16 ? 1e-3 : 1e-6;
  const size_t es = ir::DTypeSize(want.dtype());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (!real) {
      ASSERT_EQ(std::memcmp(static_cast<const char*>(got.raw_data()) + i * es,
                            static_cast<const char*>(want.raw_data()) + i * es, es),
                0)
          << what << " element " << i << ": got " << got.GetAsDouble(i) << ", want " << want.GetAsDouble(i);
      continue;
    }
    const double a = got.GetAsDouble(i), b = want.GetAsDouble(i);
    if (std::isnan(b) || std::isinf(b)) {
      ASSERT_TRUE(std::isnan(b) ? std::isnan(a) : a == b)
          << what << " element " << i << ": got " << a << ", want " << b;
      continue;
    }
    ASSERT_LE(std::fabs(a - b), atol + rtol * std::fabs(b))
        << what << " element " << i << ": got " << a << ", want " << b;
  }
}

inline bool GpuUsable() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

class KernelStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!GpuUsable()) GTEST_SKIP() << "no usable GPU";
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_ != nullptr) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
  }

  std::vector<DeviceTensor> UploadInputs(Case& c) {
    std::vector<DeviceTensor> device;
    for (size_t i = 0; i < c.values().size(); ++i) {
      if (!c.values()[i].valid()) {
        device.emplace_back();
        continue;
      }
      absl::StatusOr<DeviceTensor> t = Upload(c.values()[i], c.nhwc()[i], stream_);
      EXPECT_TRUE(t.ok()) << t.status();
      device.push_back(t.ok() ? *std::move(t) : DeviceTensor());
    }
    return device;
  }

  // The host reference's outputs compared with `got`, every element.
  void CompareWithHost(Case& c, const std::vector<DeviceTensor>& got) {
    const ir::Node& node = c.node();
    std::vector<const Tensor*> host;
    for (const Tensor& t : c.values()) host.push_back(t.valid() ? &t : nullptr);
    absl::StatusOr<std::vector<Tensor>> want = RunNodeOnCpu(node, host);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ(got.size(), want->size());
    for (size_t o = 0; o < got.size(); ++o) {
      const std::string what = c.label() + " output " + std::to_string(o);
      if (node.outputs[o] == ir::kNoValue) {
        EXPECT_FALSE(got[o].valid()) << what;
        continue;
      }
      ASSERT_FALSE(got[o].nhwc) << what;
      absl::StatusOr<Tensor> downloaded = Download(got[o], stream_);
      ASSERT_TRUE(downloaded.ok()) << downloaded.status();
      ExpectMatches(*downloaded, (*want)[o], what);
    }
  }

  void Check(Case& c) {
    SCOPED_TRACE(c.label());
    ASSERT_TRUE(CudaKernelSupports(c.graph(), c.node())) << c.label();
    std::vector<DeviceTensor> inputs = UploadInputs(c);
    absl::StatusOr<std::vector<DeviceTensor>> got = RunCudaKernel(c.graph(), c.node(), inputs, stream_);
    ASSERT_TRUE(got.ok()) << c.label() << ": " << got.status();
    CompareWithHost(c, *got);
  }

  // Like Check, but RunCudaKernel runs inside a stream capture and the captured graph is launched:
  // any host synchronisation or non-capturable call fails the capture.
  void CheckCaptured(Case& c) {
    SCOPED_TRACE(c.label());
    ASSERT_TRUE(CudaKernelSupports(c.graph(), c.node()));
    std::vector<DeviceTensor> inputs = UploadInputs(c);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
    absl::StatusOr<std::vector<DeviceTensor>> got = RunCudaKernel(c.graph(), c.node(), inputs, stream_);
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(end, cudaSuccess) << cudaGetErrorString(end);
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    CompareWithHost(c, *got);
    got->clear();  // frees the graph's allocations on the stream
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }

  cudaStream_t stream_ = nullptr;
};

}  // namespace exec::kernel_testing

#endif  // ONNXRUN_RUNTIME_KERNEL_STEP_TESTING_H_
