// The C API (include/onnxrun/onnxrun_c.h) on models/tiny_cnn: the same output as the C++ API and as
// ONNX Runtime's stored output (models/tiny_cnn/test_data_set_0), every element; and its errors
// (missing file, wrong dtype, missing input, an index out of range) as statuses with messages.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "onnxrun/onnxrun_c.h"
#include "runtime/session.h"

namespace {

using ::testing::HasSubstr;

constexpr char kModel[] = "models/tiny_cnn/model.onnx";

// The status's message, and frees it ("" for success).
std::string Consume(OnnxrunStatus* status) {
  std::string message = status == nullptr ? "" : onnxrun_status_message(status);
  onnxrun_status_free(status);
  return message;
}

class CApiTest : public testing::Test {
 protected:
  void SetUp() override {
    const OnnxrunOptions options = {ONNXRUN_DEVICE_CPU, "fp32", 0};
    ASSERT_EQ(Consume(onnxrun_session_create(kModel, &options, &session_)), "");
    absl::StatusOr<ir::Tensor> input = importer::ReadTensorProtoFile("models/tiny_cnn/test_data_set_0/input_0.pb");
    ASSERT_TRUE(input.ok()) << input.status();
    input_ = *std::move(input);
  }
  void TearDown() override { onnxrun_session_free(session_); }

  OnnxrunTensor InputView() const {
    return {"image", ONNXRUN_FLOAT32, input_.shape().data(), input_.shape().size(), input_.raw_data()};
  }

