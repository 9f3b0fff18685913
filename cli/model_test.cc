// Model discovery, per-data-set runs and the element-wise comparison of onnxrun test (see
// model_test.h).
#include "cli/model_test.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/check.h"
#include "cli/inputs.h"
#include "importer/tensor_proto.h"
#include "importer/value_proto.h"
#include "runtime/cuda_executor.h"

namespace cli {
namespace {

namespace fs = std::filesystem;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The files prefix0.pb, prefix1.pb, ... in `dir`, up to the first missing one.
std::vector<fs::path> NumberedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / absl::StrCat(prefix, i, ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

// The test_data_set_N folders beside the model, by N.
std::vector<fs::path> DataSets(const fs::path& model_dir) {
  std::vector<std::pair<int, fs::path>> sets;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(model_dir, ec)) {
    const std::string name = entry.path().filename().string();
    int n;
    if (entry.is_directory() && absl::StartsWith(name, "test_data_set_") &&
        absl::SimpleAtoi(name.substr(strlen("test_data_set_")), &n)) {
      sets.emplace_back(n, entry.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  std::vector<fs::path> paths;
  for (auto& [n, path] : sets) paths.push_back(std::move(path));
  return paths;
}

// The number after `"key"` and its colon in a small JSON object; nullopt when the key is absent.
absl::StatusOr<std::optional<double>> JsonNumber(const std::string& text, const std::string& key) {
  const size_t at = text.find(absl::StrCat("\"", key, "\""));
  if (at == std::string::npos) return std::nullopt;
  const size_t colon = text.find(':', at);
  if (colon == std::string::npos) return absl::InvalidArgumentError(absl::StrCat("no value for \"", key, "\""));
  const char* begin = text.c_str() + colon + 1;
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (end == begin || !(value >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", key, "\" needs a number >= 0"));
  }
  return value;
}

// Folds one output's comparison into the case's maxima and worst element.
void Accumulate(const OutputComparison& c, bool first_bad, CaseResult* result) {
  result->max_abs = std::max(result->max_abs, c.max_abs);
  result->max_rel = std::max(result->max_rel, c.max_rel);
  if (c.max_want > 0) result->max_scaled = std::max(result->max_scaled, c.max_abs / c.max_want);
  result->max_want = std::max(result->max_want, c.max_want);
  if (c.worst >= 0 && !c.strings && (result->worst_index < 0 || first_bad)) {
    result->worst_output = c.output;
    result->worst_index = c.worst;
    result->worst_got = c.got;
    result->worst_want = c.want;
  }
}

// Compares `got` with `want` output by output; the case FAILs at the first output that differs
// (its description becomes the message), and the worst element is that output's.
// A tensor compares element by element; a sequence tensor by tensor ("y[2]", after its length);
// a map by its keys and values ("y[2].keys"); an empty optional matches only an empty optional.
std::vector<OutputComparison> CompareValue(const std::string& name, const ir::Tensor& got, const ir::Tensor& want,
                                           Tolerance tolerance) {
  if (got.is_dense() && want.is_dense()) return {CompareOutput(name, got, want, tolerance)};
  OutputComparison kinds;
  kinds.output = name;
  const bool same_kind =
      got.is_none() == want.is_none() && got.is_sequence() == want.is_sequence() && got.is_map() == want.is_map();
  if (!same_kind || got.elements().size() != want.elements().size()) {
    kinds.mismatch = absl::StrCat(got.Describe(), " != expected ", want.Describe());
    return {kinds};
  }
  std::vector<OutputComparison> compared = {kinds};
  if (want.is_map()) {
    compared.push_back(CompareOutput(absl::StrCat(name, ".keys"), got.map_keys(), want.map_keys(), tolerance));
    compared.push_back(CompareOutput(absl::StrCat(name, ".values"), got.map_values(), want.map_values(), tolerance));
    return compared;
  }
  for (size_t e = 0; e < want.elements().size(); ++e) {
    std::vector<OutputComparison> element =
        CompareValue(absl::StrCat(name, "[", e, "]"), got.elements()[e], want.elements()[e], tolerance);
    compared.insert(compared.end(), element.begin(), element.end());
  }
  return compared;
}

void CompareAll(const std::vector<runtime::NamedTensor>& got, const std::vector<ir::Tensor>& want, CaseResult* result) {
  bool failed = false;
  for (size_t i = 0; i < want.size(); ++i) {
    for (const OutputComparison& c : CompareValue(got[i].name, got[i].tensor, want[i], result->tolerance)) {
      const bool first_bad = !c.ok() && !failed;
      Accumulate(c, first_bad, result);
      if (first_bad) {
        failed = true;
        result->outcome = Outcome::kFail;
        result->message = DescribeMismatch(c, result->tolerance);
      }
    }
  }
}

CaseResult Error(CaseResult result, absl::Status status, const std::string& context = "") {
  result.outcome = Outcome::kError;
  result.message = absl::StrCat(context, status.message());
  result.error = std::move(status);
  return result;
}

// True when `dims` fit `declared`: same rank, equal where the declared dim is known.
bool DimsFit(const std::vector<int64_t>& dims, const ir::TensorType& declared) {
  if (!declared.shape) return true;
  if (declared.shape->size() != dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if ((*declared.shape)[i].known() && (*declared.shape)[i].value != dims[i]) return false;
  }
  return true;
}

// ONNX 1.12's test data has no bfloat16 dtype: its bfloat16 tensors are stored as UINT16 holding
// the bfloat16 bits. A stored uint16 tensor whose model input or output (at the same position) is
// declared bfloat16 with fitting dims is therefore read as those bits in a bfloat16 tensor; any
// other stored tensor is returned as it is.
ir::Tensor AsDeclaredBFloat16(ir::Tensor stored, const ir::TensorType& declared) {
  if (stored.dtype() != ir::DType::kUint16 || declared.dtype != ir::DType::kBFloat16 ||
      !DimsFit(stored.shape(), declared)) {
    return stored;
  }
  absl::StatusOr<ir::Tensor> bits = ir::Tensor::Create(ir::DType::kBFloat16, stored.shape());
  if (!bits.ok()) return stored;
  if (stored.byte_size() > 0) std::memcpy(bits->raw_data(), stored.raw_data(), stored.byte_size());
  return *std::move(bits);
}

// Reads a data set's inputs (input_i.pb in graph-input order) and stored outputs.
absl::Status ReadDataSet(const fs::path& dir, const runtime::Session& session,
                         std::vector<runtime::NamedTensor>* inputs, std::vector<ir::Tensor>* outputs) {
  const std::vector<fs::path> input_files = NumberedFiles(dir, "input_");
  if (input_files.size() != session.inputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(input_files.size(), " input files for ", session.inputs().size(), " inputs"));
  }
  for (size_t i = 0; i < input_files.size(); ++i) {
    absl::StatusOr<ir::Tensor> t = importer::ReadValueFile(input_files[i].string(), session.inputs()[i].type);
    if (!t.ok()) return t.status();
    inputs->push_back({session.inputs()[i].name, AsDeclaredBFloat16(*std::move(t), session.inputs()[i].type)});
  }
  const std::vector<fs::path> output_files = NumberedFiles(dir, "output_");
  if (output_files.size() != session.outputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(session.outputs().size(), " outputs, ", output_files.size(), " expected"));
  }
  for (size_t i = 0; i < output_files.size(); ++i) {
    absl::StatusOr<ir::Tensor> t = importer::ReadValueFile(output_files[i].string(), session.outputs()[i].type);
    if (!t.ok()) return t.status();
    outputs->push_back(AsDeclaredBFloat16(*std::move(t), session.outputs()[i].type));
  }
  return absl::OkStatus();
}

// Runs one case on the session's device: against `stored` when given, else against the CPU run of
// the plan (GPU) or `reference` (CPU, the unfused plan). On the GPU with `gpu_vs_cpu`, also against
// the CPU run of the plan.
CaseResult RunCase(CaseResult result, const runtime::Session& session, const std::string& precision,
                   const std::vector<runtime::NamedTensor>& inputs, const std::vector<ir::Tensor>* stored,
                   const runtime::Session* reference, bool gpu_vs_cpu) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<ir::Tensor> want = stored != nullptr ? *stored : std::vector<ir::Tensor>{};
  if (session.device() == runtime::Device::kCuda && (gpu_vs_cpu || stored == nullptr)) {
    absl::StatusOr<GpuCpuComparison> compared = CompareGpuWithCpu(session, precision, inputs);
    if (!compared.ok()) return Error(std::move(result), compared.status());
    if (stored == nullptr) {
      for (const runtime::NamedTensor& out : compared->cpu_outputs) want.push_back(out.tensor);
    }
    CompareAll(compared->gpu_outputs, want, &result);
    if (!compared->agree) {
      for (const OutputAgreement& out : compared->outputs) {
        if (out.ok) continue;
        result.outcome = Outcome::kFail;
        absl::StrAppend(&result.message, result.message.empty() ? "" : "; ", "GPU vs CPU output '", out.name,
                        "': relative error ", out.relative, " > ", ToleranceFor(precision));
        break;
      }
    }
    if (result.outcome == Outcome::kFail && !compared->first_divergence.empty()) {
      absl::StrAppend(&result.message, "; GPU vs CPU ", compared->first_divergence);
    }
    // The path an application runs: two plain runs (the second replays a CUDA graph when the session
    // uses them), against the same reference.
    absl::StatusOr<std::vector<runtime::NamedTensor>> replayed = session.Run(inputs);
    if (replayed.ok()) replayed = session.Run(inputs);
    if (!replayed.ok()) return Error(std::move(result), replayed.status(), "Run: ");
    if (result.outcome == Outcome::kPass) {
      CompareAll(*replayed, want, &result);
      if (result.outcome == Outcome::kFail && session.gpu() != nullptr) {
        result.message = absl::StrCat("plain run (", session.gpu()->graph_status(), "): ", result.message);
      }
    }
  } else {
    absl::StatusOr<std::vector<runtime::NamedTensor>> got = session.Run(inputs);
    if (!got.ok()) return Error(std::move(result), got.status(), "Run: ");
    if (stored == nullptr) {
      absl::StatusOr<std::vector<runtime::NamedTensor>> ref = reference->Run(inputs);
      if (!ref.ok()) return Error(std::move(result), ref.status(), "reference plan: ");
      for (const runtime::NamedTensor& out : *ref) want.push_back(out.tensor);
    }
    CompareAll(*got, want, &result);
  }
  result.seconds = SecondsSince(start);
  return result;
}

}  // namespace

