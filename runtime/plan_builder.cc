// Building FusedGraph plans ahead of the first run: concrete dims, cache lookup, parallel build.
#include "runtime/plan_builder.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ops/infer_graph.h"
#include "runtime/cuda_run_util.h"
#include "runtime/plan_autotune.h"

namespace exec {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void AppendTensor(std::string* out, const cudnn::TensorDesc& t) {
  absl::StrAppend(out, "t", t.uid, "[", absl::StrJoin(t.dims, ","), "|", absl::StrJoin(t.strides, ","), "]",
                  t.type == cudnn::IoType::kHalf       ? "h"
                  : t.type == cudnn::IoType::kBFloat16 ? "b"
                                                       : "f",
                  t.is_virtual ? "v" : "", t.by_value ? absl::StrFormat("=%a", t.value) : "", ";");
}

// The dims of a step's non-constant inputs, from `dims` (false when one is unknown).
bool StepInputDims(const Plan& plan, const Step& step, const std::vector<std::optional<std::vector<int64_t>>>& dims,
                   std::map<ir::ValueId, std::vector<int64_t>>* out) {
  for (ir::ValueId in : step.inputs) {
    if (plan.graph.value(in).constant) continue;
    if (!dims[in]) return false;
    (*out)[in] = *dims[in];
  }
  return true;
}

}  // namespace

std::vector<std::optional<std::vector<int64_t>>> ConcreteDims(const Plan& plan,
                                                              const std::vector<std::vector<int64_t>>& input_dims) {
  ir::Graph graph = plan.graph;  // constants share their buffers
  for (size_t i = 0; i < graph.inputs().size() && i < input_dims.size(); ++i) {
    graph.value(graph.inputs()[i]).type.shape = ir::ShapeFromInts(input_dims[i]);
  }
  for (const Step& step : plan.steps) {
    for (ir::NodeId id : step.nodes) {
      if (!ops::InferNodeTypes(graph, id).ok()) {
        for (ir::ValueId out : graph.node(id).outputs) {
          if (out != ir::kNoValue) graph.value(out).type.shape.reset();
        }
      }
    }
  }
  std::vector<std::optional<std::vector<int64_t>>> dims(graph.values().size());
  for (ir::ValueId id = 0; id < static_cast<ir::ValueId>(dims.size()); ++id) {
    const ir::Value& v = graph.value(id);
    if (v.constant) {
      dims[id] = v.constant->shape();
    } else if (v.type.shape) {
      dims[id] = ir::ShapeToInts(*v.type.shape);
    }
  }
  return dims;
}

std::optional<std::string> FusedDimsKey(const Plan& plan, const Step& step,
                                        const std::function<const std::vector<int64_t>*(ir::ValueId)>& dims_of) {
  std::string key;
  for (ir::ValueId in : step.inputs) {
    if (plan.graph.value(in).constant) continue;
    const std::vector<int64_t>* dims = dims_of(in);
    if (dims == nullptr) return std::nullopt;
    absl::StrAppend(&key, in, ":", ir::ShapeToString(*dims), ";");
  }
  return key;
}

double ConvFlops(const cudnn::FusedGraphSpec& spec) {
  if (spec.anchor != cudnn::FusedGraphSpec::kConv || spec.w.dims.size() < 2) return 0;
  double flops = 2;
  for (int64_t d : spec.y.dims) flops *= static_cast<double>(d);
  for (size_t i = 1; i < spec.w.dims.size(); ++i) flops *= static_cast<double>(spec.w.dims[i]);
  return flops;
}

std::string SpecSignature(const cudnn::FusedGraphSpec& spec) {
  std::string s = spec.anchor == cudnn::FusedGraphSpec::kConv ? "conv;" : "matmul;";
  for (const cudnn::TensorDesc* t : {&spec.x, &spec.w, &spec.y}) AppendTensor(&s, *t);
  const cudnn::ConvParams& c = spec.conv;
  absl::StrAppend(&s, "pads", absl::StrJoin(c.pads_begin, ","), "/", absl::StrJoin(c.pads_end, ","), ";strides",
                  absl::StrJoin(c.strides, ","), ";dil", absl::StrJoin(c.dilations, ","), ";");
  for (const cudnn::TensorDesc& t : spec.extra) AppendTensor(&s, t);
  for (const cudnn::PointwiseOp& op : spec.epilogue) {
    absl::StrAppend(&s, op.mode, "(", op.in0, ",", op.in1, "->", op.out, absl::StrFormat(",%a", op.alpha), ");");
  }
  absl::StrAppend(&s, spec.allow_tf32 ? "tf32" : "strict");
  return s;
}

