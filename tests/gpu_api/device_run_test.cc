// Session::RunOnDevice on models/tiny_cnn: inputs already in device memory, work on the caller's
// stream, outputs allocated or written in place; the result must match ONNX Runtime's stored
// output (test_data_set_0, fp32 rtol 1e-4) and Session::Run's, through the step-by-step run, the
// capture and the replays. Also: page-locked inputs (AllocateHostTensor), bad buffers as errors,
// device_id out of range, a Session per GPU. Skipped without a GPU (except the CPU-session error).
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "runtime/session.h"
#include "tests/util/compare.h"

namespace {

using ::testing::HasSubstr;

constexpr char kModel[] = "models/tiny_cnn/model.onnx";
constexpr testing_util::Tolerance kFp32 = {.rtol = 1e-4, .atol = 1e-6};

ir::Tensor ReadData(const std::string& name) {
  absl::StatusOr<ir::Tensor> t = importer::ReadTensorProtoFile("models/tiny_cnn/test_data_set_0/" + name);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : ir::Tensor();
}

// A device copy of `host` (freed with the returned owner).
runtime::NamedDeviceBuffer ToDevice(const std::string& name, const ir::Tensor& host) {
  runtime::NamedDeviceBuffer b{name, {host.dtype(), host.shape(), nullptr, nullptr}};
  EXPECT_EQ(cudaMalloc(&b.buffer.data, host.byte_size()), cudaSuccess);
  b.buffer.owner = std::shared_ptr<void>(b.buffer.data, [](void* p) { cudaFree(p); });
  EXPECT_EQ(cudaMemcpy(b.buffer.data, host.raw_data(), host.byte_size(), cudaMemcpyHostToDevice), cudaSuccess);
  return b;
}

ir::Tensor ToHost(const exec::DeviceBuffer& b, cudaStream_t stream) {
  ir::Tensor t = *ir::Tensor::Create(b.dtype, b.dims);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(t.raw_data(), b.data, t.byte_size(), cudaMemcpyDeviceToHost), cudaSuccess);
  return t;
}

class DeviceRunTest : public testing::Test {
 protected:
  void SetUp() override {
    runtime::SessionOptions options;
    options.device = runtime::Device::kCuda;
    auto session = runtime::Session::Create(kModel, options);
    if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
      GTEST_SKIP() << session.status().message();
    }
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = *std::move(session);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    input_ = ReadData("input_0.pb");
    want_ = ReadData("output_0.pb");
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  std::unique_ptr<runtime::Session> session_;
  cudaStream_t stream_ = nullptr;
  ir::Tensor input_, want_;
};

TEST_F(DeviceRunTest, AllocatedOutputsMatchOnnxRuntimeAndRunThroughCapture) {
  const runtime::NamedDeviceBuffer x = ToDevice("image", input_);
  auto host = session_->Run({{"image", input_}});
  ASSERT_TRUE(host.ok()) << host.status();
  for (int run = 0; run < 4; ++run) {  // step by step, capture, replays
    auto out = session_->RunOnDevice({x}, stream_);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].name, "probs");
    const ir::Tensor got = ToHost((*out)[0].buffer, stream_);
    EXPECT_EQ(testing_util::CompareTensors(got, want_, kFp32), "") << "run " << run;
    EXPECT_EQ(testing_util::CompareTensors(got, (*host)[0].tensor, kFp32), "") << "run " << run;
  }
  EXPECT_EQ(session_->gpu()->graph_status(), "CUDA graph replay");
}

TEST_F(DeviceRunTest, OutputsWrittenInPlaceOnTheLegacyDefaultStream) {
  const runtime::NamedDeviceBuffer x = ToDevice("image", input_);
  ir::Tensor zeros = *ir::Tensor::Create(want_.dtype(), want_.shape());
  runtime::NamedDeviceBuffer y = ToDevice("probs", zeros);
  for (int run = 0; run < 3; ++run) {
    ASSERT_EQ(cudaMemset(y.buffer.data, 0, zeros.byte_size()), cudaSuccess);
    auto out = session_->RunOnDevice({x}, nullptr, {y});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].buffer.data, y.buffer.data);
    EXPECT_EQ(testing_util::CompareTensors(ToHost(y.buffer, nullptr), want_, kFp32), "") << "run " << run;
  }
}

