// runtime/plan_builder.h: builds the cuDNN plans of a Plan's FusedGraph steps for one set of input
// dims before they run. Stages: concrete dims of every value by shape inference → each step lowered
// (fused_lowering) → its plan loaded from the plan cache, else built (heuristics + finalize, which
// compiles runtime-compiled engines with NVRTC) and stored in the cache. Steps with identical specs
// (ResNet's repeated blocks: 53 steps, far fewer distinct graphs) share one plan, built once. The
// distinct specs are built on a pool of threads, each with its own cuDNN handle (a handle must not
// be shared by threads at once); each result depends only on its spec, never on the thread count or
// the order of completion.
//
// Cache key of a step: the spec's signature (ops, dims, strides, dtypes, UIDs, scalars, TF32
// permission) + the GPU (name, compute capability, SM count) + the cuDNN and driver versions.
#ifndef ONNXRUN_RUNTIME_PLAN_BUILDER_H_
#define ONNXRUN_RUNTIME_PLAN_BUILDER_H_

#include <cudnn.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "exec/plan.h"
#include "kernels/cudnn/fused_graph.h"
#include "runtime/fused_lowering.h"
#include "runtime/plan_cache.h"

namespace exec {

// One step finished (for progress lines).
struct PlanBuildEvent {
  size_t done = 0, total = 0;  // steps finished so far, steps to build
  size_t step = 0;             // plan step index
  std::string what;            // "conv+bias+relu" (the step's pattern)
  std::string source;          // "built", "cache", "failed" or "shared" (same spec as another step)
  double seconds = 0;          // this step's build or load time
};
using PlanBuildProgress = std::function<void(const PlanBuildEvent&)>;

struct PlanBuildOptions {
  int threads = 0;                   // 0: the machine's hardware threads, at most 16
  const PlanCache* cache = nullptr;  // null: no persistent cache
  PlanBuildProgress progress;        // called from the calling thread, in completion order
  // Steps (index, FusedDimsKey) that already have a plan: not built again (a plan in use must not be
  // replaced, e.g. under a captured CUDA graph).
  std::function<bool(size_t, const std::string&)> already_built;
  bool share_identical = true;  // false: every step builds its own plan (to measure the sharing)
  // > 1: autotune — finalize up to this many engine configs per plan (heuristics order), time each
  // on zero-filled buffers of the real shapes (one plan at a time, on one stream), keep the fastest.
  // Tuned plans are cached under their own key.
  int autotune_plans = 0;
  // With autotune_plans > 1: also time runtime-compiled configs beyond the first (each costs an
  // NVRTC compile at a cold start); false times the precompiled ones only.
  bool autotune_runtime_compiled = true;
  // Matmul steps (a MatMul/Gemm anchor) are autotuned over this many configs even when
  // autotune_plans is off: cuDNN's heuristics order matmul engine configs poorly (measured on the
  // H100: the first config of a 4096x768x3072 matmul+bias+GELU 68 us, the best of four 51 us, as
  // cuBLAS). Tuned plans are cached, so only a cold start pays (a few ms per step).
  int matmul_autotune_plans = 4;
  // With autotune_plans > 1: conv steps of at least kLargeConvFlops also time runtime-compiled
  // configs, up to kLargeConvPlans (see below).
  bool autotune_large_convs = true;
  // > 1: autotuning times each config as this many executions at once, each on its own stream (the
  // throughput of that many requests in flight), instead of one (the latency of one request).
  int tune_streams = 1;
};

// A conv step this large (2 * output elements * C/group * R * S: resnet50's at batch 32 and more) is
// autotuned over up to kLargeConvPlans engine configs, runtime-compiled ones included: cuDNN offers
// only runtime-compiled engines for conv + residual Add + ReLU, so the precompiled-only default
// timed none there. resnet50 on the H200, GPU compute: fp16 batch 256 6.60 -> 6.23 ms, batch 32
// 1.077 -> 1.041; tf32 batch 256 11.88 -> 11.60, batch 32 1.953 -> 1.876. A cold start at those
// batches takes ~4 s longer (NVRTC compiles); warm starts read the tuned plans from the cache.
// --no-autotune-large-convs turns it off.
inline constexpr double kLargeConvFlops = 2e9;
inline constexpr int kLargeConvPlans = 16;

// The result for one FusedGraph step.
struct BuiltFusedStep {
  size_t step = 0;
  std::string dims_key;  // FusedDimsKey of the dims it was built for
  absl::Status status;   // why there is no plan (lowering or cuDNN), when there is none
  LoweredStep lowered;
  std::shared_ptr<cudnn::FusedGraphPlan> plan;  // shared by steps with the same spec
  double seconds = 0;
  bool from_cache = false;
  bool shared = false;                         // the plan of an earlier step with the same spec
  std::string cache_warning;                   // a cache entry that could not be trusted or stored ("" if none)
  std::string autotune_note;                   // "autotuned over 4 plans: <best> ms, heuristics' first <first> ms"
  std::string cache_key;                       // the key it was (or is to be) stored under; "" without a cache
  int plans_to_time = 1;                       // engine configs finalized and timed (> 1: autotuned)
  bool precompiled_alternatives_only = false;  // cudnn::BuildOptions's, when plans_to_time > 1
  int tune_streams = 1;                        // PlanBuildOptions's, when plans_to_time > 1
};

// Time spent building, for the start-up summary.
struct PlanBuildSummary {
  int steps = 0, from_cache = 0, built = 0, failed = 0, shared = 0, autotuned = 0;
  double autotune_seconds = 0;  // the timing phase (serial)
  double wall_seconds = 0;      // the whole build, all threads
  double step_seconds = 0;      // sum over steps (what one thread would have taken)
};

// Concrete dims of every value of plan.graph when its inputs have `input_dims` (graph-input order);
// nullopt where inference cannot tell (data-dependent shapes).
std::vector<std::optional<std::vector<int64_t>>> ConcreteDims(const Plan& plan,
                                                              const std::vector<std::vector<int64_t>>& input_dims);

// The key under which the executor keeps a step's plans: its non-constant inputs and their dims.
// nullopt when some input's dims are unknown.
std::optional<std::string> FusedDimsKey(const Plan& plan, const Step& step,
                                        const std::function<const std::vector<int64_t>*(ir::ValueId)>& dims_of);

// "gpu=<name> sm_<cc> sms=<count> cudnn=<version> driver=<version>": the part of a cache key that
// ties an entry to this GPU and these libraries.
std::string GpuSignature();
// Everything of a fused graph's spec that its plan depends on, exactly (doubles in hex).
std::string SpecSignature(const cudnn::FusedGraphSpec& spec);

// Multiply-adds x 2 of a conv spec: 2 * output elements * C/group * R * S (0 for a matmul).
double ConvFlops(const cudnn::FusedGraphSpec& spec);

// Builds one step (cache first when `cache` is set). `dims` holds the dims of the step's inputs.
BuiltFusedStep BuildFusedStep(cudnnHandle_t handle, const Plan& plan, size_t step_index,
                              const std::map<ir::ValueId, std::vector<int64_t>>& dims, const PlanCache* cache,
                              const std::string& gpu_signature);

// Builds every FusedGraph step whose input dims `dims` knows, on `options.threads` threads. Results
// in plan order.
std::vector<BuiltFusedStep> BuildFusedPlans(const Plan& plan,
                                            const std::vector<std::optional<std::vector<int64_t>>>& dims,
                                            const PlanBuildOptions& options, PlanBuildSummary* summary);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_PLAN_BUILDER_H_
