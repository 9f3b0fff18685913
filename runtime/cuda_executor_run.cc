// The run loop of CudaExecutor: step-by-step runs (with optional per-step timing), the capture of
// CUDA graphs for input dims seen before, and Run from host tensors (see cuda_executor.h; replays
// and contexts are in cuda_contexts.cc).
#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_run_util.h"

namespace exec {
namespace {

// An open stream capture: End() ends it (once) and keeps the graph, which the destructor frees; the
// destructor also ends a capture still open (an early return or an exception).
struct CaptureScope {
  cudaStream_t stream;
  cudaGraph_t graph = nullptr;
  bool ended = false;
  cudaError_t End() {
    if (ended) return cudaSuccess;
    ended = true;
    return cudaStreamEndCapture(stream, &graph);
  }
  ~CaptureScope() {
    End();
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
};

}  // namespace

CudaExecutor::CapturedRun::~CapturedRun() {
  if (exec != nullptr) cudaGraphExecDestroy(exec);
}

absl::Status CudaExecutor::RunSteps(std::vector<DeviceTensor>& values, const ValueObserver& observer,
                                    const std::vector<cudaEvent_t>* step_events) {
  const ir::Graph& g = plan_.graph;
  views_.clear();
  expanded_masks_.clear();
  held_gates_.clear();
  channel_sums_.clear();
  pooled_sums_.clear();
  joined_gates_.deferred.clear();
  views_on_ = !observer;  // an observer reads every step's output as a dense tensor
  // Device pointers of the values `ids` (constants left out: nothing in a run writes them).
  auto pointers = [&](const std::vector<ir::ValueId>& ids) {
    std::vector<const void*> p;
    for (ir::ValueId id : ids) {
      if (!g.value(id).constant && values[id].data() != nullptr) p.push_back(values[id].data());
    }
    return p;
  };
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const Step& step = plan_.steps[s];
    if (access_log_ != nullptr) access_log_->BeginStep(s, SelfContained(s), pointers(step.inputs));
    absl::Status status = RunStep(s, values);
    if (!status.ok()) {
      const ir::Node& node = g.node(step.nodes[0]);
      return absl::Status(status.code(), absl::StrCat("step #", s, " (", StepKindName(step.kind), " ", step.pattern,
                                                      ", node '", node.name, "'): ", status.message()));
    }
    if (access_log_ != nullptr) access_log_->EndStep(stream_, pointers(step.outputs));
    if (step_events != nullptr) ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventRecord((*step_events)[s + 1], stream_));
    if (observer) {
      for (ir::ValueId out : step.outputs) {
        absl::StatusOr<ir::Tensor> t = Download(values[out], stream_);
        if (!t.ok()) return t.status();
        observer(s, out, *t);
      }
    }
    for (ir::ValueId dead : step.release_after) {
      values[dead] = DeviceTensor();
      views_.erase(dead);
    }
  }
  views_.clear();
  expanded_masks_.clear();
  held_gates_.clear();
  channel_sums_.clear();
  pooled_sums_.clear();
  joined_gates_.deferred.clear();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DeviceTensor>> CudaExecutor::RunEager(Context& context, const std::string& key,
                                                                 std::vector<DeviceTensor> inputs,
                                                                 const ValueObserver& observer,
                                                                 std::vector<double>* step_ms) {
  const ir::Graph& g = plan_.graph;
  std::vector<DeviceTensor> values(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) values[g.inputs()[i]] = inputs[i];  // steps convert layouts
  std::vector<cudaEvent_t> events;
  if (step_ms != nullptr) {
    events.resize(plan_.steps.size() + 1);
    for (cudaEvent_t& e : events) ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventCreate(&e));
  }
  auto destroy_events = [&] {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
  };
  auto record_event = [&](cudaEvent_t e) { return CudaOk(cudaEventRecord(e, stream_), "cudaEventRecord"); };
  // A value kept on the host (a string tensor, a sequence) cannot be replayed from a CUDA graph.
  ran_on_host_ = std::any_of(inputs.begin(), inputs.end(), [](const DeviceTensor& t) { return t.host_value; });
  absl::Status status = record_event(context.compute_start);
  if (status.ok() && step_ms != nullptr) status = record_event(events[0]);
  if (status.ok()) status = RunSteps(values, observer, step_ms ? &events : nullptr);
  if (status.ok()) status = record_event(context.compute_end);
  if (status.ok()) status = CudaOk(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  if (!status.ok()) {
    destroy_events();
    return status;
  }
  EagerRecord record;
  record.device_only = !ran_on_host_;
  std::vector<DeviceTensor> outputs;
  for (ir::ValueId id : g.outputs()) {
    if (g.value(id).constant) {
      DeviceTensor kept;
      kept.dtype = g.value(id).constant->dtype();
      kept.dims = g.value(id).constant->shape();
      kept.host_value = std::make_shared<const ir::Tensor>(*g.value(id).constant);
      outputs.push_back(std::move(kept));
      record.outputs.push_back({ir::DType::kUndefined, {}});
      continue;
    }
    record.outputs.push_back({values[id].dtype, values[id].dims});
    outputs.push_back(values[id]);
  }
  last_compute_ms_ = ElapsedMs(context.compute_start, context.compute_end);
  if (step_ms != nullptr) {
    step_ms->clear();
    for (size_t s = 0; s < plan_.steps.size(); ++s) step_ms->push_back(ElapsedMs(events[s], events[s + 1]));
  }
  destroy_events();
  if (!observer) eager_runs_[key] = std::move(record);
  return outputs;
}

// The run's outputs copied, in logical layout, into its fixed output buffers.
absl::Status CudaExecutor::CopyToRunOutputs(const std::vector<DeviceTensor>& values, CapturedRun& run) {
  const ir::Graph& g = plan_.graph;
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    if (!run.outputs[o].valid() || run.outputs[o].num_elements() == 0) continue;
    absl::StatusOr<DeviceTensor> logical = ToLayout(values[g.outputs()[o]], false, stream_);
    if (!logical.ok()) return logical.status();
    if (logical->dims != run.outputs[o].dims) return absl::InternalError("output dims changed between runs");
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(run.outputs[o].data(), logical->data(), logical->bytes(), cudaMemcpyDeviceToDevice, stream_));
  }
  return absl::OkStatus();
}