TEST_F(DeviceRunTest, PageLockedHostInputsGiveTheSameOutputs) {
  absl::StatusOr<ir::Tensor> pinned = session_->AllocateHostTensor(input_.dtype(), input_.shape());
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  ASSERT_TRUE(pinned->CopyDataFrom(input_).ok());
  cudaPointerAttributes attributes;
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, pinned->raw_data()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  for (int run = 0; run < 3; ++run) {
    auto out = session_->Run({{"image", *pinned}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(testing_util::CompareTensors((*out)[0].tensor, want_, kFp32), "") << "run " << run;
  }
}

TEST_F(DeviceRunTest, BadBuffersAreErrors) {
  runtime::NamedDeviceBuffer host_memory{"image", {input_.dtype(), input_.shape(), input_.raw_data(), nullptr}};
  auto out = session_->RunOnDevice({host_memory}, stream_);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("host memory"));
  const runtime::NamedDeviceBuffer x = ToDevice("image", input_);
  runtime::NamedDeviceBuffer wrong_dtype = x;
  wrong_dtype.buffer.dtype = ir::DType::kFloat16;
  EXPECT_THAT(session_->RunOnDevice({wrong_dtype}, stream_).status().message(), HasSubstr("dtype"));
  ir::Tensor small = *ir::Tensor::Create(ir::DType::kFloat32, {1, 5});
  const runtime::NamedDeviceBuffer y = ToDevice("probs", small);
  auto wrong_output = session_->RunOnDevice({x}, stream_, {y});
  ASSERT_FALSE(wrong_output.ok());
  EXPECT_THAT(wrong_output.status().message(), HasSubstr("this run produces"));
  EXPECT_THAT(session_->RunOnDevice({}, stream_).status().message(), HasSubstr("missing input 'image'"));
}

TEST(DeviceRunOptionsTest, DeviceIdOutOfRangeIsAnError) {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCuda;
  options.gpu.device_id = 1000;
  auto session = runtime::Session::Create(kModel, options);
  if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
    GTEST_SKIP() << session.status().message();
  }
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("device_id 1000 does not exist"));
}

// Several GPUs in one process: a Session per device (device_id), run from two threads at once,
// each matching ONNX Runtime's stored output. Skipped with fewer than two GPUs.
TEST(DeviceRunOptionsTest, OneSessionPerGpuFromTwoThreads) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) GTEST_SKIP() << "fewer than two CUDA devices";
  const ir::Tensor input = ReadData("input_0.pb"), want = ReadData("output_0.pb");
  std::vector<std::unique_ptr<runtime::Session>> sessions;
  for (int id : {0, 1}) {
    runtime::SessionOptions options;
    options.device = runtime::Device::kCuda;
    options.gpu.device_id = id;
    auto session = runtime::Session::Create(kModel, options);
    ASSERT_TRUE(session.ok()) << session.status();
    EXPECT_THAT((*session)->gpu()->device_name(), HasSubstr("device " + std::to_string(id)));
    sessions.push_back(*std::move(session));
  }
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int id : {0, 1}) {
    threads.emplace_back([&, id] {
      for (int run = 0; run < 3 && errors[id].empty(); ++run) {
        auto out = sessions[id]->Run({{"image", input}});
        errors[id] = out.ok() ? testing_util::CompareTensors((*out)[0].tensor, want, kFp32) : out.status().ToString();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

TEST(DeviceRunOptionsTest, CpuSessionsRefuseDeviceBuffers) {
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  auto session = runtime::Session::Create(kModel, options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->RunOnDevice({}, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("needs a GPU session"));
}

}  // namespace
