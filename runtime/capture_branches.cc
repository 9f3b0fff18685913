// Lets the independent steps of a captured run overlap (see capture_branches.h).
#include "runtime/capture_branches.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/dtype.h"
#include "runtime/capture_order.h"
#include "runtime/cuda_run_util.h"

namespace exec {

struct StepAccessLog::Live {
  std::mutex mu;
  std::map<uintptr_t, uintptr_t> blocks;  // begin -> end of each live block
};

StepAccessLog::StepAccessLog(AllocationHook* inner) : inner_(inner), live_(std::make_shared<Live>()) {}

absl::StatusOr<std::shared_ptr<void>> StepAccessLog::Allocate(size_t bytes, cudaStream_t stream) {
  absl::StatusOr<std::shared_ptr<void>> block = inner_->Allocate(bytes, stream);
  if (!block.ok() || *block == nullptr || bytes == 0) return block;
  const auto begin = reinterpret_cast<uintptr_t>(block->get());
  {
    std::lock_guard<std::mutex> lock(live_->mu);
    live_->blocks[begin] = begin + bytes;
  }
  if (current_ < steps_.size()) steps_[current_].writes.push_back({begin, begin + bytes});
  // The inner block lives exactly as long as this one: its own clock of deaths is unchanged. (Its
  // pointer is taken first: the order in which a call's arguments are evaluated is unspecified.)
  void* const ptr = block->get();
  return std::shared_ptr<void>(ptr, [live = live_, inner = *std::move(block), begin](void*) mutable {
    {
      std::lock_guard<std::mutex> lock(live->mu);
      live->blocks.erase(begin);
    }
    inner.reset();
  });
}

ByteRange StepAccessLog::BlockAt(const void* ptr) const {
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(live_->mu);
  auto it = live_->blocks.upper_bound(p);
  if (it == live_->blocks.begin()) return {};
  --it;
  return p < it->second ? ByteRange{it->first, it->second} : ByteRange{};
}

void StepAccessLog::BeginStep(size_t step, bool self_contained, const std::vector<const void*>& reads) {
  if (steps_.size() <= step) steps_.resize(step + 1);
  current_ = step;
  StepAccesses& accesses = steps_[step];
  accesses.self_contained = self_contained;
  for (const void* ptr : reads) {
    const ByteRange block = BlockAt(ptr);
    if (block.end > block.begin) accesses.reads.push_back(block);  // else not activation memory
  }
}

void StepAccessLog::EndStep(cudaStream_t stream, const std::vector<const void*>& writes) {
  StepAccesses& accesses = steps_[current_];
  for (const void* ptr : writes) {
    const ByteRange block = BlockAt(ptr);
    if (block.end > block.begin) {
      accesses.writes.push_back(block);
    } else {
      accesses.self_contained = false;
    }
  }
  MarkNodes(stream, current_);
}

void StepAccessLog::EndSteps(cudaStream_t stream) {
  current_ = steps_.size();
  steps_.emplace_back();  // a barrier
  MarkNodes(stream, current_);
}

void StepAccessLog::MarkNodes(cudaStream_t stream, size_t step) {
  absl::StatusOr<std::optional<std::vector<cudaGraphNode_t>>> nodes = CaptureNodesIfGrown(stream, nodes_seen_);
  if (!nodes.ok()) {
    complete_ = false;
    return;
  }
  if (!nodes->has_value()) return;
  for (cudaGraphNode_t node : **nodes) step_of_node_.emplace(node, step);  // keeps earlier steps' nodes
  nodes_seen_ = (*nodes)->size();
}

namespace {

bool AnyOverlap(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  for (const ByteRange& x : a) {
    for (const ByteRange& y : b) {
      if (x.Overlaps(y)) return true;
    }
  }
  return false;
}

// Whether `later` must wait for `earlier`: one writes bytes the other reads or writes.
bool Conflict(const StepAccesses& earlier, const StepAccesses& later) {
  return AnyOverlap(earlier.writes, later.reads) || AnyOverlap(earlier.writes, later.writes) ||
         AnyOverlap(earlier.reads, later.writes);
}

}  // namespace

std::vector<std::vector<size_t>> StepDependencies(const std::vector<StepAccesses>& steps) {
  std::vector<std::vector<size_t>> deps(steps.size());
  std::vector<bool> waited_for(steps.size(), false);  // some later step (since the barrier) waits for it
  size_t since = 0;                                   // the last barrier, or 0
  bool barrier_seen = false;
  for (size_t s = 0; s < steps.size(); ++s) {
    if (!steps[s].self_contained) {
      // Waits for every step since the last barrier: the ones no later step waited for suffice.
      for (size_t p = since; p < s; ++p) {
        if (!waited_for[p]) deps[s].push_back(p);
      }
      since = s, barrier_seen = true;
      continue;
    }
    if (barrier_seen) deps[s].push_back(since);
    for (size_t p = barrier_seen ? since + 1 : 0; p < s; ++p) {
      if (Conflict(steps[p], steps[s])) deps[s].push_back(p);
    }
    for (size_t p : deps[s]) waited_for[p] = true;
  }
  return deps;
}

namespace {

// Nodes of one step with nodes: those nothing in the step precedes, those nothing in it follows.
struct StepNodes {
  size_t step = 0;
  std::vector<cudaGraphNode_t> nodes, entries, exits;
};

// The steps that gained nodes, in capture order, with their nodes (a node the log never saw counts
// as the last step's: the output copies).
std::vector<StepNodes> GroupByStep(const std::vector<cudaGraphNode_t>& nodes, const StepAccessLog& log,
                                   std::unordered_map<cudaGraphNode_t, size_t>& group_of) {
  std::map<size_t, std::vector<cudaGraphNode_t>> by_step;
  const size_t last = log.steps().empty() ? 0 : log.steps().size() - 1;
  for (cudaGraphNode_t node : nodes) {
    auto it = log.step_of_node().find(node);
    by_step[it == log.step_of_node().end() ? last : std::min(it->second, last)].push_back(node);
  }
  std::vector<StepNodes> groups;
  for (auto& [step, members] : by_step) {
    for (cudaGraphNode_t node : members) group_of[node] = groups.size();
    groups.push_back({step, std::move(members), {}, {}});
  }
  return groups;
}

}  // namespace

absl::StatusOr<OverlapSummary> LetIndependentStepsOverlap(cudaGraph_t graph, const StepAccessLog& log) {
  OverlapSummary summary;
  if (!log.complete() || log.steps().empty()) return summary;
  absl::StatusOr<std::vector<cudaGraphNode_t>> nodes = ListNodes(graph);
  if (!nodes.ok()) return nodes.status();
  std::unordered_map<cudaGraphNode_t, size_t> group_of;
  std::vector<StepNodes> groups = GroupByStep(*nodes, log, group_of);
  summary.steps = static_cast<int>(groups.size());
  std::vector<StepAccesses> accesses;
  for (const StepNodes& g : groups) accesses.push_back(log.steps()[g.step]);
  const std::vector<std::vector<size_t>> deps = StepDependencies(accesses);
  for (size_t k = 1; k < groups.size(); ++k) {
    if (std::find(deps[k].begin(), deps[k].end(), k - 1) == deps[k].end()) ++summary.overlapping;
  }
  if (summary.overlapping == 0) return summary;

  absl::StatusOr<EdgeList> edges = ListEdges(graph);
  if (!edges.ok()) return edges.status();
  EdgeList between;                                              // the chain's edges from one step to another: removed
  std::unordered_map<cudaGraphNode_t, bool> has_pred, has_succ;  // within its step
  for (size_t i = 0; i < edges->from.size(); ++i) {
    if (group_of.at(edges->from[i]) != group_of.at(edges->to[i])) {
      between.from.push_back(edges->from[i]), between.to.push_back(edges->to[i]);
      between.data.push_back(edges->data[i]);
    } else {
      has_succ[edges->from[i]] = has_pred[edges->to[i]] = true;
    }
  }
  for (StepNodes& g : groups) {
    for (cudaGraphNode_t node : g.nodes) {
      if (!has_pred[node]) g.entries.push_back(node);
      if (!has_succ[node]) g.exits.push_back(node);
    }
  }
  EdgeList needed;
  for (size_t k = 0; k < groups.size(); ++k) {
    for (size_t p : deps[k]) {
      for (cudaGraphNode_t from : groups[p].exits) {
        for (cudaGraphNode_t to : groups[k].entries) {
          needed.from.push_back(from), needed.to.push_back(to);
          needed.data.push_back(cudaGraphEdgeData{});  // a full dependency
        }
      }
    }
  }
  if (!between.from.empty()) {
    ONNXRUN_CUDA_RETURN_IF_ERROR(cudaGraphRemoveDependencies(graph, between.from.data(), between.to.data(),
                                                             between.data.data(), between.from.size()));
  }
  if (!needed.from.empty()) {
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        cudaGraphAddDependencies(graph, needed.from.data(), needed.to.data(), needed.data.data(), needed.from.size()));
  }
  return summary;
}