std::string ComputePrecision(const std::string& precision, const exec::Plan& plan) {
  if (precision != "fp32" && precision != "tf32") return precision;
  bool bf16 = false;
  for (const ir::Value& value : plan.graph.values()) {
    if (value.type.dtype == ir::DType::kFloat16) return "fp16";
    bf16 = bf16 || value.type.dtype == ir::DType::kBFloat16;
  }
  return bf16 ? "bf16" : precision;
}

Tolerance DefaultTolerance(const std::string& precision) {
  const double scaled = ToleranceFor(precision);  // --check's, relative to the output's largest value
  if (precision == "fp16") return {1e-2, 1e-5, scaled};
  if (precision == "bf16") return {8e-2, 1e-4, scaled};  // fp16's x 8, the ratio of their unit roundoffs
  if (precision == "tf32") return {1e-3, 1e-6, scaled};
  return {1e-3, 1e-7, scaled};
}

absl::Status ReadToleranceFile(const std::string& path, Tolerance* tolerance) {
  std::ifstream file(path);
  if (!file) return absl::OkStatus();
  std::stringstream text;
  text << file.rdbuf();
  for (auto [key, target] : {std::pair{"rtol", &tolerance->rtol}, std::pair{"atol", &tolerance->atol},
                             std::pair{"scaled_atol", &tolerance->scaled_atol}}) {
    absl::StatusOr<std::optional<double>> value = JsonNumber(text.str(), key);
    if (!value.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", value.status().message()));
    if (value->has_value()) *target = **value;
  }
  return absl::OkStatus();
}

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass: return "PASS";
    case Outcome::kFail: return "FAIL";
    case Outcome::kError: return "ERROR";
  }
  return "?";
}

