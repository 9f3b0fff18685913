// --check (GPU vs CPU, first diverging step) and --benchmark (latency
// percentiles).
#include "cli/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cli {
namespace {

struct Error {
  double max_abs = 0, max_ref = 0;
  double relative() const { return max_ref > 0 ? max_abs / max_ref : max_abs; }
};

Error Compare(const ir::Tensor& got, const ir::Tensor& want) {
  Error e;
  if (got.shape() != want.shape() || got.dtype() != want.dtype() || got.is_none() != want.is_none() ||
      got.elements().size() != want.elements().size()) {
    e.max_abs = INFINITY;
    return e;
  }
  if (got.is_map() != want.is_map()) {
    e.max_abs = INFINITY;
    return e;
  }
  if (want.is_map()) {  // keys must be equal; the values' error
    if (Compare(got.map_keys(), want.map_keys()).max_abs != 0) e.max_abs = INFINITY;
    const Error values = Compare(got.map_values(), want.map_values());
    e.max_abs = std::max(e.max_abs, values.max_abs);
    e.max_ref = values.max_ref;
    return e;
  }
  for (size_t k = 0; k < want.elements().size(); ++k) {  // a sequence: its worst element
    const Error element = Compare(got.elements()[k], want.elements()[k]);
    e.max_abs = std::max(e.max_abs, element.max_abs);
    e.max_ref = std::max(e.max_ref, element.max_ref);
  }
  if (want.strings() != nullptr) {  // strings: equal, or infinitely far apart
    if (!std::equal(want.strings(), want.strings() + want.num_elements(), got.strings())) e.max_abs = INFINITY;
    return e;
  }
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double g = got.GetAsDouble(i), w = want.GetAsDouble(i);
    // Equal values (the same infinity included) and NaN against NaN agree; the scale is finite.
    const double diff = (g == w || (std::isnan(g) && std::isnan(w))) ? 0 : std::fabs(g - w);
    e.max_abs = std::max(e.max_abs, std::isnan(diff) ? INFINITY : diff);
    if (std::isfinite(w)) e.max_ref = std::max(e.max_ref, std::fabs(w));
  }
  return e;
}

// One compared step output: the largest relative error among the step's inputs, and its own.
struct ErrorGrowth {
  size_t step;
  ir::ValueId value;
  double input_error, output_error;
};

double MaxInputError(const exec::Step& step, const std::map<ir::ValueId, double>& value_error) {
  double worst = 0;
  for (ir::ValueId in : step.inputs) {
    auto it = value_error.find(in);
    if (it != value_error.end() && std::isfinite(it->second)) worst = std::max(worst, it->second);
  }
  return worst;
}

// The three steps that added the most relative error (own output's minus their inputs' worst), one
// line each: where precision is lost, as opposed to where a loss first crosses the tolerance.
std::vector<std::string> DescribeLargestGrowth(const exec::Plan& plan, std::vector<ErrorGrowth> growth) {
  std::sort(growth.begin(), growth.end(), [](const ErrorGrowth& a, const ErrorGrowth& b) {
    return a.output_error - a.input_error > b.output_error - b.input_error;
  });
  std::vector<std::string> lines;
  for (size_t i = 0; i < growth.size() && i < 3; ++i) {
    const ErrorGrowth& g = growth[i];
    if (!(g.output_error > g.input_error)) break;
    const exec::Step& s = plan.steps[g.step];
    lines.push_back(absl::StrFormat("error grows at step #%d %s %s, value '%s': inputs %.3g -> %.3g", g.step,
                                    exec::StepKindName(s.kind), s.pattern, plan.graph.value(g.value).name,
                                    g.input_error, g.output_error));
  }
  return lines;
}

}  // namespace

double ToleranceFor(const std::string& precision) {
  if (precision == "fp16") return 1e-2;
  if (precision == "bf16") return 8e-2;  // fp16's x 8, the ratio of their unit roundoffs
  // fp16's: TF32 rounds every conv/matmul operand to fp16's 10-bit mantissa (the same unit roundoff,
  // 2^-11). Over a deep network that is fp16's order of error: PyTorch's own TF32 runs of the zoo's
  // mobilenet_v2 / efficientnet_b0 are 4.0e-3 / 2.9e-3 of max|output| from float64, over the 1e-3
  // this was before.
  if (precision == "tf32") return 1e-2;
  return 1e-4;
}