std::string GpuSignature() {
  cudaDeviceProp prop;
  int device = 0, driver = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    return "gpu=unknown";
  }
  cudaDriverGetVersion(&driver);
  return absl::StrCat("gpu=", prop.name, " sm_", prop.major, prop.minor, " sms=", prop.multiProcessorCount,
                      " cudnn=", cudnnGetVersion(), " driver=", driver);
}

namespace {

// Lowers a step for `dims` (the plan fields stay empty).
BuiltFusedStep LowerStep(const Plan& plan, size_t step_index, const std::map<ir::ValueId, std::vector<int64_t>>& dims) {
  BuiltFusedStep result;
  result.step = step_index;
  const Step& step = plan.steps[step_index];
  result.dims_key = *FusedDimsKey(plan, step, [&](ir::ValueId id) -> const std::vector<int64_t>* {
    auto it = dims.find(id);
    return it == dims.end() ? nullptr : &it->second;
  });
  absl::StatusOr<LoweredStep> lowered = LowerFusedStep(plan, step, dims, plan.precision == "tf32");
  if (lowered.ok()) {
    result.lowered = *std::move(lowered);
  } else {
    result.status = lowered.status();
  }
  return result;
}

bool IsMatmulStep(const Plan& plan, size_t step) {
  const std::string& anchor = plan.graph.node(plan.steps[step].nodes[0]).op_type;
  return anchor == "MatMul" || anchor == "Gemm";
}

// How many engine configs a step's plan is chosen from (see PlanBuildOptions): matmul steps their
// own count, raised by autotune_plans only where that also times runtime-compiled configs (an
// explicit --autotune-plans N).
int PlansToTime(const Plan& plan, size_t step, const PlanBuildOptions& options) {
  if (!IsMatmulStep(plan, step)) return std::max(1, options.autotune_plans);
  const int raised = options.autotune_runtime_compiled ? options.autotune_plans : 1;
  return std::max({1, raised, options.matmul_autotune_plans});
}

// Stores a built plan under result.cache_key (engines cuDNN cannot serialize are rebuilt next time;
// that is not worth a warning).
void StorePlan(const PlanCache& cache, BuiltFusedStep& result) {
  absl::StatusOr<std::string> blob = result.plan->SerializedPlan();
  if (!blob.ok()) return;
  absl::Status stored = cache.Put(result.cache_key, *blob);
  if (!stored.ok()) result.cache_warning = absl::StrCat("plan cache: ", stored.message());
}

// Loads the plan of a lowered step from the cache, else builds it (up to `max_plans` finalized
// configs) and stores it — unless several finalized: BuildFusedPlans stores it after autotuning.
void BuildOrLoad(cudnnHandle_t handle, const PlanCache* cache, const std::string& gpu_signature, int max_plans,
                 BuiltFusedStep& result) {
  const bool precompiled_only = max_plans > 1 && result.precompiled_alternatives_only;
  const auto start = std::chrono::steady_clock::now();
  const bool cached = cache != nullptr && cache->enabled();
  result.cache_key =
      cached ? absl::StrCat("onnxrun fused plan\n", gpu_signature, "\n", SpecSignature(result.lowered.spec),
                            max_plans > 1 ? absl::StrCat("\nautotuned (GPU time, stream held) over ", max_plans,
                                                         precompiled_only ? " (precompiled alternatives)" : "",
                                                         result.tune_streams > 1
                                                             ? absl::StrCat(" for ", result.tune_streams, " in flight")
                                                             : "")
                                          : "")
             : "";
  if (cached) {
    std::optional<std::string> blob = cache->Get(result.cache_key, &result.cache_warning);
    if (blob) {
      absl::StatusOr<cudnn::FusedGraphPlan> loaded =
          cudnn::FusedGraphPlan::FromSerialized(handle, result.lowered.spec, *blob, {});
      if (loaded.ok()) {
        result.plan = std::make_shared<cudnn::FusedGraphPlan>(*std::move(loaded));
        result.from_cache = true;
        result.seconds = SecondsSince(start);
        return;
      }
      result.cache_warning = absl::StrCat("plan cache entry ", cache->PathFor(result.cache_key),
                                          " not usable, rebuilt: ", loaded.status().message());
    }
  }
  cudnn::BuildOptions build;
  build.max_plans = max_plans;
  build.precompiled_alternatives_only = precompiled_only;
  absl::StatusOr<cudnn::FusedGraphPlan> built = cudnn::FusedGraphPlan::Build(handle, result.lowered.spec, build);
  if (!built.ok()) {
    result.status = built.status();
    result.seconds = SecondsSince(start);
    return;
  }
  result.plan = std::make_shared<cudnn::FusedGraphPlan>(*std::move(built));
  if (cached && result.plan->plan_count() == 1) StorePlan(*cache, result);
  result.seconds = SecondsSince(start);
}

}  // namespace

