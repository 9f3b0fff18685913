// Real architectures end to end: each torchvision CNN of the zoo (//models:zoo, exported by
// models/export_zoo.py with seeded random weights and BatchNormalization kept) and each recurrent,
// attention and LRN network (//models:seq_zoo, models/export_seq_zoo.py) runs on the CPU
// through runtime::Session and matches torch's output on every element, with
// max|got - want| / max|want| <= 1e-4 over the whole output for the fp32 plan (partitioned, and the
// unfused one-step-per-node reference plan) and <= 1e-2 for the fp16 plan.
//
// On the GPU machine: ONNXRUN_TEST_DEVICE=cuda runs the same models on the GPU (partitioned fp32,
// tf32 with limit 1e-3, fp16) from ONNXRUN_ZOO_DIR (default models/zoo), skipping when no GPU.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "ir/shape.h"
#include "runtime/session.h"

namespace {

// The plan variants: precision and whether the partitioner fuses.
struct Variant {
  std::string name;
  std::string precision;
  bool fuse;
  double max_relative_error;
};
const Variant kVariants[] = {{"fp32", "fp32", true, 1e-4},
                             {"fp32_unfused", "fp32", false, 1e-4},
                             {"fp16", "fp16", true, 1e-2},
                             {"tf32", "tf32", true, 1e-3}};

bool OnGpu() {
  const char* device = std::getenv("ONNXRUN_TEST_DEVICE");
  return device != nullptr && std::string(device) == "cuda";
}

struct Error {
  double max_abs_diff = 0;  // max |got - want|
  double max_abs_want = 0;  // max |want|
  int64_t worst = -1;       // flat index of the largest |got - want|
  bool all_finite = true;   // got has no NaN/Inf where want is finite
};

Error MeasureError(const ir::Tensor& got, const ir::Tensor& want) {
  Error error;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double g = got.GetAsDouble(i), w = want.GetAsDouble(i);
    if (!std::isfinite(g)) error.all_finite = false;
    const double diff = std::fabs(g - w);
    if (error.worst < 0 || diff > error.max_abs_diff) {
      error.max_abs_diff = diff;
      error.worst = i;
    }
    error.max_abs_want = std::max(error.max_abs_want, std::fabs(w));
  }
  return error;
}

class ZooTest : public ::testing::TestWithParam<std::tuple<std::string, Variant>> {};

TEST_P(ZooTest, MatchesTorch) {
  const std::string& model = std::get<0>(GetParam());
  const Variant& variant = std::get<1>(GetParam());
  // The CPU runs fp32 (fused and unfused) and fp16; the GPU fp32, fp16 and tf32 (TF32 tensor cores).
  if (OnGpu() ? variant.name == "fp32_unfused" : variant.name == "tf32") GTEST_SKIP() << "not on this device";
  if (OnGpu() && !exec::CudaUnavailableReason().empty()) GTEST_SKIP() << exec::CudaUnavailableReason();
  const char* zoo = std::getenv("ONNXRUN_ZOO_DIR");
  const std::string dir = std::string(zoo != nullptr ? zoo : "models/zoo") + "/" + model;
  if (model == "efficientnet_b0" && !std::filesystem::exists(dir)) {
    GTEST_SKIP() << "efficientnet_b0 is exported only when named (export_zoo.py EXTRA_MODELS)";
  }
  runtime::SessionOptions options;  // the default plan for the precision
  options.device = OnGpu() ? runtime::Device::kCuda : runtime::Device::kCpu;
  options.precision = variant.precision;
  options.fuse = variant.fuse;
  const auto start = std::chrono::steady_clock::now();
  auto session = runtime::Session::Create(dir + "/model.onnx", options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_EQ((*session)->outputs().size(), 1u);
  std::vector<runtime::NamedTensor> inputs;  // input_<i>.pb in graph-input order
  for (size_t i = 0; i < (*session)->inputs().size(); ++i) {
    auto input = importer::ReadTensorProtoFile(absl::StrCat(dir, "/test_data_set_0/input_", i, ".pb"));
    ASSERT_TRUE(input.ok()) << input.status();
    inputs.push_back({(*session)->inputs()[i].name, *std::move(input)});
  }
  auto expected = importer::ReadTensorProtoFile(dir + "/test_data_set_0/output_0.pb");
  ASSERT_TRUE(expected.ok()) << expected.status();
  const auto created = std::chrono::steady_clock::now();

  auto outputs = (*session)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  const auto ran = std::chrono::steady_clock::now();
  ASSERT_EQ(outputs->size(), 1u);
  const ir::Tensor& got = outputs->at(0).tensor;
  ASSERT_EQ(got.dtype(), ir::DType::kFloat32);
  ASSERT_EQ(expected->dtype(), ir::DType::kFloat32);
  ASSERT_EQ(got.shape(), expected->shape())
      << ir::ShapeToString(got.shape()) << " vs torch's " << ir::ShapeToString(expected->shape());

  const Error error = MeasureError(got, *expected);
  ASSERT_GT(error.max_abs_want, 0) << "torch's output is all zero: the reference checks nothing";
  const double relative = error.max_abs_diff / error.max_abs_want;
  const double want_worst = expected->GetAsDouble(error.worst);
  const std::string summary = absl::StrCat(
      model, " ", variant.name, ": max|got-want|/max|want| = ", relative, " (", error.max_abs_diff, " / ",
      error.max_abs_want, "); worst element ", error.worst, ": got ", got.GetAsDouble(error.worst), ", want ",
      want_worst, " (relative ", want_worst == 0 ? INFINITY : error.max_abs_diff / std::fabs(want_worst),
      "); create+load ", std::chrono::duration<double>(created - start).count(), " s, run ",
      std::chrono::duration<double>(ran - created).count(), " s");
  std::cout << summary << std::endl;
  RecordProperty("max_relative_error", absl::StrCat(relative));
  EXPECT_TRUE(error.all_finite) << summary;
  EXPECT_LE(relative, variant.max_relative_error) << summary;
}

INSTANTIATE_TEST_SUITE_P(Torchvision, ZooTest,
                         ::testing::Combine(::testing::Values("resnet18", "resnet50", "mobilenet_v2",
                                                              "mobilenet_v3_small", "squeezenet1_1", "vgg11_bn",
                                                              "densenet121", "efficientnet_b0", "lstm", "gru",
                                                              "alexnet_lrn", "transformer_encoder"),
                                            ::testing::ValuesIn(kVariants)),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

}  // namespace
