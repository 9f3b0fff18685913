// onnxrun: run an ONNX model from the command line (see --help). Exit code 0
// only on success; otherwise one line on stderr saying what went wrong.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/benchmark.h"
#include "cli/check.h"
#include "cli/flags.h"
#include "cli/inputs.h"
#include "cli/startup.h"
#include "cli/test_command.h"
#include "cli/version.h"
#include "importer/value_proto.h"
#include "ops/control_flow.h"
#include "ops/op_def.h"
#include "partitioner/explain.h"
#include "partitioner/fusion_rules.h"
#include "runtime/session.h"

namespace {

constexpr char kUsageHead[] = R"(usage: onnxrun [run] [options] MODEL.onnx
       onnxrun test [options] PATH...   (regression tests over model folders; onnxrun test --help)

Runs an ONNX model and prints each output's name, shape, dtype and a summary.
Inputs not given are generated (deterministic random; symbolic dims: the first is --batch, others 1).

options:
)";

struct Options {
  std::string model;
  runtime::SessionOptions session;  // device, precision, fuse, GPU options (session.gpu)
  cli::InputSources inputs;         // --input, --input-dir, --batch, --seed, --dim
  std::string output_dir;
  bool print_graph = false;
  bool dynamic_plan = false;  // plan for the model's symbolic dims, not the inputs' dims
  std::string explain;        // "", "text", "json", "dot"
  bool check = false;
  int benchmark_runs = 0;
  int streams = 1;
  bool profile = false;
  bool quiet = false;
  bool list_ops = false;
  bool help = false;
  bool version = false;
};

absl::Status UsageError(const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(message, " (see onnxrun --help)"));
}

// `flag` (an autotune count), which also has runtime-compiled engine configs timed.
cli::Flag AlsoTimingRuntimeCompiled(cli::Flag flag, runtime::SessionOptions& s) {
  flag.apply = [apply = std::move(flag.apply), &s](const std::string& value) {
    s.gpu.autotune_runtime_compiled = true;
    return apply(value);
  };
  return flag;
}

