// Execution contexts of CudaExecutor (see cuda_executor.h): the pool, graph replays from host
// tensors (page-locked staging, async copies) and from the caller's device buffers on the caller's
// stream, and RunDevice.
#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cudnn/status.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_run_util.h"

namespace exec {
namespace {

// Host memory the GPU can copy from and to without staging (cudaMallocHost), zero-filled.
absl::StatusOr<std::shared_ptr<uint8_t[]>> AllocatePageLocked(size_t bytes) {
  void* ptr = nullptr;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMallocHost(&ptr, std::max<size_t>(bytes, 1)));
  std::memset(ptr, 0, bytes);
  return std::shared_ptr<uint8_t[]>(static_cast<uint8_t*>(ptr), [](uint8_t* p) { cudaFreeHost(p); });
}

bool IsPageLocked(const void* ptr) {
  const std::optional<cudaPointerAttributes> attributes = PointerAttributes(ptr);
  return attributes && attributes->type == cudaMemoryTypeHost;
}

// Host -> device into a captured input buffer. Page-locked memory is copied directly; pageable
// memory goes through `staging` (page-locked, made on first need) in chunks, so that copying the
// next chunk on the CPU overlaps the DMA of the last one.
absl::Status CopyToDevice(const ir::Tensor& host, const DeviceTensor& device, std::shared_ptr<uint8_t[]>& staging,
                          cudaStream_t stream) {
  const size_t bytes = host.byte_size();
  if (bytes == 0) return absl::OkStatus();
  if (bytes != device.bytes()) return absl::InternalError("input size differs from the captured run's");
  const auto* src = static_cast<const uint8_t*>(host.raw_data());
  auto* dst = static_cast<uint8_t*>(device.data());
  if (IsPageLocked(src)) return CudaOk(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream), "H2D copy");
  if (staging == nullptr) {
    absl::StatusOr<std::shared_ptr<uint8_t[]>> made = AllocatePageLocked(bytes);
    if (!made.ok()) return made.status();
    staging = *std::move(made);
  }
  constexpr size_t kChunk = size_t{4} << 20;
  for (size_t offset = 0; offset < bytes; offset += kChunk) {
    const size_t n = std::min(kChunk, bytes - offset);
    std::memcpy(staging.get() + offset, src + offset, n);
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(dst + offset, staging.get() + offset, n, cudaMemcpyHostToDevice, stream));
  }
  return absl::OkStatus();
}

// Counts graph replays running at once (and the most seen) while it lives.
class InFlight {
 public:
  InFlight(std::atomic<int>& now, std::atomic<int>& most) : now_(now) {
    const int n = ++now_;
    int seen = most.load();
    while (n > seen && !most.compare_exchange_weak(seen, n)) {
    }
  }
  ~InFlight() { --now_; }

 private:
  std::atomic<int>& now_;
};

// On an early return from a replay: `done` recorded after whatever was queued (the next holder of
// the context waits for it) and, for host replays, the stream drained (its staging buffers are
// reused by the next call). Dismissed on success, where the replay does both itself.
class ReplayFailureGuard {
 public:
  ReplayFailureGuard(cudaEvent_t done, cudaStream_t stream, bool drain) : done_(done), stream_(stream), drain_(drain) {}
  ~ReplayFailureGuard() {
    if (dismissed_) return;
    cudaEventRecord(done_, stream_);
    if (drain_) cudaStreamSynchronize(stream_);
  }
  void Dismiss() { dismissed_ = true; }

 private:
  cudaEvent_t done_;
  cudaStream_t stream_;
  bool drain_;
  bool dismissed_ = false;
};

// `outputs` checked against what the run produces (dtype, dims), or allocated when empty.
absl::Status MatchOutputs(const std::vector<std::pair<ir::DType, std::vector<int64_t>>>& produced,
                          std::vector<DeviceBuffer>& outputs) {
  if (outputs.empty()) {
    for (const auto& [dtype, dims] : produced) {
      DeviceBuffer out{dtype, dims, nullptr, nullptr};
      ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMalloc(&out.data, std::max<size_t>(out.bytes(), 1)));
      out.owner = std::shared_ptr<void>(out.data, [](void* p) { cudaFree(p); });
      outputs.push_back(std::move(out));
    }
    return absl::OkStatus();
  }
  if (outputs.size() != produced.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(outputs.size(), " output buffers given, the model has ", produced.size(), " outputs"));
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    const auto& [dtype, dims] = produced[o];
    if (outputs[o].dtype != dtype || outputs[o].dims != dims) {
      return absl::InvalidArgumentError(absl::StrCat("output buffer ", o, " is ", ir::DTypeName(outputs[o].dtype),
                                                     ir::ShapeToString(outputs[o].dims), ", this run produces ",
                                                     ir::DTypeName(dtype), ir::ShapeToString(dims)));
    }
    if (outputs[o].data == nullptr && outputs[o].bytes() > 0) {
      return absl::InvalidArgumentError(absl::StrCat("output buffer ", o, " is null"));
    }
  }
  return absl::OkStatus();
}