absl::StatusOr<ArenaLayout> CudaExecutor::RecordActivations(CapturedRun& run) {
  const ir::Graph& g = plan_.graph;
  for (const DeviceTensor& in : run.inputs) {  // zeros: every gather index is then in range
    if (in.bytes() > 0) ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(in.data(), 0, in.bytes(), stream_));
  }
  AllocationRecorder recorder;
  absl::Status status;
  {
    ScopedAllocationHook hook(&recorder);
    std::vector<DeviceTensor> values(g.values().size());
    for (size_t i = 0; i < run.inputs.size(); ++i) values[g.inputs()[i]] = run.inputs[i];
    status = RunSteps(values, nullptr, nullptr);
    if (status.ok()) status = CopyToRunOutputs(values, run);
  }  // the values go first: every block has died when the hook is removed
  if (status.ok()) status = CudaOk(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  if (!status.ok()) return status;
  return PackBlocks(recorder.blocks());
}

bool CudaExecutor::SelfContained(size_t index) const {
  const Step& step = plan_.steps[index];
  if (step.kind != StepKind::kFusedGraph || written_by_attention_[index] || joined_gates_.mlp_of[index] ||
      gate_reader_[index] || scaled_conv_[index]) {  // (a held gate is a scaled conv's)
    return false;
  }
  return std::none_of(step.inputs.begin(), step.inputs.end(), [&](ir::ValueId in) { return views_.count(in) > 0; });
}