namespace {

constexpr int kTimedReplays = 5;  // per round; two rounds per form
constexpr double kKeepBelow = 0.97;
constexpr size_t kComparedBytes = size_t{64} << 20;  // per output, from its start

absl::StatusOr<double> ReplayMs(cudaGraphExec_t exec, cudaStream_t stream) {
  return TimeGpuMs([&] { return CudaOk(cudaGraphLaunch(exec, stream), "cudaGraphLaunch"); }, stream, kTimedReplays);
}

// One replay of `exec`, then the first bytes of every output, as the host sees them.
absl::StatusOr<std::vector<std::vector<uint8_t>>> ReplayOutputs(cudaGraphExec_t exec,
                                                                const std::vector<DeviceTensor>& outputs,
                                                                cudaStream_t stream) {
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec, stream));
  std::vector<std::vector<uint8_t>> bytes;
  for (const DeviceTensor& out : outputs) {
    bytes.emplace_back(out.data() != nullptr ? std::min(out.bytes(), kComparedBytes) : 0);
    if (bytes.back().empty()) continue;
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(bytes.back().data(), out.data(), bytes.back().size(), cudaMemcpyDeviceToHost, stream));
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return bytes;
}

// "" when the overlapping graph's outputs equal the chain's bit for bit (on float inputs filled
// with one small value, 0x3C bytes: 0.0115 in float32 and bfloat16, 1.06 in float16; integer
// inputs keep their zeros), else why it is not kept.
absl::StatusOr<std::string> CompareWithChain(cudaGraphExec_t chain, cudaGraphExec_t overlapped,
                                             const std::vector<DeviceTensor>& inputs,
                                             const std::vector<DeviceTensor>& outputs, cudaStream_t stream) {
  for (const DeviceTensor& in : inputs) {
    if (in.data() != nullptr && ir::IsFloatingPoint(in.dtype)) {
      ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(in.data(), 0x3C, in.bytes(), stream));
    }
  }
  absl::StatusOr<std::vector<std::vector<uint8_t>>> first = ReplayOutputs(chain, outputs, stream);
  if (!first.ok()) return first.status();
  absl::StatusOr<std::vector<std::vector<uint8_t>>> again = ReplayOutputs(chain, outputs, stream);
  if (!again.ok()) return again.status();
  if (*first != *again) return std::string("the chain's own replays differ in their outputs");
  absl::StatusOr<std::vector<std::vector<uint8_t>>> side = ReplayOutputs(overlapped, outputs, stream);
  if (!side.ok()) return side.status();
  return *side == *first ? std::string() : std::string("its outputs differ from the chain's");
}

