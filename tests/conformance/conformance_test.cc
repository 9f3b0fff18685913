// ONNX backend conformance on the CPU: every case of libonnx-testdata's node, pytorch-converted,
// pytorch-operator and simple suites runs through runtime::Session and is compared with ONNX's stored outputs.
// A case is skipped only when its model uses an op outside onnxrun's op set; cases listed in
// expected_failures.txt (each with a reason) are skipped, and fail if they start passing.
// Set ONNX_TESTDATA_DIR to use another copy of the data, and ONNXRUN_TEST_DEVICE=cuda to run the
// same cases on the GPU backend (fp32, no TF32; skipped when no GPU is usable).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "runtime/session.h"
#include "tests/util/compare.h"

namespace {

namespace fs = std::filesystem;

struct Case {
  std::string suite;  // node, pytorch-converted, pytorch-operator
  std::string name;   // test_conv_with_strides
  fs::path dir;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.suite << "/" << c.name; }

std::string DataRoot() {
  const char* env = std::getenv("ONNX_TESTDATA_DIR");
  return env ? env : "/usr/share/libonnx-testdata/data";
}

std::vector<Case> DiscoverCases() {
  std::vector<Case> cases;
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    fs::path root = fs::path(DataRoot()) / suite;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (fs::exists(entry.path() / "model.onnx")) {
        cases.push_back({suite, entry.path().filename().string(), entry.path()});
      }
    }
  }
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.dir < b.dir; });
  return cases;
}

// case name -> reason, from expected_failures.txt ("name  reason..." per line, # comments).
const std::map<std::string, std::string>& ExpectedFailures() {
  static const auto* table = [] {
    auto* map = new std::map<std::string, std::string>();
    const char* env = std::getenv("ONNXRUN_EXPECTED_FAILURES");
    std::ifstream file(env ? env : "tests/conformance/expected_failures.txt");
    std::string line;
    while (std::getline(file, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream in(line);
      std::string name, reason;
      in >> name;
      std::getline(in, reason);
      (*map)[name] = reason.substr(std::min(reason.find_first_not_of(' '), reason.size()));
    }
    return map;
  }();
  return *table;
}

std::vector<fs::path> NumberedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / absl::StrCat(prefix, i, ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

runtime::Device TestDevice() {
  const char* env = std::getenv("ONNXRUN_TEST_DEVICE");
  return env != nullptr && std::string(env) == "cuda" ? runtime::Device::kCuda : runtime::Device::kCpu;
}

// Runs one case; "" on success, else why it failed. Sets *unsupported_op for op-set skips.
std::string RunCase(const Case& c, std::string* unsupported_op) {
  runtime::SessionOptions options;
  options.device = TestDevice();
  auto session = runtime::Session::Create((c.dir / "model.onnx").string(), options);
  if (!session.ok()) {
    if (absl::IsUnimplemented(session.status()) &&
        absl::StrContains(session.status().message(), "unsupported ops")) {
      *unsupported_op = std::string(session.status().message());
      return "";
    }
    return absl::StrCat("Create: ", session.status().ToString());
  }
  const fs::path data = c.dir / "test_data_set_0";
  std::vector<runtime::NamedTensor> inputs;
  std::vector<fs::path> input_files = NumberedFiles(data, "input_");
  if (input_files.size() != (*session)->inputs().size()) {
    return absl::StrCat(input_files.size(), " input files for ", (*session)->inputs().size(), " inputs");
  }
  for (size_t i = 0; i < input_files.size(); ++i) {
    auto t = importer::ReadTensorProtoFile(input_files[i].string());
    if (!t.ok()) return t.status().ToString();
    inputs.push_back({(*session)->inputs()[i].name, *t});
  }
  auto outputs = (*session)->Run(inputs);
  if (!outputs.ok()) return absl::StrCat("Run: ", outputs.status().ToString());
  std::vector<fs::path> output_files = NumberedFiles(data, "output_");
  if (output_files.size() != outputs->size()) {
    return absl::StrCat(outputs->size(), " outputs, ", output_files.size(), " expected");
  }
  for (size_t i = 0; i < output_files.size(); ++i) {
    auto expected = importer::ReadTensorProtoFile(output_files[i].string());
    if (!expected.ok()) return expected.status().ToString();
    std::string diff = testing_util::CompareTensors((*outputs)[i].tensor, *expected, {});
    if (!diff.empty()) return absl::StrCat("output ", i, " '", (*outputs)[i].name, "': ", diff);
  }
  return "";
}

struct Tally {
  int passed = 0, failed = 0, skipped_ops = 0, expected_failures = 0;
};
std::map<std::string, Tally>& Tallies() {
  static auto* tallies = new std::map<std::string, Tally>();
  return *tallies;
}

class ConformanceTest : public ::testing::TestWithParam<Case> {};

TEST_P(ConformanceTest, MatchesStoredOutputs) {
  const Case& c = GetParam();
  if (TestDevice() == runtime::Device::kCuda && !exec::CudaUnavailableReason().empty()) {
    GTEST_SKIP() << "ONNXRUN_TEST_DEVICE=cuda: " << exec::CudaUnavailableReason();
  }
  Tally& tally = Tallies()[c.suite];
  std::string unsupported;
  std::string error = RunCase(c, &unsupported);
  if (!unsupported.empty()) {
    ++tally.skipped_ops;
    GTEST_SKIP() << "op not in onnxrun's set: " << unsupported;
  }
  auto expected = ExpectedFailures().find(c.name);
  if (expected != ExpectedFailures().end()) {
    if (error.empty()) {
      ++tally.failed;
      FAIL() << c.name << " passes now: remove it from tests/conformance/expected_failures.txt";
    }
    ++tally.expected_failures;
    GTEST_SKIP() << "expected failure (" << expected->second << "): " << error;
  }
  if (error.empty()) {
    ++tally.passed;
  } else {
    ++tally.failed;
  }
  EXPECT_EQ(error, "") << c.dir;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = absl::StrCat(info.param.suite, "_", info.param.name);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Onnx, ConformanceTest, ::testing::ValuesIn(DiscoverCases()), CaseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConformanceTest);

// Prints the per-suite table after all cases ran.
class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("\n%-20s %8s %8s %14s %12s\n", "suite", "passed", "failed", "skipped(op)", "expected-fail");
    for (const auto& [suite, t] : Tallies()) {
      std::printf("%-20s %8d %8d %14d %12d\n", suite.c_str(), t.passed, t.failed, t.skipped_ops,
                  t.expected_failures);
    }
  }
};

const auto* const kSummary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

}  // namespace
