// SessionOptions::half_inputs: an fp16 / bf16 session that takes the model's float32 input as a
// 16-bit tensor computes exactly what the same plan computes from the float32 input it would
// have cast on the device (models/tiny_cnn, its stored input, every element equal), on the CPU and,
// where one is usable, on the GPU; inputs() says float16 / bfloat16 and Run refuses float32.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "ir/half.h"
#include "runtime/cuda_executor_types.h"
#include "runtime/session.h"
#include "tests/util/compare.h"

namespace {

constexpr char kModel[] = "models/tiny_cnn/model.onnx";

// `x` rounded to `dtype` (float16 or bfloat16), as a Cast on the device rounds it.
ir::Tensor Narrowed(const ir::Tensor& x, ir::DType dtype) {
  ir::Tensor narrow = ir::Tensor::Create(dtype, x.shape()).value();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (dtype == ir::DType::kFloat16) narrow.data<ir::Half>()[i] = ir::Half(x.data<float>()[i]);
    if (dtype == ir::DType::kBFloat16) narrow.data<ir::BFloat16>()[i] = ir::BFloat16(x.data<float>()[i]);
  }
  return narrow;
}

std::unique_ptr<runtime::Session> MakeSession(runtime::Device device, const std::string& precision, bool half) {
  runtime::SessionOptions options;
  options.device = device;
  options.precision = precision;
  options.half_inputs = half;
  absl::StatusOr<std::unique_ptr<runtime::Session>> session = runtime::Session::Create(kModel, options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? *std::move(session) : nullptr;
}

class HalfInputsTest : public ::testing::TestWithParam<std::tuple<runtime::Device, std::string>> {};

TEST_P(HalfInputsTest, SameOutputsAsCastingOnTheDevice) {
  const auto& [device, precision] = GetParam();
  if (device == runtime::Device::kCuda && !exec::CudaUnavailableReason().empty()) {
    GTEST_SKIP() << exec::CudaUnavailableReason();
  }
  const ir::DType half = precision == "fp16" ? ir::DType::kFloat16 : ir::DType::kBFloat16;
  const ir::Tensor x = importer::ReadTensorProtoFile("models/tiny_cnn/test_data_set_0/input_0.pb").value();
  std::unique_ptr<runtime::Session> casting = MakeSession(device, precision, false);
  std::unique_ptr<runtime::Session> taking_half = MakeSession(device, precision, true);
  ASSERT_TRUE(casting && taking_half);
  ASSERT_EQ(taking_half->inputs().size(), 1u);
  EXPECT_EQ(taking_half->inputs()[0].type.dtype, half);
  EXPECT_EQ(casting->inputs()[0].type.dtype, ir::DType::kFloat32);
  EXPECT_EQ(taking_half->outputs()[0].type.dtype, ir::DType::kFloat32);

  const std::string name = taking_half->inputs()[0].name;
  auto want = casting->Run({{name, x}});
  ASSERT_TRUE(want.ok()) << want.status();
  for (int run = 0; run < 3; ++run) {  // on the GPU: the first run, then a captured graph's replays
    auto got = taking_half->Run({{name, Narrowed(x, half)}});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(testing_util::CompareTensors(got->at(0).tensor, want->at(0).tensor, {.rtol = 0, .atol = 0}), "")
        << "run " << run;
  }
  auto refused = taking_half->Run({{name, x}});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              ::testing::HasSubstr(absl::StrCat("has dtype float32, the model expects ", ir::DTypeName(half))));
}

INSTANTIATE_TEST_SUITE_P(CpuAndGpu, HalfInputsTest,
                         ::testing::Combine(::testing::Values(runtime::Device::kCpu, runtime::Device::kCuda),
                                            ::testing::Values(std::string("fp16"), std::string("bf16"))),
                         [](const auto& info) {
                           return absl::StrCat(std::get<0>(info.param) == runtime::Device::kCpu ? "cpu" : "cuda", "_",
                                               std::get<1>(info.param));
                         });

}  // namespace