BuiltFusedStep BuildFusedStep(cudnnHandle_t handle, const Plan& plan, size_t step_index,
                              const std::map<ir::ValueId, std::vector<int64_t>>& dims, const PlanCache* cache,
                              const std::string& gpu_signature) {
  const auto start = std::chrono::steady_clock::now();
  BuiltFusedStep result = LowerStep(plan, step_index, dims);
  if (result.status.ok()) BuildOrLoad(handle, cache, gpu_signature, /*max_plans=*/1, result);
  result.seconds = SecondsSince(start);
  return result;
}

std::vector<BuiltFusedStep> BuildFusedPlans(const Plan& plan,
                                            const std::vector<std::optional<std::vector<int64_t>>>& dims,
                                            const PlanBuildOptions& options, PlanBuildSummary* summary) {
  const auto start = std::chrono::steady_clock::now();
  // Lower every step whose dims are known (cheap, on this thread); the first step of each distinct
  // spec is built, the others share its plan.
  std::vector<BuiltFusedStep> results;
  std::vector<size_t> first_of;  // per result: index of the result with the same spec
  std::map<std::string, size_t> by_signature;
  std::vector<size_t> todo;  // results to build
  std::vector<bool> in_todo;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    std::map<ir::ValueId, std::vector<int64_t>> d;
    if (plan.steps[s].kind != StepKind::kFusedGraph || !StepInputDims(plan, plan.steps[s], dims, &d)) continue;
    if (options.already_built) {
      const std::optional<std::string> key =
          FusedDimsKey(plan, plan.steps[s], [&](ir::ValueId id) { return &d.at(id); });
      if (key && options.already_built(s, *key)) continue;
    }
    results.push_back(LowerStep(plan, s, d));
    const size_t i = results.size() - 1;
    first_of.push_back(i);
    in_todo.push_back(false);
    if (!results[i].status.ok()) continue;
    const std::string signature =
        options.share_identical ? SpecSignature(results[i].lowered.spec) : absl::StrCat("step ", s);
    auto [it, inserted] = by_signature.emplace(signature, i);
    first_of[i] = it->second;
    if (inserted) todo.push_back(i);
    in_todo[i] = inserted;
  }
  for (size_t t : todo) {
    const bool large = options.autotune_plans > 1 && options.autotune_large_convs &&
                       !IsMatmulStep(plan, results[t].step) && ConvFlops(results[t].lowered.spec) >= kLargeConvFlops;
    results[t].plans_to_time = std::max(PlansToTime(plan, results[t].step, options), large ? kLargeConvPlans : 1);
    results[t].tune_streams = options.tune_streams;
    results[t].precompiled_alternatives_only =
        !options.autotune_runtime_compiled && !IsMatmulStep(plan, results[t].step) && !large;
  }
  int threads =
      options.threads > 0 ? options.threads : std::min<int>(16, std::max(1u, std::thread::hardware_concurrency()));
  threads = std::max(1, std::min<int>(threads, static_cast<int>(todo.size())));
  const std::string gpu = GpuSignature();
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable finished_cv;
  std::deque<size_t> finished;
  int device = 0;
  cudaGetDevice(&device);  // new threads start on device 0: build for the caller's device
  auto worker = [&] {
    cudaSetDevice(device);
    cudnnHandle_t handle = nullptr;
    const cudnnStatus_t created = cudnnCreate(&handle);
    for (size_t t = next++; t < todo.size(); t = next++) {
      BuiltFusedStep& r = results[todo[t]];
      if (created != CUDNN_STATUS_SUCCESS) {
        r.status = absl::InternalError(absl::StrCat("cudnnCreate: ", cudnnGetErrorString(created)));
      } else {
        BuildOrLoad(handle, options.cache, gpu, r.plans_to_time, r);
      }
      std::lock_guard<std::mutex> lock(mu);
      finished.push_back(todo[t]);
      finished_cv.notify_one();
    }
    if (handle != nullptr) cudnnDestroy(handle);
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads && !todo.empty(); ++t) pool.emplace_back(worker);
  size_t done = 0;
  auto report = [&](const BuiltFusedStep& r, const char* source) {
    if (options.progress) {
      options.progress({++done, results.size(), r.step, plan.steps[r.step].pattern, source, r.seconds});
    }
  };
  for (size_t n = 0; n < todo.size(); ++n) {
    size_t i;
    {
      std::unique_lock<std::mutex> lock(mu);
      finished_cv.wait(lock, [&] { return !finished.empty(); });
      i = finished.front();
      finished.pop_front();
    }
    const BuiltFusedStep& r = results[i];
    report(r, !r.status.ok() ? "failed" : (r.from_cache ? "cache" : "built"));
  }
  for (std::thread& t : pool) t.join();
  // Autotuning times plans one at a time on one stream (timings taken side by side would disturb
  // each other), after the parallel builds.
  const auto tune_start = std::chrono::steady_clock::now();
  int tuned = 0;
  const bool any_to_tune =
      std::any_of(todo.begin(), todo.end(), [&](size_t t) { return results[t].plans_to_time > 1; });
  if (any_to_tune) {
    cudnnHandle_t handle = nullptr;
    cudaStream_t stream = nullptr;
    const bool ready = cudnnCreate(&handle) == CUDNN_STATUS_SUCCESS &&
                       cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess &&
                       cudnnSetStream(handle, stream) == CUDNN_STATUS_SUCCESS;
    for (size_t t : todo) {
      BuiltFusedStep& r = results[t];
      if (!r.status.ok() || r.plan == nullptr || r.plan->plan_count() < 2) continue;
      if (ready && AutotunePlan(handle, stream, r.lowered.spec, r.tune_streams, *r.plan, &r.autotune_note)) {
        ++tuned;
        if (options.cache != nullptr && options.cache->enabled()) StorePlan(*options.cache, r);
      }
      r.plan->DropAlternatives();  // when untuned: heuristics' first plan, not cached as tuned
    }
    if (stream != nullptr) cudaStreamDestroy(stream);
    if (handle != nullptr) cudnnDestroy(handle);
  }
  const double tune_seconds = SecondsSince(tune_start);
  for (size_t i = 0; i < results.size(); ++i) {
    if (first_of[i] == i) {
      if (!in_todo[i]) report(results[i], "failed");  // not lowered
      continue;
    }
    const BuiltFusedStep& first = results[first_of[i]];
    results[i].status = first.status;
    results[i].plan = first.plan;
    results[i].from_cache = first.from_cache;
    results[i].autotune_note = first.autotune_note;
    results[i].shared = true;
    report(results[i], "shared");
  }
  if (summary != nullptr) {
    *summary = PlanBuildSummary{};
    summary->steps = static_cast<int>(results.size());
    for (const BuiltFusedStep& r : results) {
      summary->step_seconds += r.seconds;
      if (!r.status.ok())
        ++summary->failed;
      else if (r.shared)
        ++summary->shared;
      else if (r.from_cache)
        ++summary->from_cache;
      else
        ++summary->built;
    }
    summary->wall_seconds = SecondsSince(start);
    summary->autotuned = tuned;
    summary->autotune_seconds = tune_seconds;
  }
  return results;
}

}  // namespace exec