// The flags of `onnxrun [run]`, in help order; each applies its value to `o`.
std::vector<cli::Flag> RunFlags(Options& o) {
  runtime::SessionOptions& s = o.session;
  using cli::FlagArity;
  return {
      {{"--device"},
       FlagArity::kValue,
       "cpu|cuda|auto",
       "where to run (default auto: the GPU when usable, else the CPU)",
       [&s](const std::string& v) {
         if (v == "cpu")
           s.device = runtime::Device::kCpu;
         else if (v == "cuda")
           s.device = runtime::Device::kCuda;
         else if (v == "auto")
           s.device = runtime::Device::kAuto;
         else
           return absl::InvalidArgumentError(absl::StrCat("--device must be cpu, cuda or auto, not '", v, "'"));
         return absl::OkStatus();
       }},
      {{"--input"},
       FlagArity::kValue,
       "NAME=FILE",
       "an input from a .pb (TensorProto) or .npy file; repeatable",
       [&o](const std::string& v) {
         const size_t sep = v.find('=');
         if (sep == std::string::npos || sep == 0) return absl::InvalidArgumentError("--input needs NAME=FILE");
         o.inputs.files.emplace_back(v.substr(0, sep), v.substr(sep + 1));
         return absl::OkStatus();
       }},
      {{"--input-dir"},
       FlagArity::kValue,
       "DIR",
       "inputs from DIR/input_<i>.pb, in graph-input order (ONNX test layout)",
       [&o](const std::string& v) { return (o.inputs.dir = v, absl::OkStatus()); }},
      {{"--output-dir"},
       FlagArity::kValue,
       "DIR",
       "write outputs as DIR/output_<i>.pb (TensorProto), in graph-output order",
       [&o](const std::string& v) { return (o.output_dir = v, absl::OkStatus()); }},
      cli::IntFlag<int64_t>("--batch", "N", "size of symbolic batch dims of generated inputs (default 1)",
                            &o.inputs.batch, 1, std::numeric_limits<int64_t>::max(), "--batch needs N >= 1"),
      {{"--dim"},
       FlagArity::kValue,
       "NAME=N",
       "size of the symbolic dim NAME of generated inputs (e.g. --dim S=128); repeatable",
       [&o](const std::string& v) {
         const size_t sep = v.find('=');
         int64_t n = 0;
         if (sep == std::string::npos || sep == 0 || !absl::SimpleAtoi(v.substr(sep + 1), &n) || n < 1) {
           return absl::InvalidArgumentError(absl::StrCat("--dim needs NAME=N with N >= 1, not '", v, "'"));
         }
         o.inputs.named_dims[v.substr(0, sep)] = n;
         return absl::OkStatus();
       }},
      cli::Switch({"--dynamic-plan"},
                  "plan for the model's symbolic input dims, as a library session without\n"
                  "fixed input shapes does (default: the plan is made for the dims of the inputs run)",
                  &o.dynamic_plan, true),
      cli::IntFlag<uint64_t>("--seed", "N", "seed of generated inputs (default 0)", &o.inputs.seed, 0,
                             std::numeric_limits<uint64_t>::max(), "--seed needs a number"),
      cli::ChoiceFlag("--precision", {"fp32", "tf32", "fp16", "bf16"},
                      "compute precision (default fp32; fp16 / bf16: 16-bit tensors, fp32 accumulation)", &s.precision),
      cli::Switch({"--half-inputs"},
                  "fp16 / bf16: the model's float32 inputs are taken as 16-bit tensors (no Cast on the\n"
                  "device, half the input bytes; --input files must then hold float16 / bfloat16)",
                  &s.half_inputs),
      cli::Switch({"--no-fuse"}, "run the reference plan: no passes, one kernel step per node", &s.fuse, false),
      {{"--explain"},
       FlagArity::kOptionalValue,
       "text|json|dot",
       "print the plan (steps, what fused and why not) and exit",
       [&o](const std::string& v) {
         o.explain = v.empty() ? "text" : v;
         if (o.explain != "text" && o.explain != "json" && o.explain != "dot") {
           return absl::InvalidArgumentError(absl::StrCat("--explain takes text, json or dot, not '", v, "'"));
         }
         return absl::OkStatus();
       }},
      cli::Switch({"--check"},
                  "run on the GPU and on the CPU and compare (per output, and the first\n"
                  "step whose output diverges); exit 1 when they disagree",
                  &o.check),
      cli::IntFlag<int>("--benchmark", "N",
                        "warm up, then time N runs: p50/p90/p99 latency (host to host, and GPU\n"
                        "compute alone), throughput, peak memory",
                        &o.benchmark_runs, 1, std::numeric_limits<int>::max(), "--benchmark needs N >= 1"),
      cli::IntFlag<int>("--streams", "K",
                        "with --benchmark: then time K requests in flight at once (K threads on\n"
                        "one session): throughput and latency percentiles",
                        &o.streams, 1, 64, "--streams needs K from 1 to 64"),
      cli::Switch({"--profile"},
                  "with --benchmark: one more run timed step by step (GPU time on the GPU,\n"
                  "wall time on the CPU); prints the slowest steps, the time per step\n"
                  "pattern and per step kind",
                  &o.profile),
      cli::IntFlag<int>("--device-id", "N", "GPU: which CUDA device (default 0)", &s.gpu.device_id, 0, 1023,
                        "--device-id needs N >= 0"),
      cli::Switch({"--no-cuda-graph"}, "GPU: run step by step instead of capturing a CUDA graph and replaying it",
                  &s.gpu.cuda_graph, false),
      cli::Switch({"--no-activation-arena"},
                  "GPU: captured graphs take activation memory from CUDA graph memory nodes\n"
                  "instead of one arena planned from a recorded run",
                  &s.gpu.activation_arena, false),
      cli::Switch({"--no-step-overlap"},
                  "GPU: keep a captured graph's steps in one chain (by default steps that share\n"
                  "no memory run side by side where the replay measures faster)",
                  &s.gpu.overlap_steps, false),
      cli::Switch({"--step-overlap"}, "GPU: the default (kept for older scripts)", &s.gpu.overlap_steps, true),
      {{"--plan-cache"},
       FlagArity::kValue,
       "DIR",
       "GPU: where built cuDNN plans are kept across runs (default\n$XDG_CACHE_HOME/onnxrun, else ~/.cache/onnxrun)",
       [&s](const std::string& v) {
         if (v.empty()) return absl::InvalidArgumentError("--plan-cache needs a folder");
         s.gpu.plan_cache_dir = v;
         return absl::OkStatus();
       }},
      cli::Switch({"--no-plan-cache"}, "GPU: build every cuDNN plan, read and write no cache", &s.gpu.plan_cache,
                  false),
      cli::IntFlag<int>("--build-threads", "N",
                        "GPU: threads building cuDNN plans (default: hardware threads, at most 16)",
                        &s.gpu.build_threads, 1, 256, "--build-threads needs N from 1 to 256"),
      cli::Switch({"--no-plan-sharing"},
                  "GPU: build a plan for every step, also for steps identical to another\n"
                  "(to measure what sharing saves)",
                  &s.gpu.share_plans, false),
      {{"--autotune"},
       FlagArity::kSwitch,
       "",
       "GPU: time the first 4 engine configs of every cuDNN plan on the real shapes\n"
       "and keep the fastest, runtime-compiled ones too (each adds an NVRTC compile to a\n"
       "cold start; default: the same without runtime-compiled alternatives; kept in the plan cache)",
       [&s](const std::string&) {
         s.gpu.autotune_plans = 4;
         s.gpu.autotune_runtime_compiled = true;
         return absl::OkStatus();
       }},
      AlsoTimingRuntimeCompiled(
          cli::IntFlag<int>("--autotune-plans", "N",
                            "GPU: as --autotune, timing the first N engine configs of every\n"
                            "cuDNN plan (1 to 64; more find faster engines at small batches, cold starts take longer)",
                            &s.gpu.autotune_plans, 1, 64, "--autotune-plans needs N from 1 to 64"),
          s),
      cli::IntFlag<int>("--tune-for-streams", "K",
                        "GPU: autotune for requests in flight: time at least 8 engine configs of every\n"
                        "cuDNN plan (runtime-compiled ones too) as K executions at once on K streams and\n"
                        "keep the one with the best throughput (default 1: the fastest alone); for a\n"
                        "Session serving concurrent callers (resnet50 fp16 batch 1, --streams 4: K = 2)",
                        &s.gpu.autotune_streams, 1, 16, "--tune-for-streams needs K from 1 to 16"),
      {{"--no-autotune"},
       FlagArity::kSwitch,
       "",
       "GPU: take cuDNN heuristics' first engine config for every conv plan (matmul plans: see below)",
       [&s](const std::string&) { return (s.gpu.autotune_plans = 1, absl::OkStatus()); }},
      cli::Switch({"--no-autotune-large-convs"},
                  "GPU: do not give convs of 2 GFLOP or more (resnet50 at batch 32 and up) their own\n"
                  "autotuning (default: time their first 16 engine configs, runtime-compiled ones included;\n"
                  "resnet50 fp16 batch 256 6.60 -> 6.23 ms on the H200; cold starts ~4 s longer)",
                  &s.gpu.autotune_large_convs, false),
      cli::Switch({"--no-matmul-autotune"},
                  "GPU: take cuDNN heuristics' first engine config for matmul plans too\n"
                  "(default: time 4, keep the fastest; cached)",
                  &s.gpu.autotune_matmuls, false),
      cli::Switch({"--exact-gelu"},
                  "GPU, fp16/bf16: compute a matmul's erf GELU as the model says (default: cuBLASLt's\n"
                  "GELU epilogue, the tanh form, at most 4.73e-4 apart, where it measures faster)",
                  &s.gpu.fast_gelu, false),
      cli::Switch({"--no-measure"},
                  "GPU: do not time each conv/matmul step's cuDNN graph against its split form\n"
                  "(legacy conv + own kernels) at the first run; always use the graph",
                  &s.gpu.measure_choices, false),
      cli::Switch({"--quiet"}, "no progress lines while cuDNN plans build", &o.quiet),
      cli::Switch({"--print-graph"}, "print the plan, one line per step, before running", &o.print_graph),
      cli::Switch({"--list-ops"}, "print the supported ONNX op types, and how each runs on the GPU, and exit",
                  &o.list_ops),
      cli::Switch({"-h", "--help"}, "this text", &o.help),
      cli::Switch({"--version"}, "print the release, the ONNX opsets read, the CUDA / cuDNN versions and the GPUs",
                  &o.version),
  };
}

