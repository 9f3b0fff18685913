// onnxrun test: flags, the model loop (on --jobs threads on the CPU), progress and reports (see
// test_command.h).
#include "cli/test_command.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/flags.h"
#include "cli/model_test.h"
#include "cli/test_report.h"
#include "runtime/cuda_executor.h"

namespace cli {
namespace {

constexpr char kUsageHead[] = R"(usage: onnxrun test [options] PATH...

Runs models in the ONNX test layout (model.onnx + test_data_set_N/input_i.pb, output_i.pb) and
compares every output element with the stored one: |got - want| <= atol + rtol * |want| +
scaled_atol * max|want| (max over the output), NaN where NaN, integers and bools exactly. PATH is a model folder, a folder of model folders (searched
recursively) or a model.onnx; with no stored data, generated inputs run on the GPU against the CPU
run of the same plan (on a CPU-only machine: the plan against the unfused reference plan). On the
GPU every case is also compared with the CPU run of its plan, naming the first diverging step.
A model folder's tolerance.json ({"rtol": X, "atol": Y, "scaled_atol": Z}, each optional) overrides
the defaults and the flags.
Exit code 0 only when every case passes.

options:
)";

struct TestOptions {
  ModelTestOptions model;
  std::string device = "auto";
  std::string junit, json;
  int jobs = 1;
  bool quiet = false;
  bool help = false;
};

absl::Status ParseTolerance(const std::string& name, const std::string& v, std::optional<double>* target) {
  double value;
  if (!absl::SimpleAtod(v, &value) || !(value >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(name, " needs a number >= 0, not '", v, "'"));
  }
  *target = value;
  return absl::OkStatus();
}

std::vector<Flag> TestFlags(TestOptions& o) {
  return {
      ChoiceFlag("--device", {"cpu", "cuda", "auto"}, "where to run (default auto: the GPU when usable, else the CPU)",
                 &o.device),
      {{"--precisions"},
       FlagArity::kValue,
       "LIST",
       "comma-separated precisions to run each model at: fp32, tf32, fp16, bf16\n(default fp32)",
       [&o](const std::string& v) {
         std::vector<std::string> list = absl::StrSplit(v, ',', absl::SkipEmpty());
         for (const std::string& p : list) {
           if (p != "fp32" && p != "tf32" && p != "fp16" && p != "bf16") {
             return absl::InvalidArgumentError(
                 absl::StrCat("--precisions takes fp32, tf32, fp16 and bf16, not '", p, "'"));
           }
         }
         if (list.empty()) return absl::InvalidArgumentError("--precisions needs at least one precision");
         o.model.precisions = list;
         return absl::OkStatus();
       }},
      {{"--rtol"},
       FlagArity::kValue,
       "X",
       "relative tolerance (default per precision, printed in the header)",
       [&o](const std::string& v) { return ParseTolerance("--rtol", v, &o.model.rtol); }},
      {{"--atol"},
       FlagArity::kValue,
       "X",
       "absolute tolerance (default per precision, printed in the header)",
       [&o](const std::string& v) { return ParseTolerance("--atol", v, &o.model.atol); }},
      {{"--scaled-atol"},
       FlagArity::kValue,
       "X",
       "absolute tolerance as a fraction of the output's largest |want|, added to\n--atol (default per precision)",
       [&o](const std::string& v) { return ParseTolerance("--scaled-atol", v, &o.model.scaled_atol); }},
      {{"--junit"},
       FlagArity::kValue,
       "FILE",
       "write a JUnit XML report (a testcase per model x data set x precision)",
       [&o](const std::string& v) { return (o.junit = v, absl::OkStatus()); }},
      {{"--json"},
       FlagArity::kValue,
       "FILE",
       "write a JSON report (every case with its errors and worst element)",
       [&o](const std::string& v) { return (o.json = v, absl::OkStatus()); }},
      IntFlag<int>("--jobs", "N", "CPU: test N models at once on N threads (default 1)", &o.jobs, 1, 256,
                   "--jobs needs N from 1 to 256"),
      Switch({"--quiet"}, "no progress line on a terminal", &o.quiet),
      Switch({"-h", "--help"}, "this text", &o.help),
  };
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  file.close();
  if (!file) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

// A case for a PATH that holds no model (or does not exist).
CaseResult PathError(const std::string& path, const absl::Status& status, const std::string& device) {
  CaseResult r;
  r.model = path;
  r.data_set = "load";
  r.device = device;
  r.precision = "-";
  r.outcome = Outcome::kError;
  r.message = std::string(status.message());
  r.error = status;
  return r;
}

}  // namespace

int TestCommand(int argc, char** argv, int first) {
  TestOptions o;
  absl::StatusOr<std::vector<std::string>> paths = ParseFlags(TestFlags(o), argc, argv, first);
  if (!paths.ok() || (!o.help && paths->empty())) {
    std::fprintf(stderr, "onnxrun: %s (see onnxrun test --help)\n",
                 paths.ok() ? "no PATH given" : std::string(paths.status().message()).c_str());
    return 2;
  }
  if (o.help) {
    TestOptions scratch;
    std::printf("%s%s", kUsageHead, FlagHelp(TestFlags(scratch)).c_str());
    return 0;
  }
  const std::string gpu_unusable = exec::CudaUnavailableReason();
  o.model.device = o.device == "cpu"    ? runtime::Device::kCpu
                   : o.device == "cuda" ? runtime::Device::kCuda
                                        : runtime::Device::kAuto;
  if (o.model.device == runtime::Device::kCuda && !gpu_unusable.empty()) {
    std::fprintf(stderr, "onnxrun: error: --device cuda: %s\n", gpu_unusable.c_str());
    return 1;
  }
  const bool on_gpu = o.model.device != runtime::Device::kCpu && gpu_unusable.empty();
  const int jobs = on_gpu ? 1 : o.jobs;  // the GPU runs one model at a time
  o.model.session.gpu.progress = nullptr;

  const auto start = std::chrono::steady_clock::now();
  std::vector<CaseResult> path_errors;
  std::vector<ModelEntry> models;
  for (const std::string& path : *paths) {
    absl::StatusOr<std::vector<ModelEntry>> found = FindModels(path);
    if (!found.ok()) {
      path_errors.push_back(PathError(path, found.status(), on_gpu ? "cuda" : "cpu"));
    } else {
      models.insert(models.end(), found->begin(), found->end());
    }
  }
  std::vector<std::string> tolerances;
  for (const std::string& p : o.model.precisions) {
    Tolerance t = DefaultTolerance(p);
    if (o.model.rtol) t.rtol = *o.model.rtol;
    if (o.model.atol) t.atol = *o.model.atol;
    if (o.model.scaled_atol) t.scaled_atol = *o.model.scaled_atol;
    tolerances.push_back(absl::StrCat(p, " rtol ", t.rtol, " atol ", t.atol, " scaled_atol ", t.scaled_atol));
  }
  std::printf("onnxrun test: %zu model%s; device %s%s; %d job%s; tolerance %s (a model's tolerance.json overrides)\n",
              models.size(), models.size() == 1 ? "" : "s", on_gpu ? "cuda" : "cpu",
              o.model.device == runtime::Device::kAuto && !on_gpu ? absl::StrCat(" (", gpu_unusable, ")").c_str() : "",
              jobs, jobs == 1 ? "" : "s", absl::StrJoin(tolerances, ", ").c_str());
  for (const CaseResult& r : path_errors) std::printf("%s\n", CaseLine(r).c_str());
  std::fflush(stdout);

  const bool progress = !o.quiet && isatty(fileno(stdout));
  std::vector<std::vector<CaseResult>> per_model(models.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t done = 0;
  auto worker = [&] {
    for (size_t i = next++; i < models.size(); i = next++) {
      std::vector<CaseResult> results = TestModel(models[i], o.model);
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (progress) std::printf("\r\033[K");
      for (const CaseResult& r : results) std::printf("%s\n", CaseLine(r).c_str());
      if (progress) std::printf("[%zu/%zu] %s", done, models.size(), models[i].name.c_str());
      std::fflush(stdout);
      per_model[i] = std::move(results);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::min<int>(jobs, models.size()); ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  if (progress) std::printf("\r\033[K");

  std::vector<CaseResult> results = std::move(path_errors);
  for (auto& model_results : per_model) {
    for (CaseResult& r : model_results) results.push_back(std::move(r));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\n%s", SummaryTable(results, seconds).c_str());
  int rc = 0;
  for (const CaseResult& r : results) rc = r.outcome == Outcome::kPass ? rc : 1;
  if (results.empty()) rc = 1;
  for (const auto& [path, text] :
       {std::pair{o.junit, JUnitXml(results, seconds)}, std::pair{o.json, JsonReport(results, seconds)}}) {
    if (path.empty()) continue;
    if (absl::Status s = WriteFile(path, text); !s.ok()) {
      std::fprintf(stderr, "onnxrun: error: %s\n", std::string(s.message()).c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace cli
