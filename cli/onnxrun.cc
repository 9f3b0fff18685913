// onnxrun: run an ONNX model from the command line (see --help). Exit code 0
// only on success; otherwise one line on stderr saying what went wrong.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/check.h"
#include "cli/npy.h"
#include "cli/startup.h"
#include "importer/tensor_proto.h"
#include "ir/half.h"
#include "ops/op_def.h"
#include "partitioner/explain.h"
#include "runtime/session.h"

namespace {

constexpr char kUsage[] = R"(usage: onnxrun [options] MODEL.onnx

Runs an ONNX model and prints each output's name, shape, dtype and a summary.
Inputs not given are generated (deterministic random; symbolic dims: the first is --batch, others 1).

options:
  --device cpu|cuda|auto   where to run (default auto: the GPU when usable, else the CPU)
  --input NAME=FILE        an input from a .pb (TensorProto) or .npy file; repeatable
  --input-dir DIR          inputs from DIR/input_<i>.pb, in graph-input order (ONNX test layout)
  --output-dir DIR         write outputs as DIR/output_<i>.pb (TensorProto), in graph-output order
  --batch N                size of symbolic batch dims of generated inputs (default 1)
  --seed N                 seed of generated inputs (default 0)
  --precision fp32|tf32|fp16  compute precision (default fp32; fp16: fp16 tensors, fp32 accumulation)
  --no-fuse                run the reference plan: no passes, one kernel step per node
  --explain[=text|json|dot]  print the plan (steps, what fused and why not) and exit
  --check                  run on the GPU and on the CPU and compare (per output, and the first
                           step whose output diverges); exit 1 when they disagree
  --benchmark N            warm up, then time N runs: p50/p90/p99 latency (host to host, and GPU
                           compute alone), throughput, peak memory
  --profile                with --benchmark on the GPU: one more run timed step by step; prints
                           the slowest steps and the time per step kind
  --no-cuda-graph          GPU: run step by step instead of capturing a CUDA graph and replaying it
  --plan-cache DIR         GPU: where built cuDNN plans are kept across runs (default
                           $XDG_CACHE_HOME/onnxrun, else ~/.cache/onnxrun)
  --no-plan-cache          GPU: build every cuDNN plan, read and write no cache
  --build-threads N        GPU: threads building cuDNN plans (default: hardware threads, at most 16)
  --no-plan-sharing        GPU: build a plan for every step, also for steps identical to another
                           (to measure what sharing saves)
  --autotune               GPU: time the first 4 engine configs of every cuDNN plan on the real
                           shapes and keep the fastest (kept in the plan cache)
  --quiet                  no progress lines while cuDNN plans build
  --print-graph            print the plan, one line per step, before running
  --list-ops               print the supported ONNX op types and exit
  -h, --help               this text
)";

struct Options {
  std::string model;
  runtime::Device device = runtime::Device::kAuto;
  std::vector<std::pair<std::string, std::string>> input_files;
  std::string input_dir, output_dir;
  int64_t batch = 1;
  uint64_t seed = 0;
  bool print_graph = false;
  std::string precision = "fp32";
  bool fuse = true;
  std::string explain;  // "", "text", "json", "dot"
  bool check = false;
  int benchmark_runs = 0;
  bool profile = false;
  bool cuda_graph = true;
  bool plan_cache = true;
  std::string plan_cache_dir;
  int build_threads = 0;
  bool share_plans = true;
  bool autotune = false;
  bool quiet = false;
  bool list_ops = false;
  bool help = false;
};

absl::Status UsageError(const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(message, " (see onnxrun --help)"));
}

