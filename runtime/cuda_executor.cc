// CUDA execution of a Plan: device setup, constants, plan preparation and the per-step dispatch
// (see cuda_executor.h for what runs where; each step kind lives in its own cuda_steps_*.cc).
#include "runtime/cuda_executor.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kernels/cudnn/status.h"
#include "ops/control_flow.h"
#include "runtime/cuda_kernel_steps.h"
#include "runtime/cuda_run_util.h"
#include "runtime/cuda_step_rules.h"
#include "runtime/device_runner.h"
#include "runtime/shape_folding.h"

namespace exec {

std::string CudaUnavailableReason() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error == cudaErrorInsufficientDriver || error == cudaErrorNoDevice) {
    return absl::StrCat("no NVIDIA driver or GPU on this machine (cudaGetDeviceCount: ", cudaGetErrorName(error), ")");
  }
  if (error != cudaSuccess) return absl::StrCat("no usable CUDA device (", cudaGetErrorString(error), ")");
  if (count == 0) return "no CUDA device";
  return "";
}

absl::StatusOr<std::unique_ptr<CudaExecutor>> CudaExecutor::Create(const Plan& plan,
                                                                   const CudaExecutorOptions& options) {
  const std::string unavailable = CudaUnavailableReason();
  if (!unavailable.empty()) return absl::UnavailableError(unavailable);
  std::unique_ptr<CudaExecutor> executor(new CudaExecutor(plan, options));
  absl::Status status = executor->Init();
  if (!status.ok()) return status;
  return executor;
}

CudaExecutor::~CudaExecutor() {
  DeviceScope device(options_.device_id);
  // Replays on callers' streams may still read constants and captured buffers: wait for them.
  for (const std::unique_ptr<Context>& context : contexts_) {
    if (context->done != nullptr) cudaEventSynchronize(context->done);
  }
  fused_.clear();
  legacy_.clear();
  recurrent_.clear();
  float_constants_.clear();
  constants_.Clear();
  current_folded_ = nullptr;
  folded_.clear();  // device buffers are freed on their contexts' streams: before those go
  if (cudnn_ != nullptr) cudnnDestroy(cudnn_);
  idle_.clear();
  contexts_.clear();
}

CudaExecutor::PeakParts CudaExecutor::peak_parts(bool reserved) const {
  PeakParts parts;
  cudaMemPool_t pool;
  uint64_t high = 0, graph_high = 0;
  const int device = options_.device_id;
  if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
      cudaMemPoolGetAttribute(pool, reserved ? cudaMemPoolAttrReservedMemHigh : cudaMemPoolAttrUsedMemHigh, &high) !=
          cudaSuccess) {
    return parts;
  }
  parts.pool = static_cast<int64_t>(high);
  const cudaGraphMemAttributeType graph_attr = reserved ? cudaGraphMemAttrReservedMemHigh : cudaGraphMemAttrUsedMemHigh;
  parts.graphs = cudaDeviceGetGraphMemAttribute(device, graph_attr, &graph_high) == cudaSuccess
                     ? static_cast<int64_t>(graph_high)
                     : 0;
  parts.before_capture = (reserved ? reserved_before_capture_ : used_before_capture_).load();
  return parts;
}

int64_t CudaExecutor::peak_device_bytes(bool reserved) const {
  const PeakParts parts = peak_parts(reserved);
  if (parts.pool < 0) return -1;
  return std::max(parts.before_capture, parts.pool + parts.graphs);
}

namespace {

// String values stay on the host: a node that reads or makes one runs there.
bool TouchesStrings(const ir::Graph& g, const ir::Node& node) {
  for (const std::vector<ir::ValueId>* ids : {&node.inputs, &node.outputs}) {
    for (ir::ValueId id : *ids) {
      if (id != ir::kNoValue && g.value(id).type.dtype == ir::DType::kString) return true;
    }
  }
  return false;
}

void RaiseTo(std::atomic<int64_t>& peak, uint64_t value) {
  int64_t seen = peak.load();
  while (static_cast<int64_t>(value) > seen && !peak.compare_exchange_weak(seen, static_cast<int64_t>(value))) {
  }
}

}  // namespace