absl::StatusOr<GpuCpuComparison> CompareGpuWithCpu(const runtime::Session& session, const std::string& precision,
                                                   const std::vector<runtime::NamedTensor>& inputs) {
  if (session.device() != runtime::Device::kCuda) {
    return absl::FailedPreconditionError("--check compares the GPU with the CPU: no GPU is in use");
  }
  std::map<ir::ValueId, std::pair<size_t, ir::Tensor>> gpu_values;
  auto gpu = session.RunOn(runtime::Device::kCuda, inputs, [&](size_t step, ir::ValueId v, const ir::Tensor& t) {
    gpu_values[v] = {step, t.Clone()};
  });
  if (!gpu.ok()) return gpu.status();
  const double tolerance = ToleranceFor(precision);
  GpuCpuComparison result;
  std::map<ir::ValueId, double> value_error;  // relative error of each compared value
  std::vector<ErrorGrowth> growth;
  auto cpu = session.RunOn(runtime::Device::kCpu, inputs, [&](size_t step, ir::ValueId v, const ir::Tensor& t) {
    if (!gpu_values.count(v)) return;
    const Error e = Compare(gpu_values[v].second, t);
    value_error[v] = e.relative();
    const exec::Step& s = session.plan().steps[step];
    growth.push_back({step, v, MaxInputError(s, value_error), e.relative()});
    if (result.first_divergence.empty() && e.relative() > tolerance) {
      result.first_divergence =
          absl::StrCat("first divergence: step #", step, " ", exec::StepKindName(s.kind), " ", s.pattern, ", value '",
                       session.plan().graph.value(v).name, "': max abs error ", e.max_abs, ", relative ", e.relative());
    }
  });
  if (!cpu.ok()) return cpu.status();
  for (size_t i = 0; i < cpu->size(); ++i) {
    const Error e = Compare((*gpu)[i].tensor, (*cpu)[i].tensor);
    result.outputs.push_back({(*cpu)[i].name, e.max_abs, e.relative(), e.relative() <= tolerance});
    result.agree = result.agree && result.outputs.back().ok;
  }
  if (!result.agree) result.largest_error_growth = DescribeLargestGrowth(session.plan(), std::move(growth));
  result.gpu_outputs = *std::move(gpu);
  result.cpu_outputs = *std::move(cpu);
  return result;
}

absl::Status CheckGpuAgainstCpu(const runtime::Session& session, const std::string& precision,
                                const std::vector<runtime::NamedTensor>& inputs) {
  absl::StatusOr<GpuCpuComparison> compared = CompareGpuWithCpu(session, precision, inputs);
  if (!compared.ok()) return compared.status();
  const double tolerance = ToleranceFor(precision);
  bool agree = compared->agree;
  for (const OutputAgreement& out : compared->outputs) {
    std::printf(
        "check '%s': max abs error %.3g, relative to max|cpu| %.3g "
        "(tolerance %.0e) %s\n",
        out.name.c_str(), out.max_abs, out.relative, tolerance, out.ok ? "OK" : "DIFFERS");
  }
  if (!compared->first_divergence.empty()) std::printf("%s\n", compared->first_divergence.c_str());
  for (const std::string& line : compared->largest_error_growth) std::printf("%s\n", line.c_str());
  const std::vector<runtime::NamedTensor>* cpu = &compared->cpu_outputs;
  // Two plain runs more: the first captures a CUDA graph (when the session uses
  // them), the second replays it; the replayed outputs must agree with the CPU
  // too.
  absl::StatusOr<std::vector<runtime::NamedTensor>> replayed = session.Run(inputs);
  if (replayed.ok()) replayed = session.Run(inputs);
  if (!replayed.ok()) return replayed.status();
  for (size_t i = 0; i < cpu->size(); ++i) {
    const Error e = Compare((*replayed)[i].tensor, (*cpu)[i].tensor);
    const bool ok = e.relative() <= tolerance;
    agree = agree && ok;
    std::printf("check '%s' again (%s): max abs error %.3g, relative %.3g %s\n", (*cpu)[i].name.c_str(),
                session.gpu()->graph_status().c_str(), e.max_abs, e.relative(), ok ? "OK" : "DIFFERS");
  }
  if (!agree) return absl::InternalError("GPU and CPU outputs differ beyond the tolerance");
  return absl::OkStatus();
}

