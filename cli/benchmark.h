// onnxrun --benchmark N [--streams K]: latency percentiles of one request at a time, and with K
// requests in flight (K threads on one Session, each run on its own execution context).
#ifndef ONNXRUN_CLI_BENCHMARK_H_
#define ONNXRUN_CLI_BENCHMARK_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "runtime/session.h"

namespace cli {

// Warm-up, then `runs` timed runs one at a time: prints p50/p90/p99 latency (host to host), on the
// GPU also the p50 of GPU compute alone (inputs on the device to outputs on the device) and how
// runs execute (CUDA graph or step by step), throughput (batch / p50) and peak device memory.
// With `streams` > 1, then `streams` threads each warm up and time `runs` runs at once: prints the
// throughput (and, on the GPU, its share of the GPU-compute throughput) and latency percentiles.
// On the GPU the inputs are first copied to page-locked memory (Session::AllocateHostTensor), as
// an application streaming requests would keep them. `tuned_for_streams` is the session's
// CudaExecutorOptions::autotune_streams (the K-in-flight line says how its plans were tuned).
absl::Status Benchmark(const runtime::Session& session, const std::vector<runtime::NamedTensor>& inputs, int runs,
                       int64_t batch, int streams = 1, int tuned_for_streams = 1);

}  // namespace cli

#endif  // ONNXRUN_CLI_BENCHMARK_H_