absl::Status CudaExecutor::ReleaseBeforeCapture() {
  cudaMemPool_t pool;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaDeviceGetDefaultMemPool(&pool, options_.device_id));
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));  // frees queued on it have happened
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMemPoolTrimTo(pool, 0));
  for (auto [attr, peak] : {std::pair{cudaMemPoolAttrReservedMemHigh, &reserved_before_capture_},
                            std::pair{cudaMemPoolAttrUsedMemHigh, &used_before_capture_}}) {
    uint64_t high = 0;
    ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMemPoolGetAttribute(pool, attr, &high));
    RaiseTo(*peak, high);
    uint64_t restart = 0;  // "reset to the current value"
    ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMemPoolSetAttribute(pool, attr, &restart));
  }
  return absl::OkStatus();
}

bool CudaExecutor::Capturing() const {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(stream_, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone;
}

bool CudaExecutor::WantsNhwc(ir::ValueId id) const {
  const ir::Value& v = plan_.graph.value(id);
  return v.layout == "NHWC" && v.type.rank() == 4;
}

absl::Status CudaExecutor::Init() {
  int count = 0;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
  if (options_.device_id < 0 || options_.device_id >= count) {
    return absl::InvalidArgumentError(absl::StrCat("device_id ", options_.device_id,
                                                   " does not exist: this machine has ", count, " CUDA device",
                                                   count == 1 ? "" : "s"));
  }
  if (options_.max_contexts < 1) return absl::InvalidArgumentError("max_contexts must be at least 1");
  DeviceScope device(options_.device_id);
  ONNXRUN_CUDA_RETURN_IF_ERROR(device.error());
  cudaDeviceProp prop;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, options_.device_id));
  device_name_ = absl::StrCat(prop.name, " (sm_", prop.major, prop.minor, ", device ", options_.device_id, ")");
  if (plan_.precision == "bf16" && prop.major < 8) {  // no bfloat16 tensor cores before Ampere
    return absl::InvalidArgumentError(absl::StrCat("--precision bf16 needs a GPU of compute capability 8.0 or newer; ",
                                                   device_name_, " is not: use fp16"));
  }
  gpu_signature_ = GpuSignature();
  absl::StatusOr<std::unique_ptr<Context>> first = MakeContext();
  if (!first.ok()) return first.status();
  contexts_.push_back(*std::move(first));
  idle_.push_back(contexts_[0].get());
  stream_ = contexts_[0]->stream;
  CUDNN_RETURN_IF_ERROR(cudnnCreate(&cudnn_));
  CUDNN_RETURN_IF_ERROR(cudnnSetStream(cudnn_, stream_));
  const ir::Graph& g = plan_.graph;
  fused_.resize(plan_.steps.size());
  legacy_.resize(plan_.steps.size());
  recurrent_.resize(plan_.steps.size());
  attention_.resize(plan_.steps.size());
  PlanViews();
  PlanScaledConvs();
  squeeze_excite_.resize(plan_.steps.size());
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    if (plan_.steps[s].kind == StepKind::kKernel) {
      squeeze_excite_[s] = partitioner::MatchSqueezeExciteStep(g, plan_.steps[s].nodes);
    }
  }
  PlanPooledSums();   // after squeeze_excite_: a pool may hand its sums to such a step
  PlanJoinedGates();  // likewise: an MLP step may leave its gate to the Mul reading it
  float_constants_.resize(g.values().size());
  CUDNN_RETURN_IF_NOT_OK(UploadConstants());
  if (options_.plan_cache) {
    cache_ = PlanCache::Open(options_.plan_cache_dir);
    if (!cache_->open_warning().empty()) cache_warnings_.push_back(cache_->open_warning());
  }
  for (const Step& step : plan_.steps) {
    const ir::Node& first = g.node(step.nodes[0]);
    std::string note;
    if (step.kind == StepKind::kFusedGraph) {
      note =
          "cuDNN operation graph (engine chosen at first run for the input "
          "dims)";
    } else if (step.kind == StepKind::kLegacy) {
      note = "legacy cuDNN call (made at first run for the input dims)";
    } else if (step.kind == StepKind::kAlias && first.input(0) != ir::kNoValue &&
               g.value(first.input(0)).type.dtype == ir::DType::kString) {
      note = "host step: string values stay on the host";
    } else if (step.kind == StepKind::kAlias) {
      note = "alias: same device bytes";
    } else if (IsCastPadStep(g, step) && IsFloat(g.value(first.inputs[0]).type.dtype)) {
      note = "own CUDA kernel: cast, NHWC layout and channel padding in one pass";
    } else if (IsCastPadStep(g, step)) {
      note = "own CUDA kernels: the cast from an integer type, then the channel padding";
    } else if (step.kind == StepKind::kKernel && step.nodes.size() == 1 && first.op_type == "Pad" &&
               RunsOnDeviceCopy(g, first) && IsChannelZeroPad(g, first)) {
      note = "own CUDA kernel: NHWC layout and channel padding in one pass (a strided copy from NHWC)";
    } else if (partitioner::IsAddLayerNormStep(g, step.nodes)) {
      note = "own CUDA kernel: the residual Add and the LayerNormalization in one pass";
    } else if (squeeze_excite_[notes_.size()]) {
      note = "own CUDA kernel: the squeeze-excite MLP (1x1 conv, activation, 1x1 conv, gate) in one pass";
    } else if (step.nodes.size() == 1 && ops::IsControlFlowOp(first.op_type)) {
      note = "control flow on the host: the body runs node by node with the CPU reference kernels";
    } else if (step.kind == StepKind::kKernel && step.nodes.size() == 1 && first.op_type == "Attention") {
      const std::string why_not = AttentionDeviceRejection(g, first);
      note = why_not.empty()
                 ? "attention: cuDNN fused attention or the own kernel (chosen at first run for the input dims)"
                 : "host reference kernel (" + why_not + ")";
    } else if (step.kind == StepKind::kKernel && step.nodes.size() == 1 && first.op_type == "ConvTranspose") {
      note = "legacy cuDNN: ConvTranspose as a backward-data convolution (2-D; chosen at first run)";
    } else if (step.kind == StepKind::kKernel && step.nodes.size() == 1 &&
               (RunsOnDevicePointwise(g, first) || RunsOnDeviceCopy(g, first) || CudaKernelSupports(g, first))) {
      note = "own CUDA kernel";
    } else {
      note =
          "host reference kernel (no GPU path yet): inputs copied to the "
          "host and outputs back";
    }
    notes_.push_back(note);
  }
  return absl::OkStatus();
}

