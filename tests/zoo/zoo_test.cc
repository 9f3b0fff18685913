// Real architectures end to end: each torchvision CNN of the zoo (//models:zoo, exported by
// models/export_zoo.py with seeded random weights and BatchNormalization kept) and each recurrent,
// attention and LRN network (//models:seq_zoo, models/export_seq_zoo.py) runs on the CPU
// through runtime::Session (by onnxrun test's library, cli/model_test.h, which reads every
// input_<i>.pb in graph-input order) and matches torch's output on every element, with
// max|got - want| / max|want| <= 1e-4 over the whole output for the fp32 plan (partitioned, and the
// unfused one-step-per-node reference plan) and <= 1e-2 for the fp16 plan, <= 8e-2 for the bf16 plan (fp16's limit x 8,
// the ratio of their unit roundoffs).
//
// On the GPU machine: ONNXRUN_TEST_DEVICE=cuda runs the same models on the GPU (partitioned fp32,
// tf32 with fp16's limit 1e-2 as --check has it, fp16) from ONNXRUN_ZOO_DIR (default models/zoo),
// skipping when no GPU.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "cli/check.h"
#include "cli/model_test.h"
#include "gtest/gtest.h"
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
                             {"bf16", "bf16", true, 8e-2},
                             {"tf32", "tf32", true, cli::ToleranceFor("tf32")}};

bool OnGpu() {
  const char* device = std::getenv("ONNXRUN_TEST_DEVICE");
  return device != nullptr && std::string(device) == "cuda";
}

void ExpectMatchesTorch(const std::string& model, const Variant& variant, const cli::CaseResult& r);

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
  // Through onnxrun test's library: max|got - want| <= limit * max|want| is rtol 0, atol 0,
  // scaled_atol = limit; torch's output only (`onnxrun test` on the GPU adds the CPU comparison).
  cli::ModelTestOptions options;  // the default plan for the precision
  options.device = OnGpu() ? runtime::Device::kCuda : runtime::Device::kCpu;
  options.precisions = {variant.precision};
  options.session.fuse = variant.fuse;
  options.rtol = 0;
  options.atol = 0;
  options.scaled_atol = variant.max_relative_error;
  options.max_data_sets = 4;  // yolo_dynamic has two input sizes, run by one session
  options.gpu_vs_cpu = false;
  const std::vector<cli::CaseResult> results = cli::TestModel({dir + "/model.onnx", model}, options);
  ASSERT_GE(results.size(), 1u);
  for (const cli::CaseResult& r : results) ExpectMatchesTorch(model, variant, r);
}

void ExpectMatchesTorch(const std::string& model, const Variant& variant, const cli::CaseResult& r) {
  ASSERT_NE(r.outcome, cli::Outcome::kError) << r.message;
  ASSERT_GT(r.max_want, 0) << "torch's output is all zero: the reference checks nothing";
  const std::string summary =
      absl::StrCat(model, " ", r.data_set, " ", variant.name, ": max|got-want|/max|want| = ", r.max_scaled, " (",
                   r.max_abs, " / ", r.max_want, "); worst element ", r.worst_index, ": got ", r.worst_got, ", want ",
                   r.worst_want, " (relative ", r.worst_want == 0 ? INFINITY : r.max_abs / std::fabs(r.worst_want),
                   "); create+load ", r.load_seconds, " s, run ", r.seconds, " s");
  std::cout << summary << std::endl;
  ::testing::Test::RecordProperty("max_relative_error", absl::StrCat(r.max_scaled));
  EXPECT_EQ(r.outcome, cli::Outcome::kPass) << summary << "\n" << r.message;
}

INSTANTIATE_TEST_SUITE_P(
    Torchvision, ZooTest,
    ::testing::Combine(::testing::Values("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1",
                                         "vgg11_bn", "densenet121", "vit_b_16", "efficientnet_b0", "lstm", "gru",
                                         "alexnet_lrn", "transformer_encoder", "yolo_dynamic"),
                       ::testing::ValuesIn(kVariants)),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

}  // namespace
