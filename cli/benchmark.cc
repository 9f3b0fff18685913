// --benchmark: one request at a time, then (--streams K) K requests in flight; see benchmark.h.
#include "cli/benchmark.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"

namespace cli {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// Dense inputs copied into page-locked host memory on a GPU session (others kept as they are).
absl::StatusOr<std::vector<runtime::NamedTensor>> StagedInputs(const runtime::Session& session,
                                                               const std::vector<runtime::NamedTensor>& inputs) {
  if (session.gpu() == nullptr) return inputs;
  std::vector<runtime::NamedTensor> staged;
  for (const runtime::NamedTensor& in : inputs) {
    if (!in.tensor.is_dense() || in.tensor.dtype() == ir::DType::kString) {
      staged.push_back(in);
      continue;
    }
    absl::StatusOr<ir::Tensor> t = session.AllocateHostTensor(in.tensor.dtype(), in.tensor.shape());
    if (!t.ok()) return t.status();
    absl::Status copied = t->CopyDataFrom(in.tensor);
    if (!copied.ok()) return copied;
    staged.push_back({in.name, *std::move(t)});
  }
  return staged;
}

// Releases every waiting thread once `count` have arrived.
class StartLine {
 public:
  explicit StartLine(int count) : waiting_(count) {}
  void ArriveAndWait() {
    std::unique_lock<std::mutex> lock(mu_);
    if (--waiting_ == 0) {
      start_ = Clock::now();
      cv_.notify_all();
    }
    cv_.wait(lock, [this] { return waiting_ == 0; });
  }
  Clock::time_point start() const { return start_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_;
  Clock::time_point start_;
};

// `streams` threads, each `warmup` untimed runs then `runs` timed ones, all started together.
absl::Status RunInFlight(const runtime::Session& session, const std::vector<runtime::NamedTensor>& inputs, int runs,
                         int warmup, int64_t batch, int streams, double compute_p50, int tuned_for_streams) {
  StartLine start_line(streams);
  std::vector<std::vector<double>> latencies(streams);
  std::vector<absl::Status> errors(streams);
  std::vector<std::thread> threads;
  for (int k = 0; k < streams; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < warmup && errors[k].ok(); ++i) errors[k] = session.Run(inputs).status();
      start_line.ArriveAndWait();
      for (int i = 0; i < runs && errors[k].ok(); ++i) {
        const Clock::time_point start = Clock::now();
        errors[k] = session.Run(inputs).status();
        latencies[k].push_back(MsSince(start));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double wall_ms = MsSince(start_line.start());
  std::vector<double> all;
  for (int k = 0; k < streams; ++k) {
    if (!errors[k].ok()) return errors[k];
    all.insert(all.end(), latencies[k].begin(), latencies[k].end());
  }
  const double items_per_s = static_cast<double>(streams) * runs * batch * 1000.0 / wall_ms;
  std::string share;
  if (compute_p50 > 0) {
    share = absl::StrCat(" = ", static_cast<int>(100 * items_per_s / (batch * 1000.0 / compute_p50) + 0.5),
                         "% of the GPU-compute throughput");
  }
  std::printf(
      "streams: %d requests in flight, %d runs each: %.1f items/s%s; latency p50 %.3f ms, p90 %.3f ms, "
      "p99 %.3f ms\n",
      streams, runs, items_per_s, share.c_str(), Percentile(all, 0.5), Percentile(all, 0.9), Percentile(all, 0.99));
  if (session.gpu() != nullptr) {
    std::printf("execution contexts: %d made, at most %d graph replays ran at once\n",
                session.gpu()->contexts_created(), session.gpu()->max_replays_in_flight());
    if (tuned_for_streams > 1) {
      std::printf("plans: tuned for %d requests in flight (--tune-for-streams)\n", tuned_for_streams);
    } else {
      std::printf("plans: tuned for one request at a time (--tune-for-streams 2 tunes them for requests in flight)\n");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Benchmark(const runtime::Session& session, const std::vector<runtime::NamedTensor>& given, int runs,
                       int64_t batch, int streams, int tuned_for_streams) {
  absl::StatusOr<std::vector<runtime::NamedTensor>> inputs = StagedInputs(session, given);
  if (!inputs.ok()) return inputs.status();
  const int warmup = std::max(3, runs / 10);
  for (int i = 0; i < warmup; ++i) {
    auto out = session.Run(*inputs);
    if (!out.ok()) return out.status();
  }
  std::vector<double> ms, compute_ms;
  for (int i = 0; i < runs; ++i) {
    const Clock::time_point start = Clock::now();
    auto out = session.Run(*inputs);
    if (!out.ok()) return out.status();
    ms.push_back(MsSince(start));
    if (session.gpu() != nullptr) compute_ms.push_back(session.gpu()->last_compute_ms());
  }
  std::printf("benchmark: %d runs after %d warm-up on %s%s: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, %.1f items/s\n",
              runs, warmup, runtime::DeviceName(session.device()),
              session.gpu() != nullptr ? " (inputs in page-locked host memory)" : "", Percentile(ms, 0.5),
              Percentile(ms, 0.9), Percentile(ms, 0.99), batch * 1000.0 / Percentile(ms, 0.5));
  const double compute_p50 = Percentile(compute_ms, 0.5);
  if (session.gpu() != nullptr) {
    std::printf(
        "gpu compute: p50 %.3f ms, p90 %.3f ms (%.1f items/s; inputs and outputs already on the device); "
        "runs: %s\n",
        compute_p50, Percentile(compute_ms, 0.9), batch * 1000.0 / compute_p50, session.gpu()->graph_status().c_str());
    const std::string graph = session.gpu()->graph_description();
    if (!graph.empty()) std::printf("captured graph: %s\n", graph.c_str());
  }
  if (streams > 1) {
    absl::Status in_flight =
        RunInFlight(session, *inputs, runs, warmup, batch, streams, compute_p50, tuned_for_streams);
    if (!in_flight.ok()) return in_flight;
  }
  const int64_t peak = session.peak_device_bytes();
  if (peak >= 0 && session.gpu() != nullptr) {
    const exec::CudaExecutor::PeakParts held = session.gpu()->peak_parts(/*reserved=*/true);
    constexpr double kMiB = 1024.0 * 1024.0;
    std::printf(
        "peak device memory: %.1f MiB in use (%.1f MiB reserved: stream pool %.1f MiB + CUDA graphs %.1f MiB "
        "since the last capture, %.1f MiB before it)\n",
        peak / kMiB, session.gpu()->peak_device_bytes(/*reserved=*/true) / kMiB, held.pool / kMiB, held.graphs / kMiB,
        held.before_capture / kMiB);
  }
  return absl::OkStatus();
}

}  // namespace cli
