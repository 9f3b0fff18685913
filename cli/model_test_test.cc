// Tests of onnxrun test's comparison rule, tolerance.json, model discovery and the reports.
#include "cli/model_test.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "cli/check.h"
#include "cli/test_report.h"
#include "gtest/gtest.h"

namespace cli {
namespace {

namespace fs = std::filesystem;

TEST(CompareOutputTest, WithinTolerancePasses) {
  const ir::Tensor want = ir::Tensor::FromFloats({1, 2, 0}, {3});
  const ir::Tensor got = ir::Tensor::FromFloats({1.0005f, 2, 5e-8f}, {3});
  const OutputComparison c = CompareOutput("y", got, want, {1e-3, 1e-7});
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.bad, 0);
  EXPECT_NEAR(c.max_abs, 5e-4, 1e-6);
  EXPECT_NEAR(c.max_rel, 5e-4, 1e-6);  // the element with want 0 counts in max_abs only
  EXPECT_EQ(c.worst, 0);               // no bad element: the largest |got - want|
}

TEST(CompareOutputTest, WorstElementIsFurthestBeyondTolerance) {
  const ir::Tensor want = ir::Tensor::FromFloats({100, 1, 1, 1}, {2, 2});
  const ir::Tensor got = ir::Tensor::FromFloats({100.15f, 1.3f, 1, 1.01f}, {2, 2});
  const OutputComparison c = CompareOutput("y", got, want, {1e-3, 0});
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.bad, 3);
  EXPECT_EQ(c.worst, 1);  // 0.299 beyond the tolerance; 100.15 only 0.05 beyond
  EXPECT_FLOAT_EQ(c.got, 1.3f);
  EXPECT_EQ(c.want, 1);
  EXPECT_NEAR(c.max_abs, 0.3, 1e-5);
  const std::string text = DescribeMismatch(c, {1e-3, 0});
  EXPECT_NE(text.find("output 'y': 3 of 4 elements differ; worst at flat index 1: got 1.3"), std::string::npos) << text;
}

TEST(CompareOutputTest, ScaledAtolJudgesSmallElementsByTheOutputsScale) {
  const ir::Tensor want = ir::Tensor::FromFloats({-10, 0.001f, 5}, {3});
  const ir::Tensor got = ir::Tensor::FromFloats({-10, 0.0015f, 5}, {3});
  EXPECT_FALSE(CompareOutput("y", got, want, {1e-3, 1e-7, 0}).ok());             // 5e-4 off where 1e-3 is wanted
  const OutputComparison c = CompareOutput("y", got, want, {1e-3, 1e-7, 1e-4});  // allows 1e-3 + ...
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.max_want, 10);
  const OutputComparison tight = CompareOutput("y", got, want, {1e-3, 1e-7, 1e-5});
  EXPECT_FALSE(tight.ok());
  EXPECT_NE(DescribeMismatch(tight, {1e-3, 1e-7, 1e-5}).find("scaled_atol 1e-05 x max|want| 10)"), std::string::npos)
      << DescribeMismatch(tight, {1e-3, 1e-7, 1e-5});
}

TEST(CompareOutputTest, NanMustMeetNanAndInfTheSameInf) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const ir::Tensor want = ir::Tensor::FromFloats({nan, inf, -inf}, {3});
  EXPECT_TRUE(CompareOutput("y", ir::Tensor::FromFloats({nan, inf, -inf}, {3}), want, {}).ok());
  const OutputComparison nan_missing = CompareOutput("y", ir::Tensor::FromFloats({0, inf, -inf}, {3}), want, {});
  EXPECT_EQ(nan_missing.bad, 1);
  EXPECT_EQ(nan_missing.worst, 0);
  EXPECT_TRUE(std::isinf(nan_missing.max_abs));
  EXPECT_EQ(CompareOutput("y", ir::Tensor::FromFloats({nan, -inf, -inf}, {3}), want, {}).bad, 1);
  // A NaN where a number is wanted fails at any tolerance.
  EXPECT_FALSE(
      CompareOutput("y", ir::Tensor::FromFloats({nan}, {1}), ir::Tensor::FromFloats({1}, {1}), {1e9, 1e9}).ok());
}