// Prints the slowest steps, then the time per step pattern (kind + fused op types, the 12 costliest)
// and per step kind.
static void PrintProfile(const exec::Plan& plan, const std::vector<std::string>& notes,
                         const std::vector<double>& step_ms, const char* device, const char* how) {
  std::map<std::string, std::pair<double, int>> by_kind, by_pattern;
  std::vector<size_t> order(step_ms.size());
  double total = 0;
  for (size_t s = 0; s < order.size(); ++s) {
    order[s] = s;
    total += step_ms[s];
    const std::string kind = exec::StepKindName(plan.steps[s].kind);
    for (auto* entry : {&by_kind[kind], &by_pattern[absl::StrCat(kind, " ", plan.steps[s].pattern)]}) {
      entry->first += step_ms[s];
      ++entry->second;
    }
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return step_ms[a] > step_ms[b]; });
  std::printf("profile: %s, %.3f ms of %s time in %zu steps; slowest:\n", how, total, device, order.size());
  for (size_t i = 0; i < std::min<size_t>(15, order.size()); ++i) {
    const size_t s = order[i];
    const exec::Step& step = plan.steps[s];
    const std::string note = s < notes.size() && !notes[s].empty() ? absl::StrCat(": ", notes[s]) : "";
    std::printf("  #%-4zu %8.3f ms %5.1f%%  %s %s '%s'%s\n", s, step_ms[s], 100 * step_ms[s] / total,
                exec::StepKindName(step.kind), step.pattern.c_str(), plan.graph.node(step.nodes[0]).name.c_str(),
                note.c_str());
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> patterns(by_pattern.begin(), by_pattern.end());
  std::sort(patterns.begin(), patterns.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::printf("time per step pattern (costliest %zu of %zu):\n", std::min<size_t>(12, patterns.size()),
              patterns.size());
  for (size_t i = 0; i < std::min<size_t>(12, patterns.size()); ++i) {
    const auto& [pattern, entry] = patterns[i];
    std::printf("  %-40s %3d steps %8.3f ms %5.1f%%  (%.4f ms each)\n", pattern.c_str(), entry.second, entry.first,
                100 * entry.first / total, entry.first / entry.second);
  }
  std::printf("time per step kind:\n");
  for (const auto& [kind, entry] : by_kind) {
    std::printf("  %-10s %3d steps %8.3f ms %5.1f%%\n", kind.c_str(), entry.second, entry.first,
                100 * entry.first / total);
  }
}

// On the CPU a step's time is the wall time from the previous step's outputs to its own (the
// executor reports each step's outputs as soon as the step has run). --profile follows
// --benchmark's runs, so this run is warm.
static absl::StatusOr<std::vector<double>> TimeCpuSteps(const runtime::Session& session,
                                                        const std::vector<runtime::NamedTensor>& inputs) {
  std::vector<double> step_ms(session.plan().steps.size(), 0.0);
  auto last = std::chrono::steady_clock::now();
  size_t last_step = step_ms.size();
  absl::StatusOr<std::vector<runtime::NamedTensor>> timed = session.RunOn(
      runtime::Device::kCpu, inputs,
      [&](size_t step, ir::ValueId, const ir::Tensor&) {
        if (step == last_step) return;
        const auto now = std::chrono::steady_clock::now();
        step_ms[step] += std::chrono::duration<double, std::milli>(now - last).count();
        last = now;
        last_step = step;
      },
      /*observer_reads_values=*/false);
  if (!timed.ok()) return timed.status();
  return step_ms;
}

absl::Status ProfileSteps(const runtime::Session& session, const std::vector<runtime::NamedTensor>& inputs) {
  if (session.device() == runtime::Device::kCpu) {
    absl::StatusOr<std::vector<double>> step_ms = TimeCpuSteps(session, inputs);
    if (!step_ms.ok()) return step_ms.status();
    PrintProfile(session.plan(), {}, *step_ms, "CPU", "one step-by-step run");
    return absl::OkStatus();
  }
  if (session.gpu() == nullptr) return absl::FailedPreconditionError("--profile: no device in use");
  absl::StatusOr<std::vector<runtime::NamedTensor>> checked = session.Run(inputs);  // plans built
  if (!checked.ok()) return checked.status();
  std::vector<ir::Tensor> ordered;
  for (const runtime::TensorInfo& info : session.inputs()) {
    for (const runtime::NamedTensor& in : inputs) {
      if (in.name == info.name) ordered.push_back(in.tensor);
    }
  }
  absl::StatusOr<std::vector<double>> step_ms = session.gpu()->ProfileSteps(ordered);
  if (!step_ms.ok()) return step_ms.status();
  const std::string how = absl::StrCat("per step the median of ", exec::CudaExecutor::kProfileRuns,
                                       " step-by-step runs, the GPU held while the host enqueues each");
  PrintProfile(session.plan(), session.gpu_step_notes(), *step_ms, "GPU", how.c_str());
  return absl::OkStatus();
}

}  // namespace cli
