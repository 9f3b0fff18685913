// ONNX backend conformance on the CPU: every case of libonnx-testdata's node, pytorch-converted,
// pytorch-operator and simple suites runs through runtime::Session and is compared with ONNX's stored
// outputs by onnxrun test's library (cli/model_test.h), so `onnxrun test DATA/node` counts the same.
// A case is skipped only when its model uses an op outside onnxrun's op set; cases listed in
// expected_failures.txt (each with a reason) are skipped, and fail if they start passing; those whose
// reason starts with "random output" must run and match the stored dtypes and shapes.
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
#include "cli/model_test.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

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

// ONNX 1.23's node cases for opsets 18-24 (tests/conformance/onnx_1_23_node.tar.xz, made by
// make_onnx_1_23_cases.py), unpacked once into the test's temporary folder; "" when unavailable.
std::string Onnx123Root() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const char* env = std::getenv("ONNXRUN_ONNX_1_23_ARCHIVE");  // where the cwd is not the repo root
  const std::string archive = env != nullptr ? env : "tests/conformance/onnx_1_23_node.tar.xz";
  if (!fs::exists(archive)) return "";
  const std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/onnxrun_onnx_1_23");
  if (!fs::exists(dir + "/genall")) {
    fs::create_directories(dir);
    if (std::system(absl::StrCat("tar xJf ", archive, " -C ", dir).c_str()) != 0) return "";
  }
  return dir;
}

std::vector<Case> DiscoverCases() {
  std::vector<Case> cases;
  std::vector<std::pair<std::string, fs::path>> suites;
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    suites.push_back({suite, fs::path(DataRoot()) / suite});
  }
  if (std::string root = Onnx123Root(); !root.empty()) suites.push_back({"node-1.23", fs::path(root) / "genall"});
  for (const auto& [suite, root] : suites) {
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

// case name -> reason, from expected_failures.txt ("name  reason..." per line, # comments; a name
// prefixed "cuda:" applies to runs on the GPU only).
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

runtime::Device TestDevice() {
  const char* env = std::getenv("ONNXRUN_TEST_DEVICE");
  return env != nullptr && std::string(env) == "cuda" ? runtime::Device::kCuda : runtime::Device::kCpu;
}

// Whether a load error says one of ONNX's narrow types (float8, float6, float4, int4, int2 and their
// unsigned forms) is not supported where it is used (they are storage, Cast and Q/DQ types only):
// such a case is skipped like an unsupported op.
bool MentionsNarrowDType(const std::string& message) {
  if (!absl::StrContains(message, "unsupported") && !absl::StrContains(message, "not supported")) return false;
  for (int code = 17; code <= 28; ++code) {
    if (absl::StrContains(message, ir::DTypeName(static_cast<ir::DType>(code)))) return true;
  }
  return false;
}

// Runs one case through onnxrun test's library (cli/model_test.h: test_data_set_0, fp32, ONNX's
// rtol 1e-3 / atol 1e-7); "" on success, else why it failed. Sets *unsupported_op for op-set skips.
std::string RunCase(const Case& c, std::string* unsupported_op) {
  cli::ModelTestOptions options;
  options.device = TestDevice();
  options.precisions = {"fp32"};
  options.rtol = 1e-3;  // ONNX's rule, per element: no scaled_atol
  options.atol = 1e-7;
  options.scaled_atol = 0;
  options.max_data_sets = 1;
  options.gpu_vs_cpu = false;  // the stored outputs only, as on the CPU
  const std::vector<cli::CaseResult> results =
      cli::TestModel({(c.dir / "model.onnx").string(), c.suite + "/" + c.name}, options);
  if (results.size() != 1) return absl::StrCat(results.size(), " results for one data set");
  const cli::CaseResult& r = results[0];
  if (r.outcome == cli::Outcome::kError && r.data_set == "load" &&
      ((absl::IsUnimplemented(r.error) && absl::StrContains(r.error.message(), "unsupported ops")) ||
       MentionsNarrowDType(std::string(r.error.message())))) {
    *unsupported_op = std::string(r.error.message());
    return "";
  }
  if (r.data_set == "generated") return "no test_data_set_0";
  return r.outcome == cli::Outcome::kPass ? "" : absl::StrCat(cli::OutcomeName(r.outcome), ": ", r.message);
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
    GTEST_SKIP() << "op or dtype not in onnxrun's set: " << unsupported;
  }
  auto expected = ExpectedFailures().find(c.suite + "/" + c.name);  // "node-1.23/test_x" entries
  if (expected == ExpectedFailures().end() && c.suite == "node") expected = ExpectedFailures().find(c.name);
  if (expected == ExpectedFailures().end() && TestDevice() == runtime::Device::kCuda) {  // "cuda:..." entries
    expected = ExpectedFailures().find("cuda:" + c.suite + "/" + c.name);
  }
  if (expected != ExpectedFailures().end() && absl::StartsWith(expected->second, "random output")) {
    // The stored values are one draw the spec does not ask anyone to repeat: the case must run, and
    // its outputs must have the stored dtypes and shapes; their values may differ.
    EXPECT_FALSE(absl::StartsWith(error, "ERROR")) << error;
    EXPECT_FALSE(absl::StrContains(error, "!= expected")) << error;
    ++tally.expected_failures;
    GTEST_SKIP() << "expected failure (" << expected->second << "): " << (error.empty() ? "values matched" : error);
  }
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
      std::printf("%-20s %8d %8d %14d %12d\n", suite.c_str(), t.passed, t.failed, t.skipped_ops, t.expected_failures);
    }
  }
};

const auto* const kSummary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

}  // namespace
