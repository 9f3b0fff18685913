// onnxrun test's library: finding models in the ONNX test layout (model.onnx beside
// test_data_set_N/{input,output}_i.pb), running each data set through runtime::Session at each
// precision, and comparing every output element with the stored output (or, with no stored data,
// with the CPU run of the same plan, resp. the unfused reference plan). Used by `onnxrun test`, the
// conformance suite and the zoo suite.
#ifndef ONNXRUN_CLI_MODEL_TEST_H_
#define ONNXRUN_CLI_MODEL_TEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/tensor.h"
#include "runtime/session.h"

namespace cli {

// A float element passes when |got - want| <= atol + rtol * |want| + scaled_atol * max|want| (with
// scaled_atol 0: ONNX's backend-test rule; max|want| over the output's finite elements, so that
// elements near zero in an output of large values are judged by the output's scale, as --check
// and the zoo suite do). NaN must meet NaN, an infinity the same infinity; integers and bools must
// be equal; strings must be equal byte for byte.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
  double scaled_atol = 0;
};

// fp32: rtol 1e-3, atol 1e-7 (ONNX's rule), scaled_atol 1e-4; tf32: 1e-3, 1e-6, 1e-2; fp16: 1e-2,
// 1e-5, 1e-2 (the scaled_atol are --check's tolerances, ToleranceFor).
Tolerance DefaultTolerance(const std::string& precision);
// The precision a model computes in when run at `precision`: at fp32 / tf32, a plan holding
// float16 (or bfloat16) values — weights exported in 16 bits — computes in that type.
std::string ComputePrecision(const std::string& precision, const exec::Plan& plan);

// Reads a tolerance.json ({"rtol": X, "atol": Y, "scaled_atol": Z}, every key optional) into
// `*tolerance`. A missing file leaves it unchanged; a key without a number >= 0 is InvalidArgument.
absl::Status ReadToleranceFile(const std::string& path, Tolerance* tolerance);

// One output compared element by element.
struct OutputComparison {
  std::string output;    // the output's name
  std::string mismatch;  // dtype or shape mismatch ("shape [2,3] != expected [3,2]"); "" when they match
  int64_t elements = 0;
  int64_t bad = 0;      // elements beyond the tolerance
  double max_abs = 0;   // max |got - want| over finite pairs (inf where one side is NaN/Inf alone)
  double max_rel = 0;   // max |got - want| / |want| over elements with want != 0
  double max_want = 0;  // max |want| over finite elements (the scale of scaled_atol)
  int64_t worst = -1;   // the element furthest beyond the tolerance (else the largest |got - want|)
  double got = 0, want = 0;
  double rtol = 0;  // the relative tolerance applied (a bfloat16 output's is at least 2^-6)
  // A string output: the first differing element is `worst`, its strings these (got, want above
  // are unused).
  bool strings = false;
  std::string got_text, want_text;
  bool ok() const { return mismatch.empty() && bad == 0; }
};
OutputComparison CompareOutput(const std::string& name, const ir::Tensor& got, const ir::Tensor& want,
                               Tolerance tolerance);
// "output 'y': 3 of 60 elements differ; worst at flat index 7: got 1.5, want 1.2 (abs error 0.3,
// rel 0.25; rtol 0.001, atol 1e-07, scaled_atol 0.0001 x max|want| 4.2)"; for strings "output 'y': 1
// of 3 strings differ; first at flat index 2: got \"abc\", want \"abd\"".
std::string DescribeMismatch(const OutputComparison& comparison, Tolerance tolerance);

enum class Outcome { kPass, kFail, kError };
const char* OutcomeName(Outcome outcome);  // PASS, FAIL, ERROR

// One model x data set x precision.
struct CaseResult {
  std::string model;      // display name ("node/test_abs")
  std::string data_set;   // "test_data_set_0"; "generated" with no stored data; "load" when Create failed
  std::string device;     // "cpu" or "cuda"; the requested device when Create failed
  std::string precision;  // fp32, tf32, fp16
  // The precision the model computes in, where it differs (a float16 model at fp32): its tolerance
  // is that precision's.
  std::string computes_in;
  std::string reference;  // "stored outputs", "CPU plan", "unfused reference plan"
  Outcome outcome = Outcome::kPass;
  std::string message;  // FAIL: what differs (and on the GPU the first diverging step); ERROR: the error
  absl::Status error;   // ERROR: the status (Create's, for load errors)
  Tolerance tolerance;
  double max_abs = 0, max_rel = 0;  // over all outputs
  double max_scaled = 0;            // max over outputs of max|got - want| / max|want|
  double max_want = 0;              // max |want| over all outputs' finite elements
  std::string worst_output;         // the worst element: output name, flat index, got, want
  int64_t worst_index = -1;
  double worst_got = 0, worst_want = 0;
  double seconds = 0;       // the run(s) and the comparison
  double load_seconds = 0;  // Session::Create of this model and precision
};

struct ModelTestOptions {
  runtime::Device device = runtime::Device::kAuto;
  std::vector<std::string> precisions = {"fp32"};
  // Override the precision's default; a model's tolerance.json overrides both.
  std::optional<double> rtol, atol, scaled_atol;
  // On the GPU: a step-by-step run compared with the CPU run of the same plan (naming the first
  // diverging step) and with the reference, then two plain runs (CUDA-graph replay) with the
  // reference; false: one plain run against the stored outputs only.
  bool gpu_vs_cpu = true;
  // At most this many data sets per model (test_data_set_0 ...); -1: all.
  int max_data_sets = -1;
  // Base options of each Session (GPU options; device and precision are set from above).
  runtime::SessionOptions session;
};

// A model to test: its model.onnx path and its display name.
struct ModelEntry {
  std::string model_path;
  std::string name;
};

// `path` is a model folder (with model.onnx), a folder of such folders (searched recursively; a
// folder with model.onnx is not searched further), or an .onnx file. Sorted by path. NotFound when
// `path` does not exist or holds no model.
absl::StatusOr<std::vector<ModelEntry>> FindModels(const std::string& path);

// Tests one model at every precision of `options`: per data set beside the model (sorted by N), or
// one "generated" case when there is none. Never fails: a model that does not load gives one ERROR
// case per precision.
std::vector<CaseResult> TestModel(const ModelEntry& model, const ModelTestOptions& options);

}  // namespace cli

#endif  // ONNXRUN_CLI_MODEL_TEST_H_
