// The small models shipped in models/ match ONNX Runtime's outputs (stored beside each model by
// models/make_small_models.py) on every element, fp32 tolerance: tiny_cnn, ONNX's dropped
// experimental ops (legacy_ops), opset-3 forms (legacy_opset3, against the same network at
// opset 13) and model-local functions (local_functions).
#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "runtime/session.h"
#include "tests/util/compare.h"

namespace {

class SmallModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SmallModelTest, MatchesOnnxRuntime) {
  const std::string dir = "models/" + GetParam();
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  auto session = runtime::Session::Create(dir + "/model.onnx", options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto input = importer::ReadTensorProtoFile(dir + "/test_data_set_0/input_0.pb");
  ASSERT_TRUE(input.ok()) << input.status();
  auto outputs = (*session)->Run({{(*session)->inputs()[0].name, *input}});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  auto expected = importer::ReadTensorProtoFile(dir + "/test_data_set_0/output_0.pb");
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(testing_util::CompareTensors(outputs->at(0).tensor, *expected, {.rtol = 1e-4, .atol = 1e-6}), "");
}

INSTANTIATE_TEST_SUITE_P(Shipped, SmallModelTest,
                         ::testing::Values("tiny_cnn", "legacy_ops", "legacy_opset3", "local_functions"));

}  // namespace
