// The small models shipped in models/ match ONNX Runtime's outputs (stored beside each model by
// models/make_small_models.py and make_contrib_models.py) on every element: tiny_cnn, ONNX's dropped
// experimental ops (legacy_ops), opset-3 forms (legacy_opset3, against the same network at
// opset 13), model-local functions (local_functions), int4 / float8 Q/DQ (narrow_qdq), tf2onnx's
// NHWC input and output Transposes around convs (nhwc_input_cnn) and ONNX
// Runtime's contrib ops
// (ort_contrib_ops; ort_quantized_cnn, made by ORT's quantizer; ort_bert_optimized, by its
// transformers optimizer; ort_matmul_nbits, its weight-only 2/4/8-bit MatMulNBits; ort_bert_quantized,
// quantize_dynamic's QAttention and QEmbedLayerNormalization) and scikit-learn models converted by
// skl2onnx (sklearn_ml_ops: the ai.onnx.ml ops, strings moved by standard ops). On the CPU at fp32's tolerance; on the
// GPU (skipped where none is usable) in fp32 and fp16 at theirs.
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "runtime/cuda_executor_types.h"
#include "runtime/session.h"
#include "tests/util/compare.h"

namespace {

const std::vector<std::string> kModels = {"tiny_cnn",          "legacy_ops",         "legacy_opset3",
                                          "local_functions",   "narrow_qdq",         "ort_contrib_ops",
                                          "ort_quantized_cnn", "ort_bert_optimized", "sklearn_ml_ops",
                                          "ort_matmul_nbits",  "ort_bert_quantized", "nhwc_input_cnn"};

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

// Runs models/`model` on `device` at `precision` and compares every output with ORT's.
void ExpectMatchesOnnxRuntime(const std::string& model, runtime::Device device, const std::string& precision,
                              testing_util::Tolerance tolerance) {
  const std::string dir = "models/" + model;
  runtime::SessionOptions options;
  options.device = device;
  options.precision = precision;
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
    EXPECT_EQ(testing_util::CompareTensors(outputs->at(i).tensor, expected[i], tolerance), "")
        << "output " << outputs->at(i).name;
  }
}

class SmallModelTest : public ::testing::TestWithParam<std::string> {};

// ORT computes the SVMs of sklearn_ml_ops in float32: a score that cancels to about 5e-4 differs
// from onnxrun's float64 one by 1.4e-6.
TEST_P(SmallModelTest, MatchesOnnxRuntime) {
  const double atol = GetParam() == "sklearn_ml_ops" ? 1e-5 : 1e-6;
  ExpectMatchesOnnxRuntime(GetParam(), runtime::Device::kCpu, "fp32", {.rtol = 1e-4, .atol = atol});
}

INSTANTIATE_TEST_SUITE_P(Shipped, SmallModelTest, ::testing::ValuesIn(kModels));

class SmallModelGpuTest : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

// GPU fp32 sums in other orders than the CPU (atol 1e-5 at outputs of order 1); fp16 rounds every
// value (1e-2). A quantized model keeps float32 at fp16 and matches ORT bit for bit either way.
TEST_P(SmallModelGpuTest, MatchesOnnxRuntime) {
  if (!exec::CudaUnavailableReason().empty()) GTEST_SKIP() << exec::CudaUnavailableReason();
  const auto& [model, precision] = GetParam();
  const testing_util::Tolerance tolerance = precision == "fp16" ? testing_util::Tolerance{.rtol = 1e-2, .atol = 1e-2}
                                                                : testing_util::Tolerance{.rtol = 1e-4, .atol = 1e-5};
  ExpectMatchesOnnxRuntime(model, runtime::Device::kCuda, precision, tolerance);
}

INSTANTIATE_TEST_SUITE_P(Shipped, SmallModelGpuTest,
                         ::testing::Combine(::testing::ValuesIn(kModels),
                                            ::testing::Values(std::string("fp32"), std::string("fp16"))),
                         [](const auto& info) {
                           return absl::StrCat(std::get<0>(info.param), "_", std::get<1>(info.param));
                         });

}  // namespace
