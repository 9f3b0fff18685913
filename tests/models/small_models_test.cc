// The small models shipped in models/ match ONNX Runtime's outputs (stored beside each model by
// models/make_small_models.py) on every element, fp32 tolerance: tiny_cnn, ONNX's dropped
// experimental ops (legacy_ops), opset-3 forms (legacy_opset3, against the same network at
// opset 13), model-local functions (local_functions) and ONNX Runtime's contrib ops
// (ort_contrib_ops; ort_quantized_cnn, made by ORT's quantizer; ort_bert_optimized, by its
// transformers optimizer).
#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "runtime/session.h"
#include "tests/util/compare.h"

namespace {

class SmallModelTest : public ::testing::TestWithParam<std::string> {};

// The tensors `dir`/test_data_set_0/<kind>_<i>.pb for i = 0, 1, ... while they exist.
std::vector<ir::Tensor> ReadTensors(const std::string& dir, const std::string& kind) {
  std::vector<ir::Tensor> tensors;
  for (int i = 0;; ++i) {
    auto tensor = importer::ReadTensorProtoFile(dir + "/test_data_set_0/" + kind + "_" + std::to_string(i) + ".pb");
    if (!tensor.ok()) break;
    tensors.push_back(*std::move(tensor));
  }
  return tensors;
}

TEST_P(SmallModelTest, MatchesOnnxRuntime) {
  const std::string dir = "models/" + GetParam();
  runtime::SessionOptions options;
  options.device = runtime::Device::kCpu;
  auto session = runtime::Session::Create(dir + "/model.onnx", options);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<ir::Tensor> inputs = ReadTensors(dir, "input");
  const std::vector<ir::Tensor> expected = ReadTensors(dir, "output");
  ASSERT_EQ(inputs.size(), (*session)->inputs().size());
  ASSERT_EQ(expected.size(), (*session)->outputs().size());
  std::vector<runtime::NamedTensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.push_back({(*session)->inputs()[i].name, inputs[i]});
  auto outputs = (*session)->Run(feeds);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(testing_util::CompareTensors(outputs->at(i).tensor, expected[i], {.rtol = 1e-4, .atol = 1e-6}), "")
        << "output " << outputs->at(i).name;
  }
}

INSTANTIATE_TEST_SUITE_P(Shipped, SmallModelTest,
                         ::testing::Values("tiny_cnn", "legacy_ops", "legacy_opset3", "local_functions",
                                           "ort_contrib_ops", "ort_quantized_cnn", "ort_bert_optimized"));

}  // namespace