// The best of two rounds of each graph's replays, in turn: {chain ms, overlapped ms}.
absl::StatusOr<std::pair<double, double>> TimeBoth(cudaGraphExec_t chain, cudaGraphExec_t overlapped,
                                                   cudaStream_t stream) {
  double chain_ms = std::numeric_limits<double>::infinity(), overlapped_ms = chain_ms;
  for (int round = 0; round < 2; ++round) {
    absl::StatusOr<double> a = ReplayMs(chain, stream);
    if (!a.ok()) return a.status();
    absl::StatusOr<double> b = ReplayMs(overlapped, stream);
    if (!b.ok()) return b.status();
    chain_ms = std::min(chain_ms, *a), overlapped_ms = std::min(overlapped_ms, *b);
  }
  return std::make_pair(chain_ms, overlapped_ms);
}

// Whether `overlapped` replaces the chain: the same outputs, and faster. `note` says what was found.
bool KeepOverlapped(cudaGraphExec_t chain, cudaGraphExec_t overlapped, const OverlapSummary& summary,
                    const std::vector<DeviceTensor>& inputs, const std::vector<DeviceTensor>& outputs,
                    cudaStream_t stream, std::string* note) {
  auto failed = [&](const absl::Status& status) {
    cudaGetLastError();
    *note = absl::StrCat("; steps kept in capture order (", status.message(), ")");
    return false;
  };
  absl::StatusOr<std::string> differs = CompareWithChain(chain, overlapped, inputs, outputs, stream);
  if (!differs.ok()) return failed(differs.status());
  if (!differs->empty()) {
    *note = absl::StrCat("; ", summary.overlapping, " steps could overlap, kept in capture order: ", *differs);
    return false;
  }
  absl::StatusOr<std::pair<double, double>> ms = TimeBoth(chain, overlapped, stream);
  if (!ms.ok()) return failed(ms.status());
  const auto [chain_ms, overlapped_ms] = *ms;
  if (overlapped_ms < kKeepBelow * chain_ms) {
    *note = absl::StrFormat("; %d of %d steps overlap the steps before them (replay %.3f -> %.3f ms, timed at capture)",
                            summary.overlapping, summary.steps, chain_ms, overlapped_ms);
    return true;
  }
  *note =
      absl::StrFormat("; %d steps could overlap, kept in capture order (replay %.3f ms, overlapping %.3f: not faster)",
                      summary.overlapping, chain_ms, overlapped_ms);
  return false;
}

}  // namespace