TEST(CompareOutputTest, IntegersCompareExactly) {
  const ir::Tensor want = ir::Tensor::FromInt64s({1, 2, 3});
  EXPECT_TRUE(CompareOutput("i", ir::Tensor::FromInt64s({1, 2, 3}), want, {1, 1}).ok());
  const OutputComparison c = CompareOutput("i", ir::Tensor::FromInt64s({1, 2, 4}), want, {1, 1});
  EXPECT_EQ(c.bad, 1);
  EXPECT_EQ(c.worst, 2);
}

TEST(CompareOutputTest, StringsCompareExactly) {
  const ir::Tensor want = ir::Tensor::FromStrings({"monday", "tuesday", ""});
  EXPECT_TRUE(CompareOutput("s", ir::Tensor::FromStrings({"monday", "tuesday", ""}), want, {1, 1}).ok());
  const OutputComparison c = CompareOutput("s", ir::Tensor::FromStrings({"monday", "Tuesday", "x"}), want, {1, 1});
  EXPECT_EQ(c.bad, 2);
  EXPECT_EQ(c.worst, 1);
  EXPECT_EQ(DescribeMismatch(c, {}),
            "output 's': 2 of 3 strings differ; first at flat index 1: got \"Tuesday\", want \"tuesday\"");
  EXPECT_EQ(CompareOutput("s", ir::Tensor::FromFloats({1, 2, 3}, {3}), want, {}).mismatch,
            "dtype float32 != expected string");
}

TEST(CompareOutputTest, DtypeAndShapeMismatch) {
  const ir::Tensor want = ir::Tensor::FromFloats({1, 2}, {2});
  EXPECT_EQ(CompareOutput("y", ir::Tensor::FromInt64s({1, 2}), want, {}).mismatch, "dtype int64 != expected float32");
  const OutputComparison c = CompareOutput("y", ir::Tensor::FromFloats({1, 2}, {1, 2}), want, {});
  EXPECT_EQ(c.mismatch, "shape [1,2] != expected [2]");
  EXPECT_EQ(DescribeMismatch(c, {}), "output 'y': shape [1,2] != expected [2]");
}

TEST(ToleranceTest, AModelWithSixteenBitValuesComputesInThatType) {
  exec::Plan plan;
  plan.graph.AddValue("x", ir::TensorType{ir::DType::kFloat32});
  EXPECT_EQ(ComputePrecision("fp32", plan), "fp32");
  EXPECT_EQ(ComputePrecision("tf32", plan), "tf32");
  plan.graph.AddValue("h", ir::TensorType{ir::DType::kBFloat16});
  EXPECT_EQ(ComputePrecision("fp32", plan), "bf16");
  plan.graph.AddValue("w", ir::TensorType{ir::DType::kFloat16});
  EXPECT_EQ(ComputePrecision("tf32", plan), "fp16");
  EXPECT_EQ(ComputePrecision("bf16", plan), "bf16");  // a 16-bit run keeps its own precision
}

TEST(ToleranceTest, DefaultsAndFile) {
  EXPECT_EQ(DefaultTolerance("fp32").rtol, 1e-3);
  EXPECT_EQ(DefaultTolerance("fp32").atol, 1e-7);
  EXPECT_GT(DefaultTolerance("fp16").rtol, DefaultTolerance("tf32").rtol);
  // TF32 operands have fp16's mantissa: over a network, fp16's scaled tolerance (--check's too).
  EXPECT_EQ(DefaultTolerance("tf32").scaled_atol, DefaultTolerance("fp16").scaled_atol);
  EXPECT_EQ(ToleranceFor("tf32"), ToleranceFor("fp16"));
  EXPECT_LT(ToleranceFor("fp32"), ToleranceFor("tf32"));
  const fs::path dir = fs::path(testing::TempDir()) / "tolerance";
  fs::create_directories(dir);
  Tolerance t = DefaultTolerance("fp32");
  EXPECT_TRUE(ReadToleranceFile((dir / "absent.json").string(), &t).ok());
  EXPECT_EQ(t.rtol, 1e-3);
  std::ofstream(dir / "t.json") << "{\n  \"atol\": 0.5, \"scaled_atol\": 0.02\n}\n";
  EXPECT_TRUE(ReadToleranceFile((dir / "t.json").string(), &t).ok());
  EXPECT_EQ(t.rtol, 1e-3);
  EXPECT_EQ(t.atol, 0.5);
  EXPECT_EQ(t.scaled_atol, 0.02);
  std::ofstream(dir / "bad.json") << "{\"rtol\": \"loose\"}";
  EXPECT_EQ(ReadToleranceFile((dir / "bad.json").string(), &t).code(), absl::StatusCode::kInvalidArgument);
}

