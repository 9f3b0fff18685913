// The run loop of CudaExecutor: step-by-step runs (with optional per-step
// timing), and capture and replay of CUDA graphs for input dims seen before
// (see cuda_executor.h).
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/cuda_executor.h"

namespace exec {
namespace {

// Runs with the same key have the same dims everywhere (plans are keyed the
// same way).
std::string InputKey(const std::vector<ir::Tensor>& inputs) {
  std::string key;
  for (const ir::Tensor& t : inputs) {
    absl::StrAppend(&key, ir::DTypeName(t.dtype()), ir::ShapeToString(t.shape()), ";");
  }
  return key;
}

// Host -> device copy into an existing logical buffer; the host tensor must
// outlive the copy.
absl::Status CopyIn(const ir::Tensor& host, const DeviceTensor& device, cudaStream_t stream) {
  if (host.byte_size() == 0) return absl::OkStatus();
  ONNXRUN_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(device.data(), host.raw_data(), host.byte_size(), cudaMemcpyHostToDevice, stream));
  return absl::OkStatus();
}

// OK for cudaSuccess, else the error naming the call.
absl::Status CudaOk(cudaError_t error, const char* call) {
  return error == cudaSuccess ? absl::OkStatus() : CudaStatus(error, call);
}

// Elapsed GPU time between two recorded events (the stream must have passed
// `end`).
double ElapsedMs(cudaEvent_t start, cudaEvent_t end) {
  float ms = 0;
  return cudaEventElapsedTime(&ms, start, end) == cudaSuccess ? ms : -1.0;
}

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
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const Step& step = plan_.steps[s];
    absl::Status status = RunStep(s, values);
    if (!status.ok()) {
      const ir::Node& node = g.node(step.nodes[0]);
      return absl::Status(status.code(), absl::StrCat("step #", s, " (", StepKindName(step.kind), " ", step.pattern,
                                                      ", node '", node.name, "'): ", status.message()));
    }
    if (step_events != nullptr) ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventRecord((*step_events)[s + 1], stream_));
    if (observer) {
      for (ir::ValueId out : step.outputs) {
        absl::StatusOr<ir::Tensor> t = Download(values[out], stream_);
        if (!t.ok()) return t.status();
        observer(s, out, *t);
      }
    }
    for (ir::ValueId dead : step.release_after) values[dead] = DeviceTensor();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ir::Tensor>> CudaExecutor::RunEager(const std::string& key,
                                                               const std::vector<ir::Tensor>& inputs,
                                                               const ValueObserver& observer,
                                                               std::vector<double>* step_ms) {
  const ir::Graph& g = plan_.graph;
  std::vector<DeviceTensor> values(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::StatusOr<DeviceTensor> d = Upload(inputs[i], false, stream_);
    if (!d.ok()) return d.status();
    values[g.inputs()[i]] = *std::move(d);
  }
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
  ran_on_host_ = std::any_of(inputs.begin(), inputs.end(), [](const ir::Tensor& t) { return StaysOnHost(t); });
  absl::Status status = record_event(compute_start_);
  if (status.ok() && step_ms != nullptr) status = record_event(events[0]);
  if (status.ok()) status = RunSteps(values, observer, step_ms ? &events : nullptr);
  if (status.ok()) status = record_event(compute_end_);
  if (!status.ok()) {
    destroy_events();
    return status;
  }
  EagerRecord record;
  record.device_only = !ran_on_host_;
  std::vector<ir::Tensor> outputs;
  for (ir::ValueId id : g.outputs()) {
    if (g.value(id).constant) {
      outputs.push_back(*g.value(id).constant);
      record.outputs.push_back({ir::DType::kUndefined, {}});
      continue;
    }
    absl::StatusOr<ir::Tensor> t = Download(values[id], stream_);
    if (!t.ok()) {
      destroy_events();
      return t.status();
    }
    record.outputs.push_back({t->dtype(), t->shape()});
    outputs.push_back(*std::move(t));
  }
  last_compute_ms_ = ElapsedMs(compute_start_, compute_end_);
  if (step_ms != nullptr) {
    step_ms->clear();
    for (size_t s = 0; s < plan_.steps.size(); ++s) step_ms->push_back(ElapsedMs(events[s], events[s + 1]));
  }
  destroy_events();
  if (!observer) eager_runs_[key] = std::move(record);
  return outputs;
}