absl::Status CudaExecutor::CaptureSteps(CapturedRun& run, const CaptureSegments* segments, StepAccessLog* log) {
  const ir::Graph& g = plan_.graph;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  CaptureScope scope{stream_};  // ends the capture however this function is left
  absl::Status status = [&]() -> absl::Status {
    std::vector<DeviceTensor> values(g.values().size());
    for (size_t i = 0; i < run.inputs.size(); ++i) values[g.inputs()[i]] = run.inputs[i];
    access_log_ = log;
    absl::Status steps = RunSteps(values, nullptr, nullptr);
    access_log_ = nullptr;
    if (!steps.ok()) return steps;
    absl::Status copied = CopyToRunOutputs(values, run);
    if (copied.ok() && log != nullptr) log->EndSteps(stream_);
    return copied;
  }();
  const cudaError_t ended = scope.End();
  if (status.ok()) status = CudaOk(ended, "cudaStreamEndCapture");
  if (status.ok() && segments != nullptr) status = segments->SerializeAcrossSegments(scope.graph).status();
  if (status.ok() && log != nullptr) {
    absl::StatusOr<cudaGraphExec_t> exec =
        InstantiateFaster(scope.graph, *log, run.inputs, run.outputs, stream_, &run.description);
    status = exec.status();
    if (exec.ok()) run.exec = *exec;
  } else if (status.ok()) {
    status = CudaOk(cudaGraphInstantiate(&run.exec, scope.graph, 0), "cudaGraphInstantiate");
    if (status.ok()) run.description = DescribeGraph(scope.graph);
  }
  cudaGetLastError();  // a failed capture leaves no sticky error; clear the last one
  return status;
}

absl::StatusOr<std::unique_ptr<CudaExecutor::CapturedRun>> CudaExecutor::Capture(
    const EagerRecord& record, const std::vector<DeviceTensor>& inputs) {
  auto run = std::make_unique<CapturedRun>();
  for (const DeviceTensor& t : inputs) {
    absl::StatusOr<DeviceTensor> d = DeviceTensor::Allocate(t.dtype, t.dims, false, stream_);
    if (!d.ok()) return d.status();
    run->inputs.push_back(*std::move(d));
  }
  for (const auto& [dtype, dims] : record.outputs) {
    if (dtype == ir::DType::kUndefined) {
      run->outputs.emplace_back();
      continue;
    }
    absl::StatusOr<DeviceTensor> d = DeviceTensor::Allocate(dtype, dims, false, stream_);
    if (!d.ok()) return d.status();
    run->outputs.push_back(*std::move(d));
  }
  run->staging_in.resize(run->inputs.size());
  run->staging_out.resize(run->outputs.size());
  // The activations in one planned arena when a recorded run gives its layout; else (or when the
  // capture asks for other allocations than the recorded run made) CUDA graph memory nodes.
  absl::StatusOr<ArenaLayout> layout = options_.activation_arena
                                           ? RecordActivations(*run)
                                           : absl::StatusOr<ArenaLayout>(absl::UnavailableError("switched off"));
  // Synchronizes the stream: the fixed buffers exist before capture.
  if (absl::Status released = ReleaseBeforeCapture(); !released.ok()) return released;
  if (layout.ok()) {
    absl::StatusOr<DeviceTensor> arena =
        DeviceTensor::Allocate(ir::DType::kUint8, {static_cast<int64_t>(layout->bytes)}, false, stream_);
    if (!arena.ok()) return arena.status();
    ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
    ArenaAllocator allocator(arena->buffer, *std::move(layout));
    CaptureSegments segments;  // cut at every allocation and free: see capture_order.h
    allocator.set_listener([&segments](cudaStream_t stream) { segments.Cut(stream); });
    std::optional<StepAccessLog> log;  // watches the steps' accesses, so that independent ones may overlap
    if (options_.overlap_steps) log.emplace(&allocator);
    absl::Status captured;
    {
      ScopedAllocationHook hook(log ? static_cast<AllocationHook*>(&*log) : &allocator);
      captured = CaptureSteps(*run, &segments, log ? &*log : nullptr);
    }
    allocator.set_listener(nullptr);
    const std::string mismatch = allocator.LifetimeMismatch();
    if (captured.ok() && allocator.complete() && mismatch.empty()) {
      run->arena = *std::move(arena);
      return run;
    }
    if (run->exec != nullptr) cudaGraphExecDestroy(run->exec);
    run->exec = nullptr;
    run->arena_fallback = !captured.ok()      ? std::string(captured.message())
                          : !mismatch.empty() ? mismatch
                                              : "the capture made fewer allocations than the recorded run";
  }
  // Graph memory nodes: CUDA orders their reuse (and lets no edge of such a graph be removed).
  absl::Status captured = CaptureSteps(*run, nullptr, nullptr);
  if (!captured.ok() && !run->arena_fallback.empty()) {
    return absl::Status(captured.code(),
                        absl::StrCat(captured.message(), " (on the arena before that: ", run->arena_fallback, ")"));
  }
  if (!captured.ok()) return captured;
  return run;
}