absl::StatusOr<PlanBuildSummary> CudaExecutor::Prepare(const std::vector<std::vector<int64_t>>& input_dims) {
  DeviceScope device(options_.device_id);
  ONNXRUN_CUDA_RETURN_IF_ERROR(device.error());
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status status = PrepareLocked(input_dims);
  if (!status.ok()) return status;
  return last_build_;
}

absl::Status CudaExecutor::PrepareLocked(const std::vector<std::vector<int64_t>>& input_dims) {
  if (!prepared_.insert(input_dims).second) return absl::OkStatus();
  PlanBuildOptions build;
  build.threads = options_.build_threads;
  build.cache = cache_ ? &*cache_ : nullptr;
  build.progress = options_.progress;
  build.share_identical = options_.share_plans;
  build.autotune_plans = options_.autotune_plans;
  build.autotune_runtime_compiled = options_.autotune_runtime_compiled;
  build.matmul_autotune_plans = options_.autotune_matmuls ? kMatmulAutotunePlans : 1;
  build.autotune_large_convs = options_.autotune_large_convs;
  build.tune_streams = options_.autotune_streams;
  if (options_.autotune_streams > 1) {
    build.autotune_plans = std::max(build.autotune_plans, kStreamTunePlans);
    build.autotune_runtime_compiled = true;
  }
  build.already_built = [this](size_t step, const std::string& key) { return fused_[step].count(key) > 0; };
  std::vector<BuiltFusedStep> built = BuildFusedPlans(plan_, ConcreteDims(plan_, input_dims), build, &last_build_);
  for (BuiltFusedStep& b : built) InstallFused(std::move(b));
  FoldShapes(input_dims);
  return absl::OkStatus();
}

void CudaExecutor::FoldShapes(const std::vector<std::vector<int64_t>>& input_dims) {
  FoldedValues& folded = folded_[input_dims];
  for (auto& [id, host] : FoldShapeComputations(plan_, input_dims)) {
    absl::StatusOr<DeviceTensor> device = Upload(host, WantsNhwc(id), stream_);
    if (!device.ok()) continue;  // left to its step
    folded.device[id] = *std::move(device);
    folded.host[id] = std::move(host);
  }
}