absl::StatusOr<std::vector<ModelEntry>> FindModels(const std::string& path) {
  std::error_code ec;
  const fs::path root(path);
  if (!fs::exists(root, ec)) return absl::NotFoundError(absl::StrCat("'", path, "' does not exist"));
  std::vector<ModelEntry> models;
  if (!fs::is_directory(root, ec)) {
    const std::string name = root.filename() == "model.onnx" && root.has_parent_path()
                                 ? fs::absolute(root).parent_path().filename().string()
                                 : root.filename().string();
    models.push_back({root.string(), name});
    return models;
  }
  const fs::path base = fs::absolute(root).lexically_normal();
  const fs::path parent = base.has_filename() ? base.parent_path() : base.parent_path().parent_path();
  std::vector<fs::path> pending = {root};
  while (!pending.empty()) {
    const fs::path dir = pending.back();
    pending.pop_back();
    if (fs::exists(dir / "model.onnx", ec)) {
      const fs::path absolute = fs::absolute(dir).lexically_normal();
      std::string name = absolute.lexically_relative(parent).string();
      if (!name.empty() && name.back() == '/') name.pop_back();
      models.push_back({(dir / "model.onnx").string(), name});
      continue;
    }
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.is_directory(ec)) pending.push_back(entry.path());
    }
  }
  if (models.empty()) return absl::NotFoundError(absl::StrCat("no model.onnx under '", path, "'"));
  std::sort(models.begin(), models.end(),
            [](const ModelEntry& a, const ModelEntry& b) { return a.model_path < b.model_path; });
  return models;
}