std::string Usage() {
  Options scratch;
  return absl::StrCat(kUsageHead, cli::FlagHelp(RunFlags(scratch)));
}

absl::StatusOr<Options> ParseArgs(int argc, char** argv) {
  Options options;
  // `onnxrun run ...` is `onnxrun ...`; `onnxrun test ...` is dispatched in main (cli/test_command.h).
  const int first = argc > 1 && std::string(argv[1]) == "run" ? 2 : 1;
  absl::StatusOr<std::vector<std::string>> positional = cli::ParseFlags(RunFlags(options), argc, argv, first);
  if (!positional.ok()) return UsageError(std::string(positional.status().message()));
  if (positional->size() > 1) return UsageError(absl::StrCat("unexpected argument '", (*positional)[1], "'"));
  if (!positional->empty()) options.model = (*positional)[0];
  if (!options.help && !options.list_ops && !options.version && options.model.empty()) {
    return UsageError("no model given");
  }
  if (options.profile && options.benchmark_runs == 0) return UsageError("--profile goes with --benchmark N");
  if (options.streams > 1 && options.benchmark_runs == 0) return UsageError("--streams goes with --benchmark N");
  if (options.session.half_inputs && options.session.precision != "fp16" && options.session.precision != "bf16") {
    return UsageError("--half-inputs goes with --precision fp16 or bf16");
  }
  return options;
}

