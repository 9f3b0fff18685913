// The measured choice between a FusedGraph step's cuDNN operation graph and its split form (the
// conv/matmul on legacy cuDNN, each epilogue op on an own kernel): both are timed on the step's
// real inputs at the first run for its dims (before any CUDA graph capture), the faster is kept
// (the graph unless the split is at least 5% faster), and the decision is stored in the plan cache
// next to the plans, so a warm start does not time again. --explain shows both times.
#include <chrono>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_run_util.h"

namespace exec {
namespace {

constexpr int kTimedRuns = 3;
constexpr double kSplitMargin = 0.95;  // the split must take under 95% of the graph's time

// "graph 0.123 0.456" / "split 0.123 0.456" (graph ms, split ms; -1 when the split failed).
struct Decision {
  bool split = false;
  double graph_ms = 0, split_ms = -1;
};
std::string Encode(const Decision& d) {
  return absl::StrFormat("%s %.6f %.6f", d.split ? "split" : "graph", d.graph_ms, d.split_ms);
}
std::optional<Decision> Decode(const std::string& blob) {
  std::vector<std::string> parts = absl::StrSplit(blob, ' ');
  Decision d;
  if (parts.size() != 3 || (parts[0] != "split" && parts[0] != "graph") || !absl::SimpleAtod(parts[1], &d.graph_ms) ||
      !absl::SimpleAtod(parts[2], &d.split_ms)) {
    return std::nullopt;
  }
  d.split = parts[0] == "split";
  return d;
}

std::string Describe(const Decision& d, bool from_cache) {
  const std::string split = d.split_ms < 0 ? "not possible" : absl::StrFormat("%.3f ms", d.split_ms);
  return absl::StrFormat("measured%s: cuDNN graph %.3f ms, split (legacy conv + own kernels) %s -> %s",
                         from_cache ? " (decision from the plan cache)" : " at the first run for these dims",
                         d.graph_ms, split, d.split ? "split" : "graph");
}

}  // namespace

bool CudaExecutor::SplitRunsOnDevice(size_t index, const std::vector<DeviceTensor>& values) const {
  const ir::Node& anchor = plan_.graph.node(plan_.steps[index].nodes[0]);
  if (anchor.op_type == "Gemm") return true;  // as a 1x1 conv (other forms: found out by the untimed run)
  return anchor.op_type == "Conv" && values[anchor.inputs[0]].dims.size() == 4;
}

absl::Status CudaExecutor::ChooseGraphOrSplit(size_t index, FusedEntry& entry, std::vector<DeviceTensor>& values) {
  entry.choice = FusedEntry::Choice::kGraph;
  if (!options_.measure_choices || Capturing() || !SplitRunsOnDevice(index, values)) return absl::OkStatus();
  const std::string graph_note = notes_[index];
  const std::string key =
      absl::StrCat("onnxrun measured choice v1\n", gpu_signature_, "\n", SpecSignature(entry.lowered.spec));
  const bool cached = cache_ && cache_->enabled();
  std::optional<Decision> decision;
  if (cached) {
    std::string warning;
    if (std::optional<std::string> blob = cache_->Get(key, &warning)) decision = Decode(*blob);
    if (!warning.empty()) cache_warnings_.push_back(warning);
  }
  const bool from_cache = decision.has_value();
  if (!from_cache) {
    const auto start = std::chrono::steady_clock::now();
    // Each candidate run first drops the step's outputs of the run before, so that it reuses their
    // memory instead of holding a second copy (at batch 256 a stem's output is 400 MB).
    const std::vector<ir::ValueId> outputs = plan_.steps[index].outputs;
    auto drop_outputs = [&] {
      for (ir::ValueId out : outputs) values[out] = DeviceTensor();
    };
    absl::StatusOr<double> graph_ms = TimeGpuMs(
        [&] {
          drop_outputs();
          return ExecuteFused(index, entry, values);
        },
        stream_, kTimedRuns);
    if (!graph_ms.ok()) return graph_ms.status();
    const bool host_before = ran_on_host_;
    ran_on_host_ = false;
    drop_outputs();
    const absl::Status first_split = RunSplit(index, absl::OkStatus(), values);  // untimed: where does it run?
    const bool split_on_device = first_split.ok() && !ran_on_host_;
    absl::StatusOr<double> split_ms = absl::UnavailableError("the split form does not stay on the device");
    if (split_on_device)
      split_ms = TimeGpuMs(
          [&] {
            drop_outputs();
            return RunSplit(index, absl::OkStatus(), values);
          },
          stream_, kTimedRuns);
    ran_on_host_ = host_before;
    decision = Decision{split_ms.ok() && split_on_device && *split_ms < kSplitMargin * *graph_ms, *graph_ms,
                        split_ms.ok() && split_on_device ? *split_ms : -1.0};
    ++measured_.timed;
    measured_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (cached) {
      absl::Status stored = cache_->Put(key, Encode(*decision));
      if (!stored.ok()) cache_warnings_.push_back(absl::StrCat("plan cache: ", stored.message()));
    }
  } else {
    ++measured_.from_cache;
  }
  if (decision->split) {
    ++measured_.split;
    entry.choice = FusedEntry::Choice::kSplit;
    entry.note = absl::StrCat(
        "split into single nodes: the conv/matmul on legacy cuDNN, each following op on an "
        "own kernel (",
        Describe(*decision, from_cache), ")");
  } else {
    entry.note = absl::StrCat(graph_note, " (", Describe(*decision, from_cache), ")");
  }
  return absl::OkStatus();
}

}  // namespace exec