TEST(FindModelsTest, FoldersOfFoldersByName) {
  const fs::path root = fs::path(testing::TempDir()) / "zoo";
  fs::create_directories(root / "b" / "test_data_set_0");
  fs::create_directories(root / "group" / "a");
  fs::create_directories(root / "empty");
  std::ofstream(root / "b" / "model.onnx") << "x";
  std::ofstream(root / "group" / "a" / "model.onnx") << "x";
  absl::StatusOr<std::vector<ModelEntry>> models = FindModels(root.string());
  ASSERT_TRUE(models.ok()) << models.status();
  ASSERT_EQ(models->size(), 2);
  EXPECT_EQ((*models)[0].name, "zoo/b");
  EXPECT_EQ((*models)[1].name, "zoo/group/a");
  models = FindModels((root / "b").string());
  ASSERT_TRUE(models.ok());
  EXPECT_EQ((*models)[0].name, "b");
  models = FindModels((root / "b" / "model.onnx").string());
  ASSERT_TRUE(models.ok());
  EXPECT_EQ((*models)[0].name, "b");
  EXPECT_EQ(FindModels((root / "empty").string()).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(FindModels((root / "nope").string()).status().code(), absl::StatusCode::kNotFound);
}

TEST(TestModelTest, BadModelIsOneErrorPerPrecision) {
  const fs::path dir = fs::path(testing::TempDir()) / "broken";
  fs::create_directories(dir);
  std::ofstream(dir / "model.onnx") << "not a model";
  ModelTestOptions options;
  options.device = runtime::Device::kCpu;
  options.precisions = {"fp32", "fp16"};
  const std::vector<CaseResult> results = TestModel({(dir / "model.onnx").string(), "broken"}, options);
  ASSERT_EQ(results.size(), 2);
  for (const CaseResult& r : results) {
    EXPECT_EQ(r.outcome, Outcome::kError);
    EXPECT_EQ(r.data_set, "load");
    EXPECT_EQ(r.device, "cpu");
    EXPECT_FALSE(r.error.ok());
  }
  EXPECT_NE(JUnitXml(results, 0).find("<testsuites name=\"onnxrun test\" tests=\"2\" failures=\"0\" errors=\"2\""),
            std::string::npos);
  EXPECT_NE(SummaryTable(results, 0).find("0 passed, 0 failed, 2 errors (2 cases, 1 model)"), std::string::npos);
}

TEST(ReportTest, EscapesXmlAndJson) {
  CaseResult r;
  r.model = "a<b>&\"c\"";
  r.outcome = Outcome::kFail;
  r.message = "output 'y': got \"1\"\n";
  r.max_abs = std::numeric_limits<double>::infinity();
  const std::string xml = JUnitXml({r}, 0);
  EXPECT_NE(xml.find("name=\"a&lt;b&gt;&amp;&quot;c&quot;\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("message=\"output 'y': got &quot;1&quot;&#10;\""), std::string::npos) << xml;
  const std::string json = JsonReport({r}, 0);
  EXPECT_NE(json.find("\"model\": \"a<b>&\\\"c\\\"\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"max_abs\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("got \\\"1\\\"\\u000a"), std::string::npos) << json;
}

}  // namespace
}  // namespace cli