// Copies `from` (device, logical layout; or a constant kept on the host) into the caller's buffer.
absl::Status CopyOut(const DeviceTensor& from, const DeviceBuffer& to, cudaStream_t stream) {
  if (to.bytes() == 0) return absl::OkStatus();
  if (from.host_value != nullptr) {
    return CudaOk(cudaMemcpyAsync(to.data, from.host_value->raw_data(), to.bytes(), cudaMemcpyHostToDevice, stream),
                  "constant output copy");
  }
  return CudaOk(cudaMemcpyAsync(to.data, from.data(), to.bytes(), cudaMemcpyDeviceToDevice, stream), "output copy");
}

}  // namespace

size_t DeviceBuffer::bytes() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return static_cast<size_t>(n) * ir::DTypeSize(dtype);
}

CudaExecutor::Context::~Context() {
  if (done != nullptr) cudaEventSynchronize(done);  // a replay on a caller's stream
  if (stream != nullptr) cudaStreamSynchronize(stream);
  captured.clear();  // its buffers are freed on `stream`: before it goes
  for (cudaEvent_t e : {compute_start, compute_end, done}) {
    if (e != nullptr) cudaEventDestroy(e);
  }
  if (stream != nullptr) {
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
  }
}

absl::StatusOr<std::unique_ptr<CudaExecutor::Context>> CudaExecutor::MakeContext() {
  auto context = std::make_unique<Context>();
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&context->stream, cudaStreamNonBlocking));
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventCreate(&context->compute_start));
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventCreate(&context->compute_end));
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&context->done, cudaEventDisableTiming));
  return context;
}

absl::StatusOr<CudaExecutor::ContextLease> CudaExecutor::AcquireContext() {
  std::unique_lock<std::mutex> lock(pool_mu_);
  if (idle_.empty() && static_cast<int>(contexts_.size()) < options_.max_contexts) {
    absl::StatusOr<std::unique_ptr<Context>> made = MakeContext();
    if (!made.ok()) return made.status();
    contexts_.push_back(*std::move(made));
    return ContextLease(this, contexts_.back().get());
  }
  pool_cv_.wait(lock, [this] { return !idle_.empty(); });
  Context* context = idle_.back();  // the most recently used: its graphs are likely captured
  idle_.pop_back();
  return ContextLease(this, context);
}

CudaExecutor::ContextLease::~ContextLease() {
  if (context_ == nullptr) return;
  std::lock_guard<std::mutex> lock(owner_->pool_mu_);
  owner_->idle_.push_back(context_);
  owner_->pool_cv_.notify_one();
}

int CudaExecutor::contexts_created() const {
  std::lock_guard<std::mutex> lock(pool_mu_);
  return static_cast<int>(contexts_.size());
}

absl::Status CudaExecutor::UseContext(Context& context) {
  stream_ = context.stream;
  CUDNN_RETURN_IF_ERROR(cudnnSetStream(cudnn_, stream_));
  return absl::OkStatus();
}

absl::StatusOr<ir::Tensor> CudaExecutor::AllocateHost(ir::DType dtype, std::vector<int64_t> dims) const {
  DeviceScope device(options_.device_id);
  ONNXRUN_CUDA_RETURN_IF_ERROR(device.error());
  if (dtype == ir::DType::kString) return ir::Tensor::Create(dtype, std::move(dims));
  absl::StatusOr<int64_t> count = ir::CheckedElementCount(dims, dtype);
  if (!count.ok()) return count.status();
  absl::StatusOr<std::shared_ptr<uint8_t[]>> buffer =
      AllocatePageLocked(static_cast<size_t>(*count) * ir::DTypeSize(dtype));
  if (!buffer.ok()) return buffer.status();
  return ir::Tensor::FromBuffer(dtype, std::move(dims), *std::move(buffer));
}

absl::StatusOr<std::vector<ir::Tensor>> CudaExecutor::ReplayHost(Context& context, CapturedRun& run,
                                                                 const std::vector<ir::Tensor>& inputs) {
  InFlight counted(in_flight_, max_in_flight_);
  const ir::Graph& g = plan_.graph;
  cudaStream_t stream = context.stream;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, context.done, 0));
  ReplayFailureGuard on_failure(context.done, stream, /*drain=*/true);
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::Status copied = CopyToDevice(inputs[i], run.inputs[i], run.staging_in[i], stream);
    if (!copied.ok()) return copied;
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventRecord(context.compute_start, stream));
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(run.exec, stream));
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventRecord(context.compute_end, stream));
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    if (g.value(g.outputs()[o]).constant || run.outputs[o].bytes() == 0) continue;
    if (run.staging_out[o] == nullptr) {
      absl::StatusOr<std::shared_ptr<uint8_t[]>> made = AllocatePageLocked(run.outputs[o].bytes());
      if (!made.ok()) return made.status();
      run.staging_out[o] = *std::move(made);
    }
    ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(run.staging_out[o].get(), run.outputs[o].data(),
                                                 run.outputs[o].bytes(), cudaMemcpyDeviceToHost, stream));
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventRecord(context.done, stream));
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  on_failure.Dismiss();
  std::vector<ir::Tensor> outputs;
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    if (const auto& constant = g.value(g.outputs()[o]).constant) {
      outputs.push_back(*constant);
      continue;
    }
    absl::StatusOr<ir::Tensor> t = ir::Tensor::Create(run.outputs[o].dtype, run.outputs[o].dims);
    if (!t.ok()) return t.status();
    if (t->byte_size() > 0) std::memcpy(t->raw_data(), run.staging_out[o].get(), t->byte_size());
    outputs.push_back(*std::move(t));
  }
  last_compute_ms_ = ElapsedMs(context.compute_start, context.compute_end);
  return outputs;
}