absl::StatusOr<std::vector<DeviceTensor>> CudaExecutor::UploadInputs(const std::vector<ir::Tensor>& inputs) {
  std::vector<DeviceTensor> device_inputs;
  for (const ir::Tensor& t : inputs) {
    absl::StatusOr<DeviceTensor> d = Upload(t, false, stream_);
    if (!d.ok()) return d.status();
    device_inputs.push_back(*std::move(d));
  }
  return device_inputs;
}

absl::Status CudaExecutor::PrepareForInputs(const std::vector<DeviceTensor>& inputs) {
  std::vector<std::vector<int64_t>> input_dims;
  for (const DeviceTensor& t : inputs) input_dims.push_back(t.host_value ? t.host_value->shape() : t.dims);
  absl::Status prepared = PrepareLocked(input_dims);
  if (!prepared.ok()) return prepared;
  current_folded_ = &folded_.at(input_dims);
  return absl::OkStatus();
}

absl::StatusOr<CudaExecutor::CapturedRun*> CudaExecutor::RunLocked(Context& context, const std::string& key,
                                                                   const std::vector<DeviceTensor>& inputs,
                                                                   const ValueObserver& observer,
                                                                   std::vector<DeviceTensor>& eager_outputs) {
  absl::Status prepared = PrepareForInputs(inputs);
  if (!prepared.ok()) return prepared;
  auto eager = [&](const char* why) -> absl::StatusOr<CapturedRun*> {
    if (why != nullptr) {
      graph_status_ = why;
      graph_description_.clear();
    }
    absl::StatusOr<std::vector<DeviceTensor>> outputs = RunEager(context, key, inputs, observer, nullptr);
    if (!outputs.ok()) return outputs.status();
    eager_outputs = *std::move(outputs);
    return nullptr;
  };
  if (observer) return eager(nullptr);
  if (!options_.cuda_graph) return eager("step by step (CUDA graphs switched off)");
  auto record = eager_runs_.find(key);
  if (record == eager_runs_.end()) return eager("step by step (first run for these input dims builds the plans)");
  if (!record->second.device_only)
    return eager("step by step (a step runs on the host, which a CUDA graph cannot hold)");
  if (CapturedRun* run = CaptureOrStepByStep(context, key, record->second, inputs)) return run;
  return eager(nullptr);
}

CudaExecutor::CapturedRun* CudaExecutor::CaptureOrStepByStep(Context& context, const std::string& key,
                                                             EagerRecord& record,
                                                             const std::vector<DeviceTensor>& inputs) {
  absl::StatusOr<std::unique_ptr<CapturedRun>> run = Capture(record, inputs);
  if (!run.ok()) {
    graph_status_ = absl::StrCat("step by step (CUDA graph capture failed: ", run.status().message(), ")");
    graph_description_.clear();
    record.device_only = false;  // do not try again for these dims
    return nullptr;
  }
  graph_status_ = "CUDA graph replay";
  graph_description_ = (*run)->description;
  if (!(*run)->arena_fallback.empty()) {
    absl::StrAppend(&graph_status_, " (activations in graph memory nodes, not the arena: ", (*run)->arena_fallback,
                    ")");
  }
  auto [it, inserted] = context.captured.emplace(key, *std::move(run));
  return it->second.get();
}

absl::StatusOr<CudaExecutor::CapturedRun*> CudaExecutor::CaptureForHostInputs(Context& context, const std::string& key,
                                                                              const std::vector<ir::Tensor>& inputs) {
  auto record = eager_runs_.find(key);
  if (!options_.cuda_graph || record == eager_runs_.end() || !record->second.device_only) return nullptr;
  std::vector<DeviceTensor> shapes;  // dtype and dims only: Capture allocates the buffers
  for (const ir::Tensor& t : inputs) {
    if (StaysOnHost(t)) return nullptr;
    DeviceTensor shape;
    shape.dtype = t.dtype();
    shape.dims = t.shape();
    shapes.push_back(std::move(shape));
  }
  absl::Status prepared = PrepareForInputs(shapes);
  if (!prepared.ok()) return prepared;
  return CaptureOrStepByStep(context, key, record->second, shapes);
}