// `precision`'s default tolerance, then the flags', then the model folder's tolerance.json.
absl::Status SetTolerance(const std::string& precision, const ModelTestOptions& options, const fs::path& dir,
                          Tolerance* tolerance) {
  *tolerance = DefaultTolerance(precision);
  if (options.rtol) tolerance->rtol = *options.rtol;
  if (options.atol) tolerance->atol = *options.atol;
  if (options.scaled_atol) tolerance->scaled_atol = *options.scaled_atol;
  return ReadToleranceFile((dir / "tolerance.json").string(), tolerance);
}

std::vector<CaseResult> TestModel(const ModelEntry& model, const ModelTestOptions& options) {
  std::vector<CaseResult> results;
  const fs::path dir = fs::path(model.model_path).parent_path();
  std::vector<fs::path> data_sets = DataSets(dir.empty() ? fs::path(".") : dir);
  if (options.max_data_sets >= 0 && data_sets.size() > static_cast<size_t>(options.max_data_sets)) {
    data_sets.resize(options.max_data_sets);
  }
  for (const std::string& precision : options.precisions) {
    CaseResult base;
    base.model = model.name;
    base.precision = precision;
    // Until a session says where it runs: where kAuto would run (for load errors).
    base.device = options.device != runtime::Device::kAuto ? runtime::DeviceName(options.device)
                  : exec::CudaUnavailableReason().empty()  ? "cuda"
                                                           : "cpu";
    base.data_set = "load";
    if (absl::Status s = SetTolerance(precision, options, dir, &base.tolerance); !s.ok()) {
      results.push_back(Error(base, s));
      continue;
    }
    runtime::SessionOptions session_options = options.session;
    session_options.device = options.device;
    session_options.precision = precision;
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<runtime::Session>> session =
        runtime::Session::Create(model.model_path, session_options);
    base.load_seconds = SecondsSince(start);
    if (!session.ok()) {
      results.push_back(Error(base, session.status(), "Create: "));
      continue;
    }
    base.device = runtime::DeviceName((*session)->device());
    const std::string computes_in = ComputePrecision(precision, (*session)->plan());
    if (computes_in != precision) {
      base.computes_in = computes_in;
      (void)SetTolerance(computes_in, options, dir, &base.tolerance);  // the file read fine above
    }
    if (data_sets.empty()) {
      // No stored data: generated inputs, against the CPU plan (GPU) or the unfused plan (CPU).
      base.data_set = "generated";
      std::unique_ptr<runtime::Session> reference;
      if ((*session)->device() == runtime::Device::kCuda) {
        base.reference = "CPU plan";
      } else {
        base.reference = "unfused reference plan";
        session_options.fuse = false;
        absl::StatusOr<std::unique_ptr<runtime::Session>> unfused =
            runtime::Session::Create(model.model_path, session_options);
        if (!unfused.ok()) {
          results.push_back(Error(base, unfused.status(), "reference plan: "));
          continue;
        }
        reference = *std::move(unfused);
      }
      std::vector<runtime::NamedTensor> inputs;
      absl::Status generated = absl::OkStatus();
      for (size_t i = 0; i < (*session)->inputs().size() && generated.ok(); ++i) {
        absl::StatusOr<ir::Tensor> t = GenerateInput((*session)->inputs()[i], 1, i);
        if (t.ok()) inputs.push_back({(*session)->inputs()[i].name, *std::move(t)});
        generated = t.status();
      }
      if (!generated.ok()) {
        results.push_back(Error(base, generated));
        continue;
      }
      results.push_back(RunCase(base, **session, computes_in, inputs, nullptr, reference.get(), true));
      continue;
    }
    base.reference = "stored outputs";
    for (const fs::path& set : data_sets) {
      CaseResult result = base;
      result.data_set = set.filename().string();
      std::vector<runtime::NamedTensor> inputs;
      std::vector<ir::Tensor> stored;
      if (absl::Status s = ReadDataSet(set, **session, &inputs, &stored); !s.ok()) {
        results.push_back(Error(result, s));
        continue;
      }
      results.push_back(RunCase(result, **session, computes_in, inputs, &stored, nullptr, options.gpu_vs_cpu));
    }
  }
  return results;
}

}  // namespace cli