absl::StatusOr<Options> ParseArgs(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const size_t eq = arg.find('=');
    const bool has_inline = absl::StartsWith(arg, "--") && eq != std::string::npos;
    if (has_inline) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    auto next = [&]() -> absl::StatusOr<std::string> {
      if (has_inline) return value;
      if (i + 1 >= argc) return UsageError(absl::StrCat(arg, " needs a value"));
      return std::string(argv[++i]);
    };
    if (arg == "-h" || arg == "--help") {
      options.help = true;
    } else if (arg == "--list-ops") {
      options.list_ops = true;
    } else if (arg == "--explain") {
      options.explain = has_inline ? value : "text";
      if (options.explain != "text" && options.explain != "json" && options.explain != "dot") {
        return UsageError(absl::StrCat("--explain takes text, json or dot, not '", options.explain, "'"));
      }
    } else if (arg == "--check") {
      options.check = true;
    } else if (arg == "--no-fuse") {
      options.fuse = false;
    } else if (arg == "--no-cuda-graph") {
      options.cuda_graph = false;
    } else if (arg == "--no-plan-cache") {
      options.plan_cache = false;
    } else if (arg == "--no-plan-sharing") {
      options.share_plans = false;
    } else if (arg == "--autotune") {
      options.autotune = true;
    } else if (arg == "--quiet") {
      options.quiet = true;
    } else if (arg == "--profile") {
      options.profile = true;
    } else if (arg == "--print-graph") {
      options.print_graph = true;
    } else if (arg == "--device" || arg == "--input" || arg == "--input-dir" || arg == "--output-dir" ||
               arg == "--batch" || arg == "--seed" || arg == "--precision" || arg == "--benchmark" ||
               arg == "--plan-cache" || arg == "--build-threads") {
      absl::StatusOr<std::string> v = next();
      if (!v.ok()) return v.status();
      if (arg == "--device") {
        if (*v == "cpu")
          options.device = runtime::Device::kCpu;
        else if (*v == "cuda")
          options.device = runtime::Device::kCuda;
        else if (*v == "auto")
          options.device = runtime::Device::kAuto;
        else
          return UsageError(absl::StrCat("--device must be cpu, cuda or auto, not '", *v, "'"));
      } else if (arg == "--input") {
        const size_t sep = v->find('=');
        if (sep == std::string::npos || sep == 0) return UsageError("--input needs NAME=FILE");
        options.input_files.emplace_back(v->substr(0, sep), v->substr(sep + 1));
      } else if (arg == "--precision") {
        if (*v != "fp32" && *v != "tf32" && *v != "fp16") {
          return UsageError(absl::StrCat("--precision must be fp32, tf32 or fp16, not '", *v, "'"));
        }
        options.precision = *v;
      } else if (arg == "--benchmark") {
        if (!absl::SimpleAtoi(*v, &options.benchmark_runs) || options.benchmark_runs < 1) {
          return UsageError("--benchmark needs N >= 1");
        }
      } else if (arg == "--plan-cache") {
        if (v->empty()) return UsageError("--plan-cache needs a folder");
        options.plan_cache_dir = *v;
      } else if (arg == "--build-threads") {
        if (!absl::SimpleAtoi(*v, &options.build_threads) || options.build_threads < 1 || options.build_threads > 256) {
          return UsageError("--build-threads needs N from 1 to 256");
        }
      } else if (arg == "--input-dir") {
        options.input_dir = *v;
      } else if (arg == "--output-dir") {
        options.output_dir = *v;
      } else if (arg == "--batch") {
        if (!absl::SimpleAtoi(*v, &options.batch) || options.batch < 1) return UsageError("--batch needs N >= 1");
      } else if (!absl::SimpleAtoi(*v, &options.seed)) {
        return UsageError("--seed needs a number");
      }
    } else if (absl::StartsWith(arg, "-")) {
      return UsageError(absl::StrCat("unknown option '", arg, "'"));
    } else if (options.model.empty()) {
      options.model = arg;
    } else {
      return UsageError(absl::StrCat("unexpected argument '", arg, "'"));
    }
  }
  if (!options.help && !options.list_ops && options.model.empty()) return UsageError("no model given");
  if (options.profile && options.benchmark_runs == 0) return UsageError("--profile goes with --benchmark N");
  return options;
}

absl::StatusOr<ir::Tensor> ReadTensorFile(const std::string& path) {
  if (absl::EndsWith(path, ".npy")) return cli::ReadNpy(path);
  return importer::ReadTensorProtoFile(path);
}

// Deterministic random data: floats in [-1, 1), integers in [0, 4), bools.
absl::StatusOr<ir::Tensor> GenerateInput(const runtime::TensorInfo& info, int64_t batch, uint64_t seed) {
  if (!info.type.shape) {
    return absl::InvalidArgumentError(absl::StrCat("input '", info.name, "' has unknown rank: give it with --input"));
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < info.type.shape->size(); ++i) {
    const ir::Dim& d = (*info.type.shape)[i];
    dims.push_back(d.known() ? d.value : (i == 0 ? batch : 1));
  }
  absl::StatusOr<ir::Tensor> t = ir::Tensor::Create(info.type.dtype, dims);
  if (!t.ok()) return t.status();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 3);
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    switch (t->dtype()) {
      case ir::DType::kFloat32: t->data<float>()[i] = static_cast<float>(real(rng)); break;
      case ir::DType::kFloat64: t->data<double>()[i] = real(rng); break;
      case ir::DType::kFloat16: t->data<ir::Half>()[i] = ir::Half(static_cast<float>(real(rng))); break;
      case ir::DType::kInt64: t->data<int64_t>()[i] = small(rng); break;
      case ir::DType::kInt32: t->data<int32_t>()[i] = small(rng); break;
      case ir::DType::kBool: t->data<uint8_t>()[i] = small(rng) & 1; break;
      default: static_cast<uint8_t*>(t->raw_data())[i * ir::DTypeSize(t->dtype())] = small(rng); break;
    }
  }
  return t;
}