absl::StatusOr<std::vector<ir::Tensor>> CudaExecutor::Run(std::vector<ir::Tensor> inputs,
                                                          const ValueObserver& observer) {
  DeviceScope device(options_.device_id);
  ONNXRUN_CUDA_RETURN_IF_ERROR(device.error());
  if (inputs.size() != plan_.graph.inputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", plan_.graph.inputs().size(), " inputs, got ", inputs.size()));
  }
  const std::string key = InputKey(inputs);
  absl::StatusOr<ContextLease> context = AcquireContext();
  if (!context.ok()) return context.status();
  Context& ctx = **context;
  if (!observer && options_.cuda_graph) {
    if (auto it = ctx.captured.find(key); it != ctx.captured.end()) return ReplayHost(ctx, *it->second, inputs);
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status used = UseContext(ctx);
  if (!used.ok()) return used;
  if (!observer) {
    absl::StatusOr<CapturedRun*> captured = CaptureForHostInputs(ctx, key, inputs);
    if (!captured.ok()) return captured.status();
    if (*captured != nullptr) return ReplayHost(ctx, **captured, inputs);
  }
  absl::StatusOr<std::vector<DeviceTensor>> device_inputs = UploadInputs(inputs);
  if (!device_inputs.ok()) return device_inputs.status();
  std::vector<DeviceTensor> eager_outputs;
  absl::StatusOr<CapturedRun*> captured = RunLocked(ctx, key, *device_inputs, observer, eager_outputs);
  if (!captured.ok()) return captured.status();
  if (*captured != nullptr) return ReplayHost(ctx, **captured, inputs);
  std::vector<ir::Tensor> outputs;
  for (const DeviceTensor& d : eager_outputs) {
    absl::StatusOr<ir::Tensor> t = Download(d, stream_);
    if (!t.ok()) return t.status();
    outputs.push_back(*std::move(t));
  }
  return outputs;
}

absl::StatusOr<std::vector<double>> CudaExecutor::ProfileSteps(std::vector<ir::Tensor> inputs) {
  DeviceScope device(options_.device_id);
  ONNXRUN_CUDA_RETURN_IF_ERROR(device.error());
  absl::StatusOr<ContextLease> context = AcquireContext();
  if (!context.ok()) return context.status();
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status used = UseContext(**context);
  if (!used.ok()) return used;
  absl::StatusOr<std::vector<DeviceTensor>> device_inputs = UploadInputs(inputs);
  if (!device_inputs.ok()) return device_inputs.status();
  absl::Status prepared = PrepareForInputs(*device_inputs);
  if (!prepared.ok()) return prepared;
  const std::string key = InputKey(inputs);
  // An untimed run first (first-touch allocations, lazily loaded kernels); its host time sizes the
  // hold that keeps the GPU busy while the host enqueues a timed run, so small steps are not timed
  // as the host's launch overhead.
  const auto before = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<DeviceTensor>> warm = RunEager(**context, key, *device_inputs, nullptr, nullptr);
  if (!warm.ok()) return warm.status();
  const int64_t host_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - before).count();
  std::vector<std::vector<double>> runs(kProfileRuns);
  for (std::vector<double>& step_ms : runs) {
    ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::HoldStream(2 * host_ns + 20'000, stream_));
    absl::StatusOr<std::vector<DeviceTensor>> outputs = RunEager(**context, key, *device_inputs, nullptr, &step_ms);
    if (!outputs.ok()) return outputs.status();
  }
  std::vector<double> median(plan_.steps.size());
  for (size_t s = 0; s < median.size(); ++s) {
    std::vector<double> times;
    for (const std::vector<double>& step_ms : runs) times.push_back(step_ms[s]);
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    median[s] = times[times.size() / 2];
  }
  return median;
}

}  // namespace exec
