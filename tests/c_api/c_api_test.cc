// The C API (include/onnxrun/onnxrun_c.h) on models/tiny_cnn: the same output as the C++ API and as
// ONNX Runtime's stored output (models/tiny_cnn/test_data_set_0), every element; and its errors
// (missing file, wrong dtype, missing input, an index out of range) as statuses with messages.
#include <cmath>
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
    const OnnxrunOptions options = {ONNXRUN_DEVICE_CPU, "fp32"};
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

}  // namespace