  OnnxrunSession* session_ = nullptr;
  ir::Tensor input_;
};

TEST_F(CApiTest, MetadataNamesInputsAndOutputs) {
  EXPECT_STREQ(onnxrun_session_device(session_), "cpu");
  ASSERT_EQ(onnxrun_session_input_count(session_), 1u);
  ASSERT_EQ(onnxrun_session_output_count(session_), 1u);
  EXPECT_STREQ(onnxrun_session_input_name(session_, 0), "image");
  EXPECT_STREQ(onnxrun_session_output_name(session_, 0), "probs");
  EXPECT_EQ(onnxrun_session_input_name(session_, 1), nullptr);
}

TEST_F(CApiTest, RunMatchesTheCppApiAndOnnxRuntime) {
  const OnnxrunTensor input = InputView();
  OnnxrunValues* outputs = nullptr;
  ASSERT_EQ(Consume(onnxrun_session_run(session_, &input, 1, &outputs)), "");
  ASSERT_EQ(onnxrun_values_count(outputs), 1u);
  OnnxrunTensor probs;
  ASSERT_EQ(Consume(onnxrun_values_get(outputs, 0, &probs)), "");
  EXPECT_STREQ(probs.name, "probs");
  ASSERT_EQ(probs.dtype, ONNXRUN_FLOAT32);
  absl::StatusOr<ir::Tensor> stored = importer::ReadTensorProtoFile("models/tiny_cnn/test_data_set_0/output_0.pb");
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(std::vector<int64_t>(probs.dims, probs.dims + probs.rank), stored->shape());  // [batch, 10]
  const float* got = static_cast<const float*>(probs.data);

  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  auto cpp = runtime::Session::Create(kModel, options);
  ASSERT_TRUE(cpp.ok()) << cpp.status();
  auto want = (*cpp)->Run({{"image", input_}});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ((*want)[0].tensor.num_elements(), stored->num_elements());
  for (int64_t i = 0; i < stored->num_elements(); ++i) {
    EXPECT_EQ(got[i], (*want)[0].tensor.data<float>()[i]) << i;  // the same Session code: bit for bit
    EXPECT_NEAR(got[i], stored->data<float>()[i], 1e-5 + 1e-4 * std::abs(stored->data<float>()[i])) << i;
  }
  onnxrun_values_free(outputs);
}

TEST_F(CApiTest, ErrorsAreStatusesWithMessages) {
  OnnxrunSession* missing = nullptr;
  OnnxrunStatus* status = onnxrun_session_create("no/such/model.onnx", nullptr, &missing);
  ASSERT_NE(status, nullptr);
  EXPECT_NE(onnxrun_status_code(status), 0);
  EXPECT_THAT(std::string(onnxrun_status_message(status)), HasSubstr("no/such/model.onnx"));
  onnxrun_status_free(status);
  EXPECT_EQ(missing, nullptr);

  OnnxrunTensor wrong = InputView();
  wrong.dtype = ONNXRUN_INT32;  // as many bytes as the float32 data; the model takes float32
  OnnxrunValues* outputs = nullptr;
  EXPECT_THAT(Consume(onnxrun_session_run(session_, &wrong, 1, &outputs)), HasSubstr("image"));
  EXPECT_EQ(outputs, nullptr);
  EXPECT_THAT(Consume(onnxrun_session_run(session_, nullptr, 0, &outputs)), HasSubstr("image"));

  const OnnxrunTensor input = InputView();
  ASSERT_EQ(Consume(onnxrun_session_run(session_, &input, 1, &outputs)), "");
  OnnxrunTensor view;
  EXPECT_THAT(Consume(onnxrun_values_get(outputs, 5, &view)), HasSubstr("output 5 of 1"));
  onnxrun_values_free(outputs);
  onnxrun_status_free(nullptr);  // NULL is accepted by every *_free
  onnxrun_session_free(nullptr);
  onnxrun_values_free(nullptr);
}

TEST_F(CApiTest, InfoAndExplainDescribeTheModel) {
  OnnxrunTensorInfo info;
  ASSERT_EQ(Consume(onnxrun_session_input_info(session_, 0, &info)), "");
  EXPECT_STREQ(info.name, "image");
  EXPECT_EQ(info.dtype, ONNXRUN_FLOAT32);
  ASSERT_EQ(info.rank, 4);
  EXPECT_EQ(info.dims[0], -1);  // the batch dim is named
  EXPECT_STREQ(info.dim_names[0], "N");
  EXPECT_EQ(std::vector<int64_t>(info.dims + 1, info.dims + 4), (std::vector<int64_t>{3, 32, 32}));
  EXPECT_THAT(Consume(onnxrun_session_output_info(session_, 1, &info)), HasSubstr("output 1 of 1"));
  EXPECT_THAT(std::string(onnxrun_session_explain_json(session_)), HasSubstr("\"steps\""));
  OnnxrunValues* outputs = nullptr;
  const OnnxrunTensor input = InputView();
  EXPECT_THAT(Consume(onnxrun_session_run_device(session_, &input, 1, nullptr, &outputs)),
              HasSubstr("needs a GPU session"));
}

// Settings by name: a session made with config entries runs like the others; an unknown key or a
// bad value is an error that names it, and no session is made.
TEST_F(CApiTest, ConfigEntriesSetOptionsOrSayWhatIsWrong) {
  const OnnxrunOptions options = {ONNXRUN_DEVICE_CPU, "fp32", 0};
  const char* keys[] = {"tune_for_streams", "cuda_graph"};
  const char* values[] = {"2", "false"};
  OnnxrunSession* configured = nullptr;
  ASSERT_EQ(Consume(onnxrun_session_create_with_config(kModel, &options, keys, values, 2, &configured)), "");
  OnnxrunValues* outputs = nullptr;
  const OnnxrunTensor input = InputView();
  EXPECT_EQ(Consume(onnxrun_session_run(configured, &input, 1, &outputs)), "");
  onnxrun_values_free(outputs);
  onnxrun_session_free(configured);

  const char* unknown[] = {"tune_for_stream"};
  OnnxrunSession* none = nullptr;
  EXPECT_THAT(Consume(onnxrun_session_create_with_config(kModel, &options, unknown, values, 1, &none)),
              HasSubstr("unknown session config key 'tune_for_stream'"));
  const char* too_many[] = {"99"};
  EXPECT_THAT(Consume(onnxrun_session_create_with_config(kModel, &options, keys, too_many, 1, &none)),
              HasSubstr("tune_for_streams: '99' is not an integer from 1 to 16"));
  EXPECT_THAT(Consume(onnxrun_session_create_with_config(kModel, &options, nullptr, values, 1, &none)),
              HasSubstr("keys or values is NULL"));
  EXPECT_EQ(none, nullptr);
}

// The C API on the GPU: host run, run_device (allocated outputs) and run_device_into (in place) on
// device memory all match ONNX Runtime's stored output. Skipped without a GPU.
TEST(CApiGpuTest, DeviceRunsMatchOnnxRuntime) {
  const OnnxrunOptions options = {ONNXRUN_DEVICE_CUDA, "fp32", 0};
  OnnxrunSession* session = nullptr;
  OnnxrunStatus* created = onnxrun_session_create(kModel, &options, &session);
  if (created != nullptr && onnxrun_status_code(created) == static_cast<int>(absl::StatusCode::kUnavailable)) {
    GTEST_SKIP() << Consume(created);
  }
  ASSERT_EQ(Consume(created), "");
  absl::StatusOr<ir::Tensor> input = importer::ReadTensorProtoFile("models/tiny_cnn/test_data_set_0/input_0.pb");
  absl::StatusOr<ir::Tensor> stored = importer::ReadTensorProtoFile("models/tiny_cnn/test_data_set_0/output_0.pb");
  ASSERT_TRUE(input.ok() && stored.ok());
  auto expect_stored = [&](const void* data, bool on_device, const std::string& what) {
    std::vector<float> got(stored->num_elements());
    if (on_device) {
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.data(), data, got.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    } else {
      std::memcpy(got.data(), data, got.size() * sizeof(float));
    }
    for (size_t i = 0; i < got.size(); ++i) {
      const float want = stored->data<float>()[i];
      EXPECT_NEAR(got[i], want, 1e-5 + 1e-4 * std::abs(want)) << what << " " << i;
    }
  };
  void* x = nullptr;
  void* y = nullptr;
  ASSERT_EQ(cudaMalloc(&x, input->byte_size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&y, stored->byte_size()), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(x, input->raw_data(), input->byte_size(), cudaMemcpyHostToDevice), cudaSuccess);
  const OnnxrunTensor host_in = {"image", ONNXRUN_FLOAT32, input->shape().data(), input->shape().size(),
                                 input->raw_data()};
  const OnnxrunTensor device_in = {"image", ONNXRUN_FLOAT32, input->shape().data(), input->shape().size(), x};
  const OnnxrunTensor device_out = {"probs", ONNXRUN_FLOAT32, stored->shape().data(), stored->shape().size(), y};
  for (int run = 0; run < 3; ++run) {  // step by step, capture, replay
    OnnxrunValues* values = nullptr;
    ASSERT_EQ(Consume(onnxrun_session_run(session, &host_in, 1, &values)), "");
    OnnxrunTensor out;
    ASSERT_EQ(Consume(onnxrun_values_get(values, 0, &out)), "");
    expect_stored(out.data, false, "host run");
    onnxrun_values_free(values);

    ASSERT_EQ(Consume(onnxrun_session_run_device(session, &device_in, 1, nullptr, &values)), "");
    EXPECT_EQ(onnxrun_values_on_device(values), 1);
    ASSERT_EQ(Consume(onnxrun_values_ready_on(values, nullptr)), "");
    ASSERT_EQ(Consume(onnxrun_values_get(values, 0, &out)), "");
    expect_stored(out.data, true, "run_device");
    onnxrun_values_free(values);

    ASSERT_EQ(cudaMemset(y, 0, stored->byte_size()), cudaSuccess);
    ASSERT_EQ(Consume(onnxrun_session_run_device_into(session, &device_in, 1, &device_out, 1, nullptr)), "");
    expect_stored(y, true, "run_device_into");
  }
  cudaFree(x);
  cudaFree(y);
  onnxrun_session_free(session);
}

}  // namespace
