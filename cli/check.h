// onnxrun --check and --profile: the GPU-vs-CPU comparison of one plan, and per-step times.
#ifndef ONNXRUN_CLI_CHECK_H_
#define ONNXRUN_CLI_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/session.h"

namespace cli {

// Tolerance of a precision: relative to the output's largest magnitude (fp32 1e-4, tf32 and fp16
// 1e-2, bf16 8e-2).
double ToleranceFor(const std::string& precision);

// Per output of a GPU-vs-CPU comparison: max |gpu - cpu|, that relative to max|cpu|, and whether
// the relative error is within ToleranceFor(precision).
struct OutputAgreement {
  std::string name;
  double max_abs = 0;
  double relative = 0;
  bool ok = true;
};

// The GPU and CPU runs of one plan on the same inputs: both outputs, the per-output agreement, and
// when they disagree, the first step whose output diverges ("first divergence: step #12 FusedGraph
// Conv+Relu, value 'x': max abs error .., relative ..", empty when no step diverges).
struct GpuCpuComparison {
  std::vector<runtime::NamedTensor> gpu_outputs;
  std::vector<runtime::NamedTensor> cpu_outputs;
  std::vector<OutputAgreement> outputs;
  std::string first_divergence;
  // When they disagree: the three steps that added the most relative error, one line each ("error
  // grows at step #40 FusedGraph Conv+Add, value 'x': inputs 0.0012 -> 0.0051").
  std::vector<std::string> largest_error_growth;
  bool agree = true;
};

// Runs the session's plan step by step on the GPU (recording every step output) and on the CPU, and
// compares them. FailedPrecondition when the session has no GPU; prints nothing.
absl::StatusOr<GpuCpuComparison> CompareGpuWithCpu(const runtime::Session& session, const std::string& precision,
                                                   const std::vector<runtime::NamedTensor>& inputs);

// Runs the session's plan on the GPU and on the CPU with the same inputs; prints per output the max
// abs / relative error, and when they disagree beyond the tolerance, the first step whose output
// diverges. Returns an error when they disagree.
absl::Status CheckGpuAgainstCpu(const runtime::Session& session, const std::string& precision,
                                const std::vector<runtime::NamedTensor>& inputs);

// One step-by-step run with the time of every step (GPU time on the GPU, wall time on the CPU);
// prints the slowest steps with how they ran, and the totals per step pattern and kind.
absl::Status ProfileSteps(const runtime::Session& session, const std::vector<runtime::NamedTensor>& inputs);

}  // namespace cli

#endif  // ONNXRUN_CLI_CHECK_H_