absl::StatusOr<std::unique_ptr<CudaExecutor::CapturedRun>> CudaExecutor::Capture(
    const EagerRecord& record, const std::vector<ir::Tensor>& inputs) {
  const ir::Graph& g = plan_.graph;
  auto run = std::make_unique<CapturedRun>();
  for (const ir::Tensor& t : inputs) {
    absl::StatusOr<DeviceTensor> d = DeviceTensor::Allocate(t.dtype(), t.shape(), false, stream_);
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
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));  // the fixed buffers exist before capture
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  CaptureScope scope{stream_};  // ends the capture however this function is left
  // Everything allocated while capturing is freed before the capture ends (graph memory nodes).
  absl::Status status = [&]() -> absl::Status {
    std::vector<DeviceTensor> values(g.values().size());
    for (size_t i = 0; i < inputs.size(); ++i) values[g.inputs()[i]] = run->inputs[i];
    absl::Status steps = RunSteps(values, nullptr, nullptr);
    if (!steps.ok()) return steps;
    for (size_t o = 0; o < g.outputs().size(); ++o) {
      if (!run->outputs[o].valid() || run->outputs[o].num_elements() == 0) continue;
      absl::StatusOr<DeviceTensor> logical = ToLayout(values[g.outputs()[o]], false, stream_);
      if (!logical.ok()) return logical.status();
      if (logical->dims != run->outputs[o].dims) return absl::InternalError("output dims changed between runs");
      ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(run->outputs[o].data(), logical->data(), logical->bytes(),
                                                   cudaMemcpyDeviceToDevice, stream_));
    }
    return absl::OkStatus();
  }();
  const cudaError_t ended = scope.End();
  if (status.ok()) status = CudaOk(ended, "cudaStreamEndCapture");
  if (status.ok()) status = CudaOk(cudaGraphInstantiate(&run->exec, scope.graph, 0), "cudaGraphInstantiate");
  cudaGetLastError();  // a failed capture leaves no sticky error; clear the last one
  if (!status.ok()) return status;
  return run;
}

absl::StatusOr<std::vector<ir::Tensor>> CudaExecutor::Replay(const CapturedRun& run,
                                                             const std::vector<ir::Tensor>& inputs) {
  const ir::Graph& g = plan_.graph;
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::Status copied = CopyIn(inputs[i], run.inputs[i], stream_);
    if (!copied.ok()) return copied;
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventRecord(compute_start_, stream_));
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(run.exec, stream_));
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventRecord(compute_end_, stream_));
  std::vector<ir::Tensor> outputs;
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    if (g.value(g.outputs()[o]).constant) {
      outputs.push_back(*g.value(g.outputs()[o]).constant);
      continue;
    }
    absl::StatusOr<ir::Tensor> t = Download(run.outputs[o], stream_);
    if (!t.ok()) return t.status();
    outputs.push_back(*std::move(t));
  }
  last_compute_ms_ = ElapsedMs(compute_start_, compute_end_);
  return outputs;
}

absl::StatusOr<std::vector<ir::Tensor>> CudaExecutor::Run(std::vector<ir::Tensor> inputs,
                                                          const ValueObserver& observer) {
  std::lock_guard<std::mutex> lock(mu_);
  if (inputs.size() != plan_.graph.inputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", plan_.graph.inputs().size(), " inputs, got ", inputs.size()));
  }
  const std::string key = InputKey(inputs);
  std::vector<std::vector<int64_t>> input_dims;
  for (const ir::Tensor& t : inputs) input_dims.push_back(t.shape());
  absl::Status prepared = PrepareLocked(input_dims);
  if (!prepared.ok()) return prepared;
  current_folded_ = &folded_.at(input_dims);
  if (observer || !options_.cuda_graph) {
    if (!options_.cuda_graph) graph_status_ = "step by step (CUDA graphs switched off)";
    return RunEager(key, inputs, observer, nullptr);
  }
  if (auto captured = captured_.find(key); captured != captured_.end()) {
    graph_status_ = "CUDA graph replay";
    return Replay(*captured->second, inputs);
  }
  auto eager = eager_runs_.find(key);
  if (eager == eager_runs_.end()) {
    graph_status_ = "step by step (first run for these input dims builds the plans)";
    return RunEager(key, inputs, nullptr, nullptr);
  }
  if (!eager->second.device_only) {
    graph_status_ =
        "step by step (a step runs on the host, which a CUDA graph "
        "cannot hold)";
    return RunEager(key, inputs, nullptr, nullptr);
  }
  absl::StatusOr<std::unique_ptr<CapturedRun>> run = Capture(eager->second, inputs);
  if (!run.ok()) {
    graph_status_ = absl::StrCat("step by step (CUDA graph capture failed: ", run.status().message(), ")");
    eager->second.device_only = false;  // do not try again for these dims
    return RunEager(key, inputs, nullptr, nullptr);
  }
  graph_status_ = "CUDA graph replay";
  auto [it, inserted] = captured_.emplace(key, *std::move(run));
  return Replay(*it->second, inputs);
}

absl::StatusOr<std::vector<double>> CudaExecutor::ProfileSteps(std::vector<ir::Tensor> inputs) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<double> step_ms;
  std::vector<std::vector<int64_t>> input_dims;
  for (const ir::Tensor& t : inputs) input_dims.push_back(t.shape());
  absl::Status prepared = PrepareLocked(input_dims);
  if (!prepared.ok()) return prepared;
  current_folded_ = &folded_.at(input_dims);
  absl::StatusOr<std::vector<ir::Tensor>> outputs = RunEager(InputKey(inputs), inputs, nullptr, &step_ms);
  if (!outputs.ok()) return outputs.status();
  return step_ms;
}

}  // namespace exec