const ir::Tensor* CudaExecutor::KnownValue(ir::ValueId id) const {
  if (plan_.graph.value(id).constant) return &*plan_.graph.value(id).constant;
  if (current_folded_ == nullptr) return nullptr;
  auto it = current_folded_->host.find(id);
  return it == current_folded_->host.end() ? nullptr : &it->second;
}

absl::Status CudaExecutor::UploadConstants() {
  const ir::Graph& g = plan_.graph;
  // Read by some step; 4-D and read by cuDNN graph steps only (held channels-last only).
  std::vector<bool> read(g.values().size(), false), graph_only(g.values().size(), true);
  for (const Step& step : plan_.steps) {
    for (ir::ValueId in : step.inputs) {
      if (!g.value(in).constant) continue;
      read[in] = true;
      if (step.kind != StepKind::kFusedGraph || g.value(in).constant->shape().size() != 4) graph_only[in] = false;
    }
  }
  return constants_.Init(g, read, graph_only, stream_);
}

absl::StatusOr<DeviceTensor> CudaExecutor::Input(ir::ValueId id, const std::vector<DeviceTensor>& values) const {
  if (plan_.graph.value(id).constant && constants_.Serves(id)) return constants_.Logical(id, Capturing(), stream_);
  if (!values[id].valid()) {
    return absl::InternalError(absl::StrCat("value '", plan_.graph.value(id).name, "' is not on the device"));
  }
  return values[id];
}

absl::Status CudaExecutor::RunStep(size_t index, std::vector<DeviceTensor>& values) {
  const Step& step = plan_.steps[index];
  const ir::Graph& g = plan_.graph;
  if (current_folded_ != nullptr && StepIsFolded(step, current_folded_->host)) {
    for (ir::ValueId out : step.outputs) values[out] = current_folded_->device.at(out);
    return absl::OkStatus();  // folded for these input dims at plan time
  }
  if (written_by_attention_[index] && values[g.node(step.nodes[0]).outputs[0]].valid()) {
    notes_[index] = "no work: attention wrote its output in this layout";
    return absl::OkStatus();
  }
  if (views_on_ && view_steps_[index]) {
    CUDNN_ASSIGN_OR_RETURN(bool viewed, RunAsView(step, values));
    if (viewed) {
      notes_[index] = "no work: a view attention reads in place (strides, no copy)";
      return absl::OkStatus();
    }
  }
  if (!views_.empty()) CUDNN_RETURN_IF_NOT_OK(MaterialiseViews(step, values, ViewReadInputs(step)));
  if (joined_gates_.mlp_of[index]) {
    CUDNN_ASSIGN_OR_RETURN(bool joined, RunJoinedGate(index, values));
    if (joined) return absl::OkStatus();
  }
  if (gate_reader_[index]) {
    CUDNN_ASSIGN_OR_RETURN(bool held, HoldGate(index, values));
    if (held) return absl::OkStatus();  // the conv step that reads the product computes it
  }
  if (step.kind == StepKind::kFusedGraph) return RunFused(index, values);
  if (step.kind == StepKind::kLegacy) return RunLegacy(index, step, values);
  if (step.kind == StepKind::kAlias) return RunAlias(step, values);
  if (IsCastPadStep(g, step)) return RunCastPad(step, values);
  if (squeeze_excite_[index]) return RunSqueezeExcite(index, values);
  if (partitioner::IsAddLayerNormStep(g, step.nodes)) return RunAddLayerNorm(step, values);
  if (step.kind == StepKind::kKernel && step.nodes.size() == 1 && !TouchesStrings(g, g.node(step.nodes[0]))) {
    const ir::Node& node = g.node(step.nodes[0]);
    if (node.op_type == "Attention") return RunAttention(index, step, values);
    if (node.op_type == "ConvTranspose") return RunConvTranspose(index, step, values);
    if (RunsOnDevicePointwise(g, node)) return RunPointwise(step, values);
    if (RunsOnDeviceCopy(g, node)) return node.op_type == "Concat" ? RunConcat(step, values) : RunPad(step, values);
    if (CudaKernelSupports(g, node)) return RunKernel(step, values);
  }
  return RunOnHost(step, values);
}

}  // namespace exec
