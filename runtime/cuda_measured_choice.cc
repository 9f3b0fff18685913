// The measured choice for a FusedGraph step between its cuDNN operation graph, its split form (the
// conv/matmul on legacy cuDNN, each epilogue op on an own kernel), for a 1x1 conv with few input
// channels the own pointwise-conv kernel (kernels/cuda/pointwise_conv.h), and for a MatMul with a
// bias / Relu / GELU / residual tail a cuBLASLt matmul (kernels/cublas/lt_matmul.h) followed by the
// own epilogue kernel (kernels/cuda/matmul_epilogue.h): each is timed on the
// step's real inputs at the first run for its dims (before any CUDA graph capture), the fastest is
// kept (the graph unless another is at least 5% faster), and the decision is stored in the plan
// cache next to the plans, so a warm start does not time again. --explain shows the times. Timing
// never raises the run's peak memory: a split form that would hold more than the run has needed so
// far (its intermediates are the output's size each) is not timed.
#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_run_util.h"
#include "runtime/pointwise_conv_form.h"

namespace exec {
namespace {

using Choice = FusedChoice;

constexpr int kTimedRuns = 3;
constexpr double kMargin = 0.95;  // another way must take under 95% of the graph's time

// "graph 0.123 0.456 -1 -1" / "split ..." / "own ..." / "epilogue ..." (graph ms, split ms, own
// kernel ms, matmul + epilogue ms; -1 when that way was not possible, kNotTimedForMemory when the
// split was not timed because of its memory).
struct Decision {
  Choice choice = Choice::kGraph;
  double graph_ms = 0, split_ms = -1, own_ms = -1, epilogue_ms = -1;
};
constexpr double kNotTimedForMemory = -2;
constexpr const char* kChoiceWords[] = {"unmeasured", "graph", "split", "own", "epilogue"};

std::string Encode(const Decision& d) {
  return absl::StrFormat("%s %.6f %.6f %.6f %.6f", kChoiceWords[static_cast<int>(d.choice)], d.graph_ms, d.split_ms,
                         d.own_ms, d.epilogue_ms);
}
std::optional<Decision> Decode(const std::string& blob) {
  std::vector<std::string> parts = absl::StrSplit(blob, ' ');
  Decision d;
  if (parts.size() != 5 || !absl::SimpleAtod(parts[1], &d.graph_ms) || !absl::SimpleAtod(parts[2], &d.split_ms) ||
      !absl::SimpleAtod(parts[3], &d.own_ms) || !absl::SimpleAtod(parts[4], &d.epilogue_ms)) {
    return std::nullopt;
  }
  for (Choice c : {Choice::kGraph, Choice::kSplit, Choice::kOwnKernel, Choice::kMatmulEpilogue}) {
    if (parts[0] == kChoiceWords[static_cast<int>(c)]) {
      d.choice = c;
      return d;
    }
  }
  return std::nullopt;
}

// The fastest way: the graph unless another takes under kMargin of its time.
Choice Fastest(const Decision& d) {
  Choice best = Choice::kGraph;
  double best_ms = kMargin * d.graph_ms;
  if (d.split_ms >= 0 && d.split_ms < best_ms) best = Choice::kSplit, best_ms = d.split_ms;
  if (d.own_ms >= 0 && d.own_ms < best_ms) best = Choice::kOwnKernel, best_ms = d.own_ms;
  if (d.epilogue_ms >= 0 && d.epilogue_ms < best_ms) best = Choice::kMatmulEpilogue;
  return best;
}

// `own_kernel`: what the own-kernel candidate is called ("own 1x1-conv kernel", "own stem-conv kernel").
std::string Describe(const Decision& d, bool from_cache, const std::string& own_kernel) {
  const std::string split = d.split_ms == kNotTimedForMemory ? "not timed (it would raise the run's peak memory)"
                            : d.split_ms < 0                 ? "not possible"
                                                             : absl::StrFormat("%.3f ms", d.split_ms);
  const std::string own = d.own_ms < 0 ? "" : absl::StrFormat(", %s %.3f ms", own_kernel, d.own_ms);
  const std::string epilogue =
      d.epilogue_ms < 0 ? "" : absl::StrFormat(", cuBLASLt matmul + own epilogue kernel %.3f ms", d.epilogue_ms);
  const char* won = d.choice == Choice::kSplit            ? "split"
                    : d.choice == Choice::kOwnKernel      ? "own kernel"
                    : d.choice == Choice::kMatmulEpilogue ? "matmul + epilogue kernel"
                                                          : "graph";
  return absl::StrFormat("measured%s: cuDNN graph %.3f ms, split (legacy conv + own kernels) %s%s%s -> %s",
                         from_cache ? " (decision from the plan cache)" : " at the first run for these dims",
                         d.graph_ms, split, own, epilogue, won);
}

// The own pointwise-conv kernel's name for `step`: a 1x1 conv, or a stem conv's window on it.
std::string OwnConvKernelName(const ir::Graph& g, const Step& step, const std::vector<DeviceTensor>& values) {
  const ir::Node& anchor = g.node(step.nodes[0]);
  const std::vector<int64_t> dims = anchor.inputs.empty() || !values[anchor.inputs[0]].valid()
                                        ? std::vector<int64_t>{}
                                        : values[anchor.inputs[0]].dims;
  absl::StatusOr<PointwiseConvForm> form = MatchPointwiseConv(g, step, dims, /*allow_tf32=*/true);
  if (!form.ok() || form->params.window.OneByOne()) return "own 1x1-conv kernel";
  const kernels::cuda::ConvWindow& w = form->params.window;
  return absl::StrFormat("own stem-conv kernel (%dx%d stride %d)", w.kernel_h, w.kernel_w, w.stride_h);
}

// The default pool's bytes in use now and its high-water mark; nullopt when unreadable.
std::optional<std::pair<int64_t, int64_t>> PoolUse(int device) {
  cudaMemPool_t pool;
  uint64_t now = 0, high = 0;
  if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &now) != cudaSuccess ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high) != cudaSuccess) {
    return std::nullopt;
  }
  return std::pair{static_cast<int64_t>(now), static_cast<int64_t>(high)};
}