// A string as printed: quoted, escaped, its first 40 characters ("..." after when longer).
std::string Quoted(const std::string& s) {
  return absl::StrCat("\"", absl::CHexEscape(s.substr(0, 40)), s.size() > 40 ? "\"..." : "\"");
}

// A map's first entries: "{0: 0.25, 1: 0.75}" (string keys quoted).
std::string MapEntries(const ir::Tensor& map) {
  const ir::Tensor& keys = map.map_keys();
  const ir::Tensor& values = map.map_values();
  std::string text = "{";
  for (int64_t i = 0; i < std::min<int64_t>(8, keys.num_elements()); ++i) {
    const std::string key = keys.strings() ? Quoted(keys.strings()[i]) : absl::StrCat(keys.GetAsInt64(i));
    absl::StrAppendFormat(&text, "%s%s: %.6g", i ? ", " : "", key, values.GetAsDouble(i));
  }
  return text + (keys.num_elements() > 8 ? ", ...}" : "}");
}

void PrintSummary(const runtime::NamedTensor& out) {
  constexpr size_t kShownElements = 16;  // of a sequence; the rest are counted
  const ir::Tensor& t = out.tensor;
  if (t.is_map()) {
    std::printf("output '%s': %s  %s\n", out.name.c_str(), t.Describe().c_str(), MapEntries(t).c_str());
    return;
  }
  if (!t.is_dense()) {
    std::printf("output '%s': %s\n", out.name.c_str(), t.Describe().c_str());
    const size_t shown = std::min(kShownElements, t.elements().size());
    for (size_t e = 0; e < shown; ++e) PrintSummary({absl::StrCat(out.name, "[", e, "]"), t.elements()[e]});
    if (shown < t.elements().size()) std::printf("  ... %zu more\n", t.elements().size() - shown);
    return;
  }
  std::string line =
      absl::StrFormat("output '%s': %s%s", out.name, ir::DTypeName(t.dtype()), ir::ShapeToString(t.shape()));
  if (const std::string* strings = t.strings()) {
    line += "  first [";
    for (int64_t i = 0; i < std::min<int64_t>(5, t.num_elements()); ++i) {
      absl::StrAppend(&line, i ? ", " : "", Quoted(strings[i]));
    }
    std::printf("%s%s\n", line.c_str(), t.num_elements() > 5 ? ", ...]" : "]");
    return;
  }
  if (t.num_elements() > 0) {
    double lo = t.GetAsDouble(0), hi = lo, sum = 0;
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const double v = t.GetAsDouble(i);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    absl::StrAppendFormat(&line, "  min %.6g  max %.6g  mean %.6g  first [", lo, hi, sum / t.num_elements());
    for (int64_t i = 0; i < std::min<int64_t>(5, t.num_elements()); ++i) {
      absl::StrAppendFormat(&line, "%s%.6g", i ? ", " : "", t.GetAsDouble(i));
    }
    line += t.num_elements() > 5 ? ", ...]" : "]";
  }
  std::printf("%s\n", line.c_str());
}