absl::Status CudaExecutor::ReplayDevice(Context& context, CapturedRun& run, const std::vector<DeviceBuffer>& inputs,
                                        cudaStream_t stream, std::vector<DeviceBuffer>& outputs) {
  InFlight counted(in_flight_, max_in_flight_);
  const ir::Graph& g = plan_.graph;
  std::vector<std::pair<ir::DType, std::vector<int64_t>>> produced;
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    const auto& constant = g.value(g.outputs()[o]).constant;
    produced.emplace_back(constant ? constant->dtype() : run.outputs[o].dtype,
                          constant ? constant->shape() : run.outputs[o].dims);
  }
  absl::Status matched = MatchOutputs(produced, outputs);
  if (!matched.ok()) return matched;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, context.done, 0));
  ReplayFailureGuard on_failure(context.done, stream, /*drain=*/false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].bytes() == 0) continue;
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(run.inputs[i].data(), inputs[i].data, inputs[i].bytes(), cudaMemcpyDeviceToDevice, stream));
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(run.exec, stream));
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    DeviceTensor from = run.outputs[o];
    if (const auto& constant = g.value(g.outputs()[o]).constant) {
      from.host_value = std::make_shared<const ir::Tensor>(*constant);
    }
    absl::Status copied = CopyOut(from, outputs[o], stream);
    if (!copied.ok()) return copied;
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventRecord(context.done, stream));
  on_failure.Dismiss();
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunDevice(const std::vector<DeviceBuffer>& inputs, cudaStream_t stream,
                                     std::vector<DeviceBuffer>& outputs) {
  DeviceScope device(options_.device_id);
  ONNXRUN_CUDA_RETURN_IF_ERROR(device.error());
  if (inputs.size() != plan_.graph.inputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", plan_.graph.inputs().size(), " inputs, got ", inputs.size()));
  }
  std::string key;
  for (const DeviceBuffer& in : inputs) AppendInputKey(in.dtype, in.dims, key);
  absl::StatusOr<ContextLease> leased = AcquireContext();
  if (!leased.ok()) return leased.status();
  Context& context = **leased;
  if (options_.cuda_graph) {
    if (auto it = context.captured.find(key); it != context.captured.end()) {
      return ReplayDevice(context, *it->second, inputs, stream, outputs);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status used = UseContext(context);
  if (!used.ok()) return used;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));  // the caller's inputs are written
  std::vector<DeviceTensor> device_inputs;
  for (const DeviceBuffer& in : inputs) {
    DeviceTensor view;
    view.dtype = in.dtype;
    view.dims = in.dims;
    view.buffer = std::shared_ptr<void>(in.data, [](void*) {});  // the caller's: not freed here
    device_inputs.push_back(std::move(view));
  }
  std::vector<DeviceTensor> eager_outputs;
  absl::StatusOr<CapturedRun*> captured = RunLocked(context, key, device_inputs, nullptr, eager_outputs);
  if (!captured.ok()) return captured.status();
  if (*captured != nullptr) return ReplayDevice(context, **captured, inputs, stream, outputs);
  std::vector<std::pair<ir::DType, std::vector<int64_t>>> produced;
  for (size_t o = 0; o < eager_outputs.size(); ++o) {
    const DeviceTensor& out = eager_outputs[o];
    if (out.host_value != nullptr && (StaysOnHost(*out.host_value))) {
      return absl::UnimplementedError(absl::StrCat("output '", plan_.graph.value(plan_.graph.outputs()[o]).name,
                                                   "' is ", out.host_value->Describe(),
                                                   ": device buffers hold dense numeric tensors only (use Run)"));
    }
    produced.emplace_back(out.dtype, out.dims);
  }
  absl::Status matched = MatchOutputs(produced, outputs);
  if (!matched.ok()) return matched;
  for (size_t o = 0; o < eager_outputs.size(); ++o) {
    absl::StatusOr<DeviceTensor> logical = ToLayout(eager_outputs[o], false, stream_);
    if (!logical.ok()) return logical.status();
    absl::Status copied = CopyOut(*logical, outputs[o], stream_);
    if (!copied.ok()) return copied;
  }
  return CudaOk(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

}  // namespace exec