// Whether timing a split form of `nodes` nodes would raise the run's peak memory: it holds up to
// two intermediates of the output's size besides the output (`out_bytes`), where the graph form
// holds the output alone; the pool's high-water mark so far is what the run has needed.
bool SplitRaisesPeak(int device, int64_t out_bytes, size_t nodes) {
  const std::optional<std::pair<int64_t, int64_t>> use = PoolUse(device);
  if (!use) return false;
  const auto [now, high] = *use;
  const int64_t intermediates = std::min<int64_t>(static_cast<int64_t>(nodes) - 1, 2);
  return now + out_bytes * (1 + intermediates) > std::max(high, now + out_bytes);
}

}  // namespace

bool CudaExecutor::OwnPointwiseConvFits(size_t index, const std::vector<DeviceTensor>& values) const {
  const Step& step = plan_.steps[index];
  const ir::Node& anchor = plan_.graph.node(step.nodes[0]);
  if (anchor.inputs.empty() || !values[anchor.inputs[0]].valid()) return false;
  absl::StatusOr<PointwiseConvForm> form =
      MatchPointwiseConv(plan_.graph, step, values[anchor.inputs[0]].dims, plan_.precision == "tf32");
  return form.ok() && kernels::cuda::PointwiseConvSupported(form->params);
}

bool CudaExecutor::SplitRunsOnDevice(size_t index, const std::vector<DeviceTensor>& values) const {
  const ir::Node& anchor = plan_.graph.node(plan_.steps[index].nodes[0]);
  if (anchor.op_type == "Gemm") return true;  // as a 1x1 conv (other forms: found out by the untimed run)
  return anchor.op_type == "Conv" && values[anchor.inputs[0]].dims.size() == 4;
}