absl::StatusOr<std::vector<runtime::NamedTensor>> CollectInputs(const Options& options, const runtime::Session& session,
                                                                bool verbose = true) {
  std::vector<runtime::NamedTensor> inputs;
  auto given = [&](const std::string& name) {
    for (const auto& in : inputs)
      if (in.name == name) return true;
    return false;
  };
  for (const auto& [name, path] : options.input_files) {
    absl::StatusOr<ir::Tensor> t = ReadTensorFile(path);
    if (!t.ok()) return t.status();
    inputs.push_back({name, *std::move(t)});
  }
  const auto& infos = session.inputs();
  if (!options.input_dir.empty()) {
    if (!std::filesystem::is_directory(options.input_dir)) {
      return absl::NotFoundError(absl::StrCat("--input-dir '", options.input_dir, "' is not a folder"));
    }
    for (size_t i = 0; i < infos.size(); ++i) {
      std::string path = absl::StrCat(options.input_dir, "/input_", i, ".pb");
      if (!std::filesystem::exists(path) || given(infos[i].name)) continue;
      absl::StatusOr<ir::Tensor> t = importer::ReadTensorProtoFile(path);
      if (!t.ok()) return t.status();
      inputs.push_back({infos[i].name, *std::move(t)});
    }
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    if (given(infos[i].name)) continue;
    absl::StatusOr<ir::Tensor> t = GenerateInput(infos[i], options.batch, options.seed + i);
    if (!t.ok()) return t.status();
    if (verbose) {
      std::printf("input  '%s': generated %s%s\n", infos[i].name.c_str(), ir::DTypeName(t->dtype()).c_str(),
                  ir::ShapeToString(t->shape()).c_str());
    }
    inputs.push_back({infos[i].name, *std::move(t)});
  }
  return inputs;
}

void PrintSummary(const runtime::NamedTensor& out) {
  const ir::Tensor& t = out.tensor;
  std::string line =
      absl::StrFormat("output '%s': %s%s", out.name, ir::DTypeName(t.dtype()), ir::ShapeToString(t.shape()));
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

absl::Status WriteOutputs(const std::string& dir, const std::vector<runtime::NamedTensor>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat("cannot create --output-dir '", dir, "': ", ec.message()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    absl::Status s =
        importer::WriteTensorProtoFile(outputs[i].tensor, outputs[i].name, absl::StrCat(dir, "/output_", i, ".pb"));
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
  Options quiet = options;
  auto inputs = CollectInputs(quiet, session, /*verbose=*/false);
  if (!inputs.ok()) return inputs.status();
  auto outputs = session.Run(*inputs);
  if (!outputs.ok()) return outputs.status();
  std::printf("on the GPU (%s; engines chosen for batch %lld):\n", session.device_reason().c_str(),
              static_cast<long long>(options.batch));
  const std::vector<std::string> notes = session.gpu_step_notes();
  for (size_t i = 0; i < notes.size(); ++i) std::printf("#%zu %s\n", i, notes[i].c_str());
  return absl::OkStatus();
}

absl::Status Main(const Options& options) {
  runtime::SessionOptions session_options;
  session_options.device = options.device;
  session_options.precision = options.precision;
  session_options.fuse = options.fuse;
  session_options.cuda_graph = options.cuda_graph;
  session_options.plan_cache = options.plan_cache;
  session_options.plan_cache_dir = options.plan_cache_dir;
  session_options.build_threads = options.build_threads;
  session_options.share_plans = options.share_plans;
  if (options.autotune) session_options.autotune_plans = 4;
  if (!options.quiet && options.explain.empty()) session_options.progress = cli::PlanProgressPrinter();
  auto session = runtime::Session::Create(options.model, session_options);
  if (!session.ok()) return session.status();
  if (!options.explain.empty()) return Explain(options, **session);
  std::printf("device: %s (%s)\n", runtime::DeviceName((*session)->device()), (*session)->device_reason().c_str());
  if (options.print_graph) std::printf("%s", exec::PrintPlan((*session)->plan()).c_str());
  auto inputs = CollectInputs(options, **session);
  if (!inputs.ok()) return inputs.status();
  if (options.check) return cli::CheckGpuAgainstCpu(**session, options.precision, *inputs);
  if (options.benchmark_runs > 0) {
    absl::Status timed = cli::Benchmark(**session, *inputs, options.benchmark_runs, options.batch);
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
    absl::Status s = WriteOutputs(options.output_dir, *outputs);
    if (!s.ok()) return s;
    std::printf("wrote %zu outputs to %s\n", outputs->size(), options.output_dir.c_str());
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  cli::ProcessStart();
  absl::StatusOr<Options> options = ParseArgs(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "onnxrun: %s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  if (options->help) {
    std::printf("%s", kUsage);
    return 0;
  }
  if (options->list_ops) {
    for (const std::string& op : ops::SupportedOpTypes()) std::printf("%s\n", op.c_str());
    std::printf("Constant\nUpsample\n");  // consumed or rewritten by the importer
    return 0;
  }
  absl::Status status = Main(*options);
  if (!status.ok()) {
    std::fprintf(stderr, "onnxrun: error: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