absl::Status WriteOutputs(const std::string& dir, const runtime::Session& session,
                          const std::vector<runtime::NamedTensor>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat("cannot create --output-dir '", dir, "': ", ec.message()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    absl::Status s = importer::WriteValueFile(outputs[i].tensor, session.outputs()[i].type, outputs[i].name,
                                              absl::StrCat(dir, "/output_", i, ".pb"));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// Prints the plan; on the GPU, after one run with generated inputs so that
// every FusedGraph has chosen its cuDNN engine for those shapes.
absl::Status Explain(const Options& options, const runtime::Session& session) {
  const exec::Plan& plan = session.plan();
  if (options.explain == "json") {
    std::printf("%s", partitioner::ExplainJson(plan).c_str());
    return absl::OkStatus();
  }
  if (options.explain == "dot") {
    std::printf("%s", partitioner::ExplainDot(plan).c_str());
    return absl::OkStatus();
  }
  std::printf("%s", partitioner::ExplainText(plan).c_str());
  if (session.device() != runtime::Device::kCuda) return absl::OkStatus();
  auto inputs = cli::CollectInputs(options.inputs, session.inputs());
  if (!inputs.ok()) return inputs.status();
  auto outputs = session.Run(*inputs);
  if (!outputs.ok()) return outputs.status();
  std::printf("on the GPU (%s; engines chosen for batch %lld):\n", session.device_reason().c_str(),
              static_cast<long long>(options.inputs.batch));
  const std::vector<std::string> notes = session.gpu_step_notes();
  for (size_t i = 0; i < notes.size(); ++i) std::printf("#%zu %s\n", i, notes[i].c_str());
  return absl::OkStatus();
}

// --list-ops: every supported op type with its step kind and how that step runs on the GPU.
void PrintOpList() {
  const std::vector<std::string> op_types = ops::SupportedOpTypes();
  int width = 26;  // the op column; domain-qualified names ("ai.onnx.preview.training.Adam") widen it
  for (const std::string& op : op_types) width = std::max(width, static_cast<int>(op.size()) + 1);
  std::printf("%-*s%-17s%s\n", width, "# op", "step", "on the GPU");
  for (const std::string& op : op_types) {
    const std::string_view kind = partitioner::PlannedStepKind(op);
    const std::string host = exec::HasOwnCudaKernel(op) ? "own CUDA kernel" : "host reference kernel";
    std::string gpu = host;
    if (kind == "FusedGraph") gpu = "cuDNN operation graph (fallback: legacy cuDNN + own kernels)";
    if (kind == "Legacy") gpu = "legacy cuDNN call (other forms: own kernel or host)";
    if (kind == "Alias") gpu = "no work (same device bytes)";
    if (op == "Dropout") gpu = absl::StrCat(gpu, "; training mode or mask used: ", host);
    if (ops::IsControlFlowOp(op)) gpu = "host: the body runs on the CPU interpreter";
    if (op == "Attention") gpu = "cuDNN fused attention (SDPA graph, fp16), else own CUDA kernel";
    if (op == "ConvTranspose") gpu = "legacy cuDNN backward-data convolution (2-D), else host reference kernel";
    if (kind == "Kernel+epilogue") gpu = absl::StrCat("cuDNN epilogue after a conv/matmul, else ", gpu);
    if (op == "TopK") gpu = "own CUDA kernel (constant K; a computed K: host reference kernel)";
    if (op == "OneHot") gpu = "own CUDA kernel (constant depth; a computed depth: host reference kernel)";
    if (op == "ScatterND" || op == "ScatterElements") {
      gpu = "own CUDA kernel (reduction none or add; mul / max / min: host reference kernel)";
    }
    if (op == "Sum" || op == "Mean") {  // importer/canonicalize.cc writes them as binary chains
      gpu = "as a chain of Add (Mean: then Div) from the importer: own CUDA kernel or a fused tail";
    }
    std::printf("%-*s%-17s%s\n", width, op.c_str(), std::string(kind).c_str(), gpu.c_str());
  }
  for (const ops::ImportedOp& op : ops::ImporterRewrittenOps()) {  // into the ops above
    const std::string becomes =
        op.op_type == "Constant" ? std::string(op.becomes) : "rewritten to " + std::string(op.becomes);
    std::printf("%-*s%-17s%s (importer)\n", width, std::string(op.op_type).c_str(), "-", becomes.c_str());
  }
}

// The inputs to run, collected while the session is made so that its plan is made for their dims
// (unless --dynamic-plan).
struct CollectedInputs {
  std::vector<runtime::NamedTensor> tensors;
  std::vector<std::string> generated;  // a line per generated input
  bool done = false;
};

// Whether `in` names a tensor input of known rank of the model and passes Run's check of it.
bool FitsDeclared(const std::vector<runtime::TensorInfo>& infos, const runtime::NamedTensor& in) {
  for (const runtime::TensorInfo& info : infos) {
    if (info.name == in.name)
      return info.type.is_tensor() && info.type.shape && runtime::CheckInput(info, in.tensor).ok();
  }
  return false;
}

// Session options that fix the model's input dims to those of the collected inputs.
void FixDimsToInputs(const Options& options, CollectedInputs& collected, runtime::SessionOptions& session_options) {
  session_options.input_shapes_for =
      [&options, &collected](const std::vector<runtime::TensorInfo>& infos) -> absl::StatusOr<runtime::InputShapes> {
    auto inputs = cli::CollectInputs(options.inputs, infos, &collected.generated);
    if (!inputs.ok()) return inputs.status();
    runtime::InputShapes shapes;
    for (const runtime::NamedTensor& in : *inputs) {
      // An input the model does not take as given is left to Run, which says what is wrong.
      if (in.tensor.is_dense() && FitsDeclared(infos, in)) shapes[in.name] = in.tensor.shape();
    }
    collected.tensors = *std::move(inputs);
    collected.done = true;
    return shapes;
  };
}

absl::Status Main(const Options& options) {
  runtime::SessionOptions session_options = options.session;
  session_options.gpu.max_contexts = std::max(session_options.gpu.max_contexts, options.streams);
  if (!options.quiet && options.explain.empty()) session_options.gpu.progress = cli::PlanProgressPrinter();
  CollectedInputs collected;
  if (!options.dynamic_plan) FixDimsToInputs(options, collected, session_options);
  auto session = runtime::Session::Create(options.model, session_options);
  if (!session.ok() && collected.done && session.status().code() == absl::StatusCode::kInvalidArgument) {
    // The model cannot be planned for these dims (a shape baked in at export): plan for its
    // symbolic dims, and let Run say what does not fit.
    std::fprintf(stderr, "onnxrun: note: no plan for the inputs' dims (%s); planning for the model's symbolic dims\n",
                 std::string(session.status().message()).c_str());
    session_options.input_shapes_for = nullptr;
    session = runtime::Session::Create(options.model, session_options);
  }
  if (!session.ok()) return session.status();
  if (!options.explain.empty()) return Explain(options, **session);
  std::printf("device: %s (%s)\n", runtime::DeviceName((*session)->device()), (*session)->device_reason().c_str());
  if (options.print_graph) std::printf("%s", exec::PrintPlan((*session)->plan()).c_str());
  absl::StatusOr<std::vector<runtime::NamedTensor>> inputs = std::move(collected.tensors);
  if (!collected.done) inputs = cli::CollectInputs(options.inputs, (*session)->inputs(), &collected.generated);
  if (!inputs.ok()) return inputs.status();
  if (options.session.half_inputs) cli::NarrowToSessionInputs(*inputs, (*session)->inputs(), &collected.generated);
  for (const std::string& line : collected.generated) std::printf("%s\n", line.c_str());
  if (options.check) return cli::CheckGpuAgainstCpu(**session, options.session.precision, *inputs);
  if (options.benchmark_runs > 0) {
    absl::Status timed = cli::Benchmark(**session, *inputs, options.benchmark_runs, options.inputs.batch,
                                        options.streams, session_options.gpu.autotune_streams);
    if (!timed.ok() || !options.profile) return timed;
    return cli::ProfileSteps(**session, *inputs);
  }
  const auto start = std::chrono::steady_clock::now();
  auto outputs = (*session)->Run(*inputs);
  if (!outputs.ok()) return outputs.status();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const auto& out : *outputs) PrintSummary(out);
  std::printf("ran in %.2f ms\n", ms);
  cli::PrintStartup(**session, ms / 1000.0);
  if (!options.output_dir.empty()) {
    absl::Status s = WriteOutputs(options.output_dir, **session, *outputs);
    if (!s.ok()) return s;
    std::printf("wrote %zu outputs to %s\n", outputs->size(), options.output_dir.c_str());
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  // A crash prints the signal and a symbolized stack trace (for a bug report) before the process dies.
  absl::InitializeSymbolizer(argv[0]);
  absl::InstallFailureSignalHandler(absl::FailureSignalHandlerOptions());
  cli::ProcessStart();
  cli::KeepFreedHostMemory();
  if (argc > 1 && std::string(argv[1]) == "test") return cli::TestCommand(argc, argv, 2);
  absl::StatusOr<Options> options = ParseArgs(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "onnxrun: %s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  if (options->help) {
    std::printf("%s", Usage().c_str());
    return 0;
  }
  if (options->list_ops || options->version) {
    if (options->version) std::printf("%s", cli::VersionText().c_str());
    if (options->list_ops) PrintOpList();
    return 0;
  }
  absl::Status status = Main(*options);
  if (!status.ok()) {
    std::fprintf(stderr, "onnxrun: error: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
