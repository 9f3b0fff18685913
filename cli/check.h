// onnxrun --check and --benchmark: the GPU-vs-CPU comparison of one plan, and latency statistics.
#ifndef ONNXRUN_CLI_CHECK_H_
#define ONNXRUN_CLI_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/session.h"

namespace cli {

// Tolerance of a precision: relative to the output's largest magnitude (fp32 1e-4, tf32 1e-3,
// fp16 1e-2).
double ToleranceFor(const std::string& precision);

// Runs the session's plan on the GPU and on the CPU with the same inputs; prints per output the max
// abs / relative error, and when they disagree beyond the tolerance, the first step whose output
// diverges. Returns an error when they disagree.
absl::Status CheckGpuAgainstCpu(const runtime::Session& session, const std::string& precision,
                                const std::vector<runtime::NamedTensor>& inputs);

// Warm-up, then `runs` timed runs: prints p50/p90/p99 latency, throughput (batch / p50) and peak
// device memory when on the GPU.
absl::Status Benchmark(const runtime::Session& session, const std::vector<runtime::NamedTensor>& inputs,
                       int runs, int64_t batch);

}  // namespace cli

#endif  // ONNXRUN_CLI_CHECK_H_
