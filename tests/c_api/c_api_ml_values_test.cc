// The C API on scikit-learn models: string tensors in (ONNXRUN_STRING, an array of C strings) and
// out, ZipMap's sequence of maps (onnxrun_values_kind / _map_count / _get_map) and map inputs
// (onnxrun_session_run_with_maps), against ONNX Runtime's stored outputs of models/sklearn_ml_ops,
// tests/zipmap/cases and tests/ml_maps/cases, every element and map.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "importer/value_proto.h"
#include "onnxrun/onnxrun_c.h"
#include "tests/util/compare.h"

namespace {

std::string Consume(OnnxrunStatus* status) {
  std::string message = status == nullptr ? "" : onnxrun_status_message(status);
  onnxrun_status_free(status);
  return message;
}

// An ir::Tensor from a borrowed C view (strings copied out of their C array).
ir::Tensor FromC(const OnnxrunTensor& t) {
  const std::vector<int64_t> dims(t.dims, t.dims + t.rank);
  ir::Tensor out = *ir::Tensor::Create(static_cast<ir::DType>(t.dtype), dims);
  if (t.dtype == ONNXRUN_STRING) {
    for (int64_t i = 0; i < out.num_elements(); ++i)
      out.mutable_strings()[i] = static_cast<const char* const*>(t.data)[i];
  } else {
    std::memcpy(out.raw_data(), t.data, out.byte_size());
  }
  return out;
}

// Runs `dir`/model.onnx through the C API on its test_data_set_0 inputs and compares every output.
void ExpectMatchesStoredOutputs(const std::string& dir) {
  SCOPED_TRACE(dir);
  const OnnxrunOptions options = {ONNXRUN_DEVICE_CPU, "fp32", 0};
  OnnxrunSession* session = nullptr;
  ASSERT_EQ(Consume(onnxrun_session_create((dir + "/model.onnx").c_str(), &options, &session)), "");
  std::vector<ir::Tensor> inputs;
  std::vector<std::vector<const char*>> string_ptrs(onnxrun_session_input_count(session));
  std::vector<OnnxrunTensor> views;
  for (size_t i = 0; i < onnxrun_session_input_count(session); ++i) {
    absl::StatusOr<ir::Tensor> x =
        importer::ReadTensorProtoFile(dir + "/test_data_set_0/input_" + std::to_string(i) + ".pb");
    ASSERT_TRUE(x.ok()) << x.status();
    inputs.push_back(*std::move(x));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Tensor& x = inputs[i];
    const void* data = x.raw_data();
    if (x.strings() != nullptr) {
      for (int64_t e = 0; e < x.num_elements(); ++e) string_ptrs[i].push_back(x.strings()[e].c_str());
      data = string_ptrs[i].data();
    }
    views.push_back({onnxrun_session_input_name(session, i), static_cast<OnnxrunDType>(x.dtype()), x.shape().data(),
                     x.shape().size(), data});
  }
  OnnxrunValues* outputs = nullptr;
  ASSERT_EQ(Consume(onnxrun_session_run(session, views.data(), views.size(), &outputs)), "");
  for (size_t i = 0; i < onnxrun_values_count(outputs); ++i) {
    const std::string path = dir + "/test_data_set_0/output_" + std::to_string(i) + ".pb";
    const std::string name = onnxrun_session_output_name(session, i);
    if (onnxrun_values_kind(outputs, i) == ONNXRUN_VALUE_MAPS) {
      absl::StatusOr<ir::Tensor> want = importer::ReadValueFile(path, ir::TensorType::Sequence(ir::DType::kFloat32));
      ASSERT_TRUE(want.ok()) << want.status();
      size_t count = 0;
      ASSERT_EQ(Consume(onnxrun_values_map_count(outputs, i, &count)), "");
      ASSERT_EQ(count, want->elements().size()) << name;
      for (size_t j = 0; j < count; ++j) {
        OnnxrunTensor keys{}, values{};
        ASSERT_EQ(Consume(onnxrun_values_get_map(outputs, i, j, &keys, &values)), "");
        const ir::Tensor& map = want->elements()[j];
        EXPECT_EQ(testing_util::CompareTensors(FromC(keys), map.map_keys(), {}), "") << name << "[" << j << "]";
        EXPECT_EQ(testing_util::CompareTensors(FromC(values), map.map_values(), {.rtol = 1e-4, .atol = 1e-6}), "")
            << name << "[" << j << "]";
      }
      continue;
    }
    OnnxrunTensor got{};
    ASSERT_EQ(Consume(onnxrun_values_get(outputs, i, &got)), "") << name;
    absl::StatusOr<ir::Tensor> want = importer::ReadTensorProtoFile(path);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(testing_util::CompareTensors(FromC(got), *want, {.rtol = 1e-4, .atol = 1e-5}), "") << name;
  }
  onnxrun_values_free(outputs);
  onnxrun_session_free(session);
}

TEST(CApiMlValues, StringsInAndOut) { ExpectMatchesStoredOutputs("models/sklearn_ml_ops"); }

TEST(CApiMlValues, ZipMapIntLabels) { ExpectMatchesStoredOutputs("tests/zipmap/cases/logreg_int_labels"); }

TEST(CApiMlValues, ZipMapStringLabels) { ExpectMatchesStoredOutputs("tests/zipmap/cases/forest_string_labels"); }

TEST(CApiMlValues, ZipMapByHand) { ExpectMatchesStoredOutputs("tests/zipmap/cases/handwritten"); }

TEST(CApiMlValues, MapAccessorsRefuseOtherOutputsAndBadIndices) {
  const OnnxrunOptions options = {ONNXRUN_DEVICE_CPU, "fp32", 0};
  OnnxrunSession* session = nullptr;
  ASSERT_EQ(Consume(onnxrun_session_create("tests/zipmap/cases/handwritten/model.onnx", &options, &session)), "");
  const float scores[8] = {1, 2, 3, 4, 5, 6, 7, 8}, row[3] = {1, 2, 3};
  const int64_t scores_dims[2] = {2, 4}, row_dims[1] = {3};
  const OnnxrunTensor inputs[2] = {{"scores", ONNXRUN_FLOAT32, scores_dims, 2, scores},
                                   {"row", ONNXRUN_FLOAT32, row_dims, 1, row}};
  OnnxrunValues* outputs = nullptr;
  ASSERT_EQ(Consume(onnxrun_session_run(session, inputs, 2, &outputs)), "");
  OnnxrunTensor tensor{}, keys{}, values{};
  EXPECT_NE(Consume(onnxrun_values_get(outputs, 0, &tensor)).find("seq(map(string,float32)) of 2"), std::string::npos);
  EXPECT_NE(Consume(onnxrun_values_get_map(outputs, 0, 2, &keys, &values)).find("map 2 of 2"), std::string::npos);
  EXPECT_EQ(onnxrun_values_kind(outputs, 5), ONNXRUN_VALUE_OTHER);
  size_t count = 0;
  EXPECT_NE(Consume(onnxrun_values_map_count(outputs, 5, &count)).find("not a sequence of maps"), std::string::npos);
  ASSERT_EQ(Consume(onnxrun_values_get_map(outputs, 1, 0, &keys, &values)), "");
  ASSERT_EQ(keys.dtype, ONNXRUN_INT64);
  EXPECT_EQ(static_cast<const int64_t*>(keys.data)[2], 7);
  EXPECT_EQ(static_cast<const float*>(values.data)[2], 3.0f);
  onnxrun_values_free(outputs);
  onnxrun_session_free(session);
}

TEST(CApiMlValues, MapAccessorsRefuseATensorOutputAndStringsOnTheDevice) {
  const OnnxrunOptions options = {ONNXRUN_DEVICE_CPU, "fp32", 0};
  OnnxrunSession* session = nullptr;
  ASSERT_EQ(Consume(onnxrun_session_create("tests/zipmap/cases/forest_string_labels/model.onnx", &options, &session)),
            "");
  const float x[6] = {0.5f, -1, 2, 0, 1, -0.5f};
  const int64_t dims[2] = {1, 6};
  const OnnxrunTensor input = {"X", ONNXRUN_FLOAT32, dims, 2, x};
  OnnxrunValues* outputs = nullptr;
  ASSERT_EQ(Consume(onnxrun_session_run(session, &input, 1, &outputs)), "");
  ASSERT_EQ(onnxrun_values_kind(outputs, 0), ONNXRUN_VALUE_TENSOR);  // the label, a string tensor
  OnnxrunTensor label{}, keys{}, values{};
  ASSERT_EQ(Consume(onnxrun_values_get(outputs, 0, &label)), "");
  ASSERT_EQ(label.dtype, ONNXRUN_STRING);
  const std::string name = static_cast<const char* const*>(label.data)[0];
  EXPECT_TRUE(name == "setosa" || name == "versicolor" || name == "virginica") << name;
  EXPECT_NE(Consume(onnxrun_values_get_map(outputs, 0, 0, &keys, &values)).find("not a sequence of maps"),
            std::string::npos);
  onnxrun_values_free(outputs);
  // A string tensor is host memory only; a NULL element is an error, not a read.
  const char* strings[2] = {"a", nullptr};
  const int64_t string_dims[1] = {2};
  const OnnxrunTensor bad = {"X", ONNXRUN_STRING, string_dims, 1, strings};
  EXPECT_NE(Consume(onnxrun_session_run(session, &bad, 1, &outputs)).find("string 1 is NULL"), std::string::npos);
  EXPECT_NE(Consume(onnxrun_session_run_device(session, &bad, 1, nullptr, &outputs)), "");
  onnxrun_session_free(session);
}

// A C view of a host tensor (string elements through `ptrs`, which must outlive the view).
OnnxrunTensor ToC(const ir::Tensor& t, std::vector<const char*>& ptrs) {
  const void* data = t.raw_data();
  if (t.strings() != nullptr) {
    for (int64_t e = 0; e < t.num_elements(); ++e) ptrs.push_back(t.strings()[e].c_str());
    data = ptrs.data();
  }
  return {nullptr, static_cast<OnnxrunDType>(t.dtype()), t.shape().data(), t.shape().size(), data};
}

// `dir`'s one map input (keys of `key`, float values; as float64 when `as_double`, which the C API
// converts) through onnxrun_session_run_with_maps; output 0 against the stored one.
void ExpectMapCaseMatches(const std::string& dir, ir::DType key, bool as_double) {
  SCOPED_TRACE(dir);
  const OnnxrunOptions options = {ONNXRUN_DEVICE_CPU, "fp32", 0};
  OnnxrunSession* session = nullptr;
  ASSERT_EQ(Consume(onnxrun_session_create((dir + "/model.onnx").c_str(), &options, &session)), "");
  absl::StatusOr<ir::Tensor> map =
      importer::ReadValueFile(dir + "/test_data_set_0/input_0.pb", ir::TensorType::Map(key, ir::DType::kFloat32));
  ASSERT_TRUE(map.ok()) << map.status();
  ir::Tensor values = map->map_values();
  if (as_double) {
    values = *ir::Tensor::Create(ir::DType::kFloat64, map->map_values().shape());
    for (int64_t i = 0; i < values.num_elements(); ++i) values.data<double>()[i] = map->map_values().GetAsDouble(i);
  }
  std::vector<const char*> key_ptrs, value_ptrs;
  const OnnxrunMap input = {onnxrun_session_input_name(session, 0), ToC(map->map_keys(), key_ptrs),
                            ToC(values, value_ptrs)};
  OnnxrunValues* outputs = nullptr;
  ASSERT_EQ(Consume(onnxrun_session_run_with_maps(session, nullptr, 0, &input, 1, &outputs)), "");
  OnnxrunTensor got{};
  ASSERT_EQ(Consume(onnxrun_values_get(outputs, 0, &got)), "");
  absl::StatusOr<ir::Tensor> want = importer::ReadTensorProtoFile(dir + "/test_data_set_0/output_0.pb");
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(testing_util::CompareTensors(FromC(got), *want, {.rtol = 1e-4, .atol = 1e-5}), "");
  onnxrun_values_free(outputs);
  onnxrun_session_free(session);
}

TEST(CApiMlValues, MapInputs) {
  ExpectMapCaseMatches("tests/ml_maps/cases/dictvectorizer_string_keys", ir::DType::kString, false);
  ExpectMapCaseMatches("tests/ml_maps/cases/dictvectorizer_string_keys", ir::DType::kString, true);
  ExpectMapCaseMatches("tests/ml_maps/cases/dictvectorizer_tree", ir::DType::kString, true);
  ExpectMapCaseMatches("tests/ml_maps/cases/castmap_sparse_string", ir::DType::kInt64, false);
  ExpectMapCaseMatches("tests/ml_maps/cases/castmap_dense_int64", ir::DType::kInt64, true);
}

TEST(CApiMlValues, BadMapInputsSayWhy) {
  const OnnxrunOptions options = {ONNXRUN_DEVICE_CPU, "fp32", 0};
  OnnxrunSession* session = nullptr;
  ASSERT_EQ(Consume(onnxrun_session_create("tests/ml_maps/cases/castmap_dense_float/model.onnx", &options, &session)),
            "");
  const int64_t keys[2] = {3, 1}, two[1] = {2}, three[1] = {3};
  const float values[3] = {1, 2, 3};
  OnnxrunMap map = {"X", {nullptr, ONNXRUN_INT64, two, 1, keys}, {nullptr, ONNXRUN_FLOAT32, three, 1, values}};
  OnnxrunValues* outputs = nullptr;
  EXPECT_NE(Consume(onnxrun_session_run_with_maps(session, nullptr, 0, &map, 1, &outputs)).find("as many values"),
            std::string::npos);
  map.values.dims = two;
  map.name = nullptr;
  EXPECT_NE(Consume(onnxrun_session_run_with_maps(session, nullptr, 0, &map, 1, &outputs)).find("no name"),
            std::string::npos);
  EXPECT_NE(Consume(onnxrun_session_run_with_maps(session, nullptr, 0, nullptr, 1, &outputs)).find("maps is NULL"),
            std::string::npos);
  const float x[2] = {1, 2};
  const OnnxrunTensor tensor = {"X", ONNXRUN_FLOAT32, two, 1, x};
  EXPECT_NE(Consume(onnxrun_session_run(session, &tensor, 1, &outputs)).find("expects map(int64,float32)"),
            std::string::npos);
  onnxrun_session_free(session);
}

}  // namespace