absl::StatusOr<cudaGraphExec_t> InstantiateFaster(cudaGraph_t graph, const StepAccessLog& log,
                                                  const std::vector<DeviceTensor>& inputs,
                                                  const std::vector<DeviceTensor>& outputs, cudaStream_t stream,
                                                  std::string* description) {
  // The chain first: instantiating takes a snapshot, so the rewiring below cannot change it.
  cudaGraphExec_t chain = nullptr;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaGraphInstantiate(&chain, graph, 0));
  *description = DescribeGraph(graph);
  absl::StatusOr<OverlapSummary> summary = LetIndependentStepsOverlap(graph, log);
  if (!summary.ok()) {
    cudaGetLastError();
    absl::StrAppend(description, "; steps kept in capture order (", summary.status().message(), ")");
    return chain;
  }
  if (summary->overlapping == 0) return chain;
  cudaGraphExec_t overlapped = nullptr;
  if (cudaGraphInstantiate(&overlapped, graph, 0) != cudaSuccess) {
    cudaGetLastError();
    absl::StrAppend(description, "; steps kept in capture order (the overlapping graph did not instantiate)");
    return chain;
  }
  std::string note;
  if (KeepOverlapped(chain, overlapped, *summary, inputs, outputs, stream, &note)) {
    cudaGraphExecDestroy(chain);
    *description = DescribeGraph(graph) + note;
    return overlapped;
  }
  cudaGraphExecDestroy(overlapped);
  *description += note;
  return chain;
}

}  // namespace exec