absl::Status CudaExecutor::ChooseGraphOrSplit(size_t index, FusedEntry& entry, std::vector<DeviceTensor>& values) {
  entry.choice = Choice::kGraph;
  if (!options_.measure_choices || Capturing()) return absl::OkStatus();
  const bool split_possible = SplitRunsOnDevice(index, values);
  // The cuBLASLt matmul is made (its algorithms timed) only when it is to be timed or was chosen.
  const ir::DType out_type = plan_.graph.value(plan_.steps[index].outputs[0]).type.dtype;
  const absl::StatusOr<MatmulEpilogueForm> matmul_form = MatchMatmulEpilogue(plan_.graph, plan_.steps[index]);
  const bool epilogue_form = (out_type == ir::DType::kFloat16 || out_type == ir::DType::kBFloat16) && matmul_form.ok();
  // Only an erf GELU's cuBLASLt form depends on fast GELU: its decision is cached per setting.
  const bool exact_erf_gelu =
      epilogue_form && !options_.fast_gelu && matmul_form->activation == kernels::cuda::MatmulEpilogueParams::kGelu;
  if (!split_possible && !epilogue_form) return absl::OkStatus();
  const std::string graph_note = notes_[index];
  // v6: the own kernel's TF32 and stem-window candidates (older decisions never timed them); v7:
  // cuBLASLt's activation epilogues (an erf GELU step with fast GELU off is another decision).
  const std::string key = absl::StrCat("onnxrun measured choice v7", exact_erf_gelu ? " exact-gelu" : "", "\n",
                                       gpu_signature_, "\n", SpecSignature(entry.lowered.spec));
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
    const std::vector<ir::ValueId> outputs = plan_.steps[index].outputs;
    auto drop_outputs = [&] {
      for (ir::ValueId out : outputs) values[out] = DeviceTensor();
    };
    auto time_form = [&](const std::function<absl::Status()>& run) {
      return TimeStepFormGpuMs(run, outputs, values, stream_, kTimedRuns);
    };
    absl::StatusOr<double> graph_ms = time_form([&] { return ExecuteFused(index, entry, values); });
    if (!graph_ms.ok()) return graph_ms.status();
    const int64_t out_bytes = static_cast<int64_t>(values[outputs[0]].bytes());
    drop_outputs();
    decision = Decision{Choice::kGraph, *graph_ms, -1.0, -1.0, -1.0};
    if (split_possible && SplitRaisesPeak(options_.device_id, out_bytes, plan_.steps[index].nodes.size())) {
      decision->split_ms = kNotTimedForMemory;
    } else if (split_possible) {
      const bool host_before = ran_on_host_;
      ran_on_host_ = false;
      const absl::Status first_split = RunSplit(index, absl::OkStatus(), values);  // untimed: where does it run?
      const bool split_on_device = first_split.ok() && !ran_on_host_;
      absl::StatusOr<double> split_ms = absl::UnavailableError("the split form does not stay on the device");
      if (split_on_device) split_ms = time_form([&] { return RunSplit(index, absl::OkStatus(), values); });
      ran_on_host_ = host_before;
      if (split_ms.ok() && split_on_device) decision->split_ms = *split_ms;
    }
    if (OwnPointwiseConvFits(index, values)) {
      const absl::StatusOr<double> own_ms = time_form([&] { return RunOwnPointwiseConv(index, entry, values); });
      if (own_ms.ok()) decision->own_ms = *own_ms;
    }
    drop_outputs();  // PrepareMatmulEpilogue times cuBLASLt's algorithms on an output of its own
    if (epilogue_form && PrepareMatmulEpilogue(index, entry, values)) {
      const absl::StatusOr<double> epilogue_ms = time_form([&] { return RunMatmulEpilogue(index, entry, values); });
      if (epilogue_ms.ok()) decision->epilogue_ms = *epilogue_ms;
    }
    // The chosen form runs next and allocates its outputs anew: the last candidate's go first, or
    // the step would hold its outputs twice (efficientnet_b0 fp16 batch 256: 1431 MiB -> 900).
    drop_outputs();
    decision->choice = Fastest(*decision);
    ++measured_.timed;
    measured_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (cached) {
      absl::Status stored = cache_->Put(key, Encode(*decision));
      if (!stored.ok()) cache_warnings_.push_back(absl::StrCat("plan cache: ", stored.message()));
    }
  } else {
    ++measured_.from_cache;
  }
  // A cached decision comes from a step with the same cuDNN graph; the own kernel may not fit this one.
  if (from_cache && decision->choice == Choice::kOwnKernel && !OwnPointwiseConvFits(index, values)) {
    decision->choice = Choice::kGraph;
  }
  if (from_cache && decision->choice == Choice::kMatmulEpilogue && !PrepareMatmulEpilogue(index, entry, values)) {
    decision->choice = Choice::kGraph;
  }
  entry.choice = decision->choice;
  const std::string own_kernel = OwnConvKernelName(plan_.graph, plan_.steps[index], values);
  if (decision->choice == Choice::kSplit) {
    ++measured_.split;
    entry.note = absl::StrCat(
        "split into single nodes: the conv/matmul on legacy cuDNN, each following op on an "
        "own kernel (",
        Describe(*decision, from_cache, own_kernel), ")");
  } else if (decision->choice == Choice::kOwnKernel) {
    ++measured_.own_kernel;
    entry.note =
        absl::StrCat(own_kernel, " (kernels/cuda/pointwise_conv) (", Describe(*decision, from_cache, own_kernel), ")");
  } else if (decision->choice == Choice::kMatmulEpilogue) {
    ++measured_.matmul_epilogue;
    entry.note = absl::StrCat(MatmulEpilogueNote(entry.lt_matmul->shape(), *entry.epilogue), " (",
                              Describe(*decision, from_cache, own_kernel), ")");
  } else {
    entry.note = absl::StrCat(graph_note, " (", Describe(*decision, from_cache, own_kernel), ")");
    // The split form's timing made the weights' logical copies: the graph reads them channels-last.
    // One goes only if no decision of any step reading it (any input dims) needs it: a capture for
    // those dims could not make it again.
    auto only_graphs_read = [&](ir::ValueId id) {
      for (size_t s = 0; s < plan_.steps.size(); ++s) {
        const std::vector<ir::ValueId>& in = plan_.steps[s].inputs;
        if (std::find(in.begin(), in.end(), id) == in.end()) continue;
        for (const auto& [dims_key, other] : fused_[s]) {
          if (!other.status.ok() || (other.choice != Choice::kGraph && other.choice != Choice::kUnmeasured)) {
            return false;
          }
        }
      }
      return true;
    };
    for (ir::ValueId in : plan_.steps[index].inputs) {
      if (plan_.graph.value(in).constant && constants_.Serves(in) && only_graphs_read(in)) constants_.DropLogical(in);
    }
  }
  return absl::OkStatus();
}

}  // namespace exec
