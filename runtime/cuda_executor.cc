// CUDA execution of a Plan (see cuda_executor.h for what runs where).
#include "runtime/cuda_executor.h"

#include <cstring>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cudnn/status.h"
#include "ops/infer_concrete.h"
#include "ops/op_def.h"
#include "runtime/cpu_executor.h"
#include "runtime/cuda_kernel_steps.h"

namespace exec {
namespace {

using kernels::cuda::BinaryOp;
using kernels::cuda::UnaryOp;

const std::map<std::string, UnaryOp>& UnaryOps() {
  static const auto* ops = new std::map<std::string, UnaryOp>{{"Relu", UnaryOp::kRelu},
                                                              {"Sigmoid", UnaryOp::kSigmoid},
                                                              {"Tanh", UnaryOp::kTanh},
                                                              {"LeakyRelu", UnaryOp::kLeakyRelu},
                                                              {"Elu", UnaryOp::kElu},
                                                              {"Selu", UnaryOp::kSelu},
                                                              {"HardSigmoid", UnaryOp::kHardSigmoid},
                                                              {"HardSwish", UnaryOp::kHardSwish},
                                                              {"Softplus", UnaryOp::kSoftplus},
                                                              {"Erf", UnaryOp::kErf},
                                                              {"Sqrt", UnaryOp::kSqrt},
                                                              {"Exp", UnaryOp::kExp},
                                                              {"Log", UnaryOp::kLog},
                                                              {"Neg", UnaryOp::kNeg},
                                                              {"Abs", UnaryOp::kAbs},
                                                              {"Reciprocal", UnaryOp::kReciprocal}};
  return *ops;
}

const std::map<std::string, BinaryOp>& BinaryOps() {
  static const auto* ops = new std::map<std::string, BinaryOp>{
      {"Add", BinaryOp::kAdd}, {"Sub", BinaryOp::kSub}, {"Mul", BinaryOp::kMul}, {"Div", BinaryOp::kDiv},
      {"Pow", BinaryOp::kPow}, {"Min", BinaryOp::kMin}, {"Max", BinaryOp::kMax}, {"PRelu", BinaryOp::kPRelu}};
  return *ops;
}

bool IsFloatType(ir::DType d) { return d == ir::DType::kFloat32 || d == ir::DType::kFloat16; }

// The unary op's alpha/beta from the node's attributes (and Clip's constant
// bounds).
void UnaryParams(const ir::Graph& graph, const ir::Node& node, float& alpha, float& beta) {
  alpha = 0, beta = 0;
  if (node.op_type == "LeakyRelu") alpha = node.attrs.GetFloat("alpha", 0.01f);
  if (node.op_type == "Elu") alpha = node.attrs.GetFloat("alpha", 1.0f);
  if (node.op_type == "Selu") {
    alpha = node.attrs.GetFloat("alpha", 1.67326319217681884765625f);
    beta = node.attrs.GetFloat("gamma", 1.05070102214813232421875f);
  }
  if (node.op_type == "HardSigmoid") {
    alpha = node.attrs.GetFloat("alpha", 0.2f);
    beta = node.attrs.GetFloat("beta", 0.5f);
  }
}

// Pointwise ops this executor runs with its own kernels: unary/binary float ops
// of the maps above and Clip with constant bounds; Gelu by its approximation
// attribute.
bool RunsOnDevicePointwise(const ir::Graph& graph, const ir::Node& node) {
  if (node.outputs.size() != 1 || node.inputs.empty() || node.inputs[0] == ir::kNoValue) return false;
  if (node.op_type == "Cast") {
    return IsFloatType(graph.value(node.inputs[0]).type.dtype) && IsFloatType(graph.value(node.outputs[0]).type.dtype);
  }
  if (!IsFloatType(graph.value(node.inputs[0]).type.dtype)) return false;
  if (UnaryOps().count(node.op_type) || node.op_type == "Gelu") return node.inputs.size() == 1;
  if (node.op_type == "Clip") {
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != ir::kNoValue && !graph.value(node.inputs[i]).constant) return false;
    }
    return true;
  }
  if (node.op_type == "PRelu" && node.opset < 7) return false;  // opset 6: slope per channel, not numpy
  if (BinaryOps().count(node.op_type)) {
    return node.inputs.size() == 2 && node.inputs[1] != ir::kNoValue &&
           graph.value(node.inputs[1]).type.dtype == graph.value(node.inputs[0]).type.dtype;
  }
  return false;
}

// Concat and Pad (constant, non-negative constant pads) run as strided copies
// on the device.
bool RunsOnDeviceCopy(const ir::Graph& graph, const ir::Node& node) {
  if (node.outputs.size() != 1) return false;
  if (node.op_type == "Concat") {
    for (ir::ValueId in : node.inputs) {
      if (in == ir::kNoValue || graph.value(in).type.rank() > kernels::cuda::kMaxRank) return false;
    }
    return !node.inputs.empty();
  }
  if (node.op_type != "Pad" || node.attrs.GetString("mode", "constant") != "constant") return false;
  const ir::ValueId pads = node.input(1), value = node.input(2);
  if (pads == ir::kNoValue || !graph.value(pads).constant || node.input(3) != ir::kNoValue) return false;
  for (int64_t p : graph.value(pads).constant->ToInt64Vector()) {
    if (p < 0) return false;
  }
  return value == ir::kNoValue || graph.value(value).constant.has_value();
}

// Fills `shape` for copying `src` (logical dims, its own strides) into
// `dst_strides`.
kernels::cuda::CopyShape CopyOf(const DeviceTensor& src, const std::vector<int64_t>& dst_strides) {
  kernels::cuda::CopyShape shape;
  shape.rank = static_cast<int>(src.dims.size());
  const std::vector<int64_t> s = src.strides();
  for (int d = 0; d < shape.rank; ++d) {
    shape.dims[d] = src.dims[d];
    shape.src_strides[d] = s[d];
    shape.dst_strides[d] = dst_strides[d];
  }
  return shape;
}

}  // namespace

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
  captured_.clear();
  fused_.clear();
  legacy_.clear();
  float_constants_.clear();
  constants_.clear();
  channels_last_constants_.clear();
  if (cudnn_ != nullptr) cudnnDestroy(cudnn_);
  if (compute_start_ != nullptr) cudaEventDestroy(compute_start_);
  if (compute_end_ != nullptr) cudaEventDestroy(compute_end_);
  if (stream_ != nullptr) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

int64_t CudaExecutor::peak_device_bytes() const {
  cudaMemPool_t pool;
  uint64_t high = 0, graph_high = 0;
  if (cudaDeviceGetDefaultMemPool(&pool, 0) != cudaSuccess ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &high) != cudaSuccess) {
    return -1;
  }
  if (cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &graph_high) != cudaSuccess) graph_high = 0;
  return static_cast<int64_t>(high + graph_high);
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
  cudaDeviceProp prop;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, 0));
  device_name_ = absl::StrCat(prop.name, " (sm_", prop.major, prop.minor, ")");
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDNN_RETURN_IF_ERROR(cudnnCreate(&cudnn_));
  CUDNN_RETURN_IF_ERROR(cudnnSetStream(cudnn_, stream_));
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventCreate(&compute_start_));
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaEventCreate(&compute_end_));
  const ir::Graph& g = plan_.graph;
  constants_.resize(g.values().size());
  channels_last_constants_.resize(g.values().size());
  fused_.resize(plan_.steps.size());
  legacy_.resize(plan_.steps.size());
  float_constants_.resize(g.values().size());
  for (const Step& step : plan_.steps) {
    for (ir::ValueId in : step.inputs) {
      if (!g.value(in).constant || constants_[in].valid()) continue;
      absl::StatusOr<DeviceTensor> t = Upload(*g.value(in).constant, false, stream_);
      if (!t.ok()) return t.status();
      constants_[in] = *std::move(t);
    }
  }
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
    } else if (step.kind == StepKind::kAlias) {
      note = "alias: same device bytes";
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
  build.already_built = [this](size_t step, const std::string& key) { return fused_[step].count(key) > 0; };
  std::vector<BuiltFusedStep> built = BuildFusedPlans(plan_, ConcreteDims(plan_, input_dims), build, &last_build_);
  for (BuiltFusedStep& b : built) InstallFused(std::move(b));
  return absl::OkStatus();
}

absl::StatusOr<DeviceTensor> CudaExecutor::Input(ir::ValueId id, const std::vector<DeviceTensor>& values) const {
  if (constants_[id].valid() && plan_.graph.value(id).constant) return constants_[id];
  if (!values[id].valid()) {
    return absl::InternalError(absl::StrCat("value '", plan_.graph.value(id).name, "' is not on the device"));
  }
  return values[id];
}

absl::Status CudaExecutor::RunOnHost(const Step& step, std::vector<DeviceTensor>& values) {
  ran_on_host_ = true;
  if (Capturing()) return absl::FailedPreconditionError("a host step cannot run inside a CUDA graph");
  const ir::Graph& g = plan_.graph;
  std::map<ir::ValueId, ir::Tensor> host;
  for (ir::ValueId in : step.inputs) {
    if (g.value(in).constant) {
      host[in] = *g.value(in).constant;
      continue;
    }
    absl::StatusOr<DeviceTensor> d = Input(in, values);
    if (!d.ok()) return d.status();
    absl::StatusOr<ir::Tensor> t = Download(*d, stream_);
    if (!t.ok()) return t.status();
    host[in] = *std::move(t);
  }
  for (ir::NodeId id : step.nodes) {
    const ir::Node& node = g.node(id);
    std::vector<const ir::Tensor*> inputs;
    for (ir::ValueId in : node.inputs) inputs.push_back(in == ir::kNoValue ? nullptr : &host.at(in));
    absl::StatusOr<std::vector<ir::Tensor>> outputs = RunNodeOnCpu(node, inputs);
    if (!outputs.ok()) return outputs.status();
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] != ir::kNoValue) host[node.outputs[i]] = std::move((*outputs)[i]);
    }
  }
  for (ir::ValueId out : step.outputs) {
    absl::StatusOr<DeviceTensor> d = Upload(host.at(out), WantsNhwc(out), stream_);
    if (!d.ok()) return d.status();
    values[out] = *std::move(d);
  }
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunAlias(const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  absl::StatusOr<DeviceTensor> in = Input(node.inputs[0], values);
  if (!in.ok()) return in.status();
  // The output's dims come from the op's inference on the concrete input (shape
  // inputs are constants after folding; otherwise the step runs on the host).
  std::vector<ops::ConcreteInput> concrete;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::ValueId id = node.inputs[i];
    const ir::Tensor* constant = id == ir::kNoValue || !g.value(id).constant ? nullptr : &*g.value(id).constant;
    if (id == ir::kNoValue) {
      concrete.push_back(ops::ConcreteInput::Absent());
    } else if (i == 0) {
      concrete.push_back(ops::ConcreteInput::Of(in->dtype, in->dims, constant));
    } else if (constant != nullptr) {
      concrete.push_back(ops::ConcreteInput::OfTensor(constant));
    } else {
      return RunOnHost(step, values);  // a shape input computed at run time
    }
  }
  absl::StatusOr<std::vector<ops::ConcreteOutput>> out_types = ops::InferConcrete(node, concrete);
  if (!out_types.ok() || !(*out_types)[0].dims) return RunOnHost(step, values);
  const std::vector<int64_t> dims = *(*out_types)[0].dims;
  const bool same_dims = dims == in->dims;
  absl::StatusOr<DeviceTensor> src = ToLayout(*in, same_dims && in->nhwc, stream_);
  if (!src.ok()) return src.status();
  DeviceTensor out = *src;
  out.dims = dims;
  out.nhwc = src->nhwc && same_dims;
  absl::StatusOr<DeviceTensor> stored = ToLayout(out, WantsNhwc(node.outputs[0]), stream_);
  if (!stored.ok()) return stored.status();
  values[node.outputs[0]] = *std::move(stored);
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunPointwise(const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  const ir::ValueId out_id = node.outputs[0];
  const bool nhwc = WantsNhwc(out_id);
  absl::StatusOr<DeviceTensor> a = Input(node.inputs[0], values);
  if (!a.ok()) return a.status();
  const auto type =
      a->dtype == ir::DType::kFloat16 ? kernels::cuda::FloatType::kFloat16 : kernels::cuda::FloatType::kFloat32;
  if (node.op_type == "Cast") {
    const ir::DType to = plan_.graph.value(out_id).type.dtype;
    absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(to, a->dims, a->nhwc, stream_);
    if (!out.ok()) return out.status();
    const auto to_type =
        to == ir::DType::kFloat16 ? kernels::cuda::FloatType::kFloat16 : kernels::cuda::FloatType::kFloat32;
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        kernels::cuda::ConvertFloat(type, to_type, a->data(), out->data(), a->num_elements(), stream_));
    absl::StatusOr<DeviceTensor> stored = ToLayout(*out, nhwc, stream_);
    if (!stored.ok()) return stored.status();
    values[out_id] = *std::move(stored);
    return absl::OkStatus();
  }
  if (node.inputs.size() == 1 || node.op_type == "Clip") {
    absl::StatusOr<DeviceTensor> src = ToLayout(*a, nhwc, stream_);
    if (!src.ok()) return src.status();
    absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(a->dtype, a->dims, src->nhwc, stream_);
    if (!out.ok()) return out.status();
    float alpha, beta;
    UnaryParams(g, node, alpha, beta);
    UnaryOp op = UnaryOp::kIdentity;
    if (node.op_type == "Clip") {
      op = UnaryOp::kClip;
      alpha = -INFINITY, beta = INFINITY;
      if (node.input(1) != ir::kNoValue) alpha = static_cast<float>(g.value(node.input(1)).constant->GetAsDouble(0));
      if (node.input(2) != ir::kNoValue) beta = static_cast<float>(g.value(node.input(2)).constant->GetAsDouble(0));
    } else if (node.op_type == "Gelu") {
      op = node.attrs.GetString("approximate", "none") == "tanh" ? UnaryOp::kGeluTanh : UnaryOp::kGelu;
    } else {
      op = UnaryOps().at(node.op_type);
    }
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        kernels::cuda::Unary(op, type, src->data(), out->data(), out->num_elements(), alpha, beta, stream_));
    values[out_id] = *std::move(out);
    return absl::OkStatus();
  }
  absl::StatusOr<DeviceTensor> b = Input(node.inputs[1], values);
  if (!b.ok()) return b.status();
  // Both operands are read in place, whatever their layout, through strides in
  // the output's index space; the output is written in the layout the plan
  // wants (no conversions).
  std::vector<int64_t> out_dims = a->dims.size() >= b->dims.size() ? a->dims : b->dims;
  for (size_t i = 0; i < out_dims.size(); ++i) {
    const size_t oa = out_dims.size() - a->dims.size(), ob = out_dims.size() - b->dims.size();
    const int64_t da = i >= oa ? a->dims[i - oa] : 1, db = i >= ob ? b->dims[i - ob] : 1;
    out_dims[i] = std::max(da, db);
  }
  if (out_dims.size() > kernels::cuda::kMaxRank) return RunOnHost(step, values);
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(a->dtype, out_dims, nhwc, stream_);
  if (!out.ok()) return out.status();
  // The output's dims in storage order (NHWC: N,H,W,C), and each operand's
  // strides in that order.
  std::vector<int> order(out_dims.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<int>(d);
  if (out->nhwc) order = {0, 2, 3, 1};
  const std::vector<int64_t> sa = a->BroadcastStrides(out_dims), sb = b->BroadcastStrides(out_dims);
  kernels::cuda::CopyShape shape;
  shape.rank = static_cast<int>(out_dims.size());
  int64_t b_strides[kernels::cuda::kMaxRank] = {};
  for (int d = 0; d < shape.rank; ++d) {
    shape.dims[d] = out_dims[order[d]];
    shape.src_strides[d] = sa[order[d]];
    b_strides[d] = sb[order[d]];
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Binary(BinaryOps().at(node.op_type), type, a->data(), b->data(),
                                                     out->data(), shape, b_strides, stream_));
  values[out_id] = *std::move(out);
  return absl::OkStatus();
}

absl::StatusOr<DeviceTensor> CudaExecutor::Bound(const UidBinding& binding, const std::vector<DeviceTensor>& values) {
  absl::StatusOr<DeviceTensor> t = Input(binding.value, values);
  if (!t.ok()) return t.status();
  const bool want = binding.channels_last && t->dims.size() == 4;
  if (t->nhwc == want) return t;
  if (plan_.graph.value(binding.value).constant) {
    DeviceTensor& cached = channels_last_constants_[binding.value];
    if (!cached.valid() || cached.num_elements() != t->num_elements()) {
      if (Capturing()) return absl::FailedPreconditionError("a constant cache would be filled inside a CUDA graph");
      absl::StatusOr<DeviceTensor> converted = ToLayout(*t, want, stream_);
      if (!converted.ok()) return converted.status();
      cached = *std::move(converted);
    }
    return cached;
  }
  return ToLayout(*t, want, stream_);
}

void CudaExecutor::InstallFused(BuiltFusedStep built) {
  FusedEntry& entry = fused_[built.step][built.dims_key];
  entry.status = built.status;
  entry.lowered = std::move(built.lowered);
  entry.plan = std::move(built.plan);
  if (!built.cache_warning.empty()) cache_warnings_.push_back(built.cache_warning);
  notes_[built.step] =
      entry.plan ? absl::StrCat("cuDNN operation graph: ", entry.plan->engine_description(),
                                built.from_cache ? " (plan from the cache)" : "",
                                built.autotune_note.empty() ? "" : absl::StrCat(" (", built.autotune_note, ")"))
                 : absl::StrCat("host reference kernels (cuDNN graph not built: ", entry.status.message(), ")");
}

absl::Status CudaExecutor::RunFused(size_t index, std::vector<DeviceTensor>& values) {
  const Step& step = plan_.steps[index];
  std::map<ir::ValueId, std::vector<int64_t>> dims;
  for (ir::ValueId in : step.inputs) {
    if (plan_.graph.value(in).constant) continue;
    if (!values[in].valid()) return absl::InternalError("fused step input not on the device");
    dims[in] = values[in].dims;
  }
  const std::string key = *FusedDimsKey(plan_, step, [&](ir::ValueId id) { return &dims.at(id); });
  if (!fused_[index].count(key)) {
    InstallFused(BuildFusedStep(cudnn_, plan_, index, dims, cache_ ? &*cache_ : nullptr, GpuSignature()));
  }
  FusedEntry& entry = fused_[index].at(key);
  if (!entry.status.ok()) return RunSplit(index, entry.status, values);
  std::map<int64_t, void*> ptrs;
  std::vector<DeviceTensor> keep_alive;
  DeviceTensor output;
  for (const auto& [uid, binding] : entry.lowered.bindings) {
    if (uid == entry.lowered.output_uid) {
      absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(plan_.graph.value(binding.value).type.dtype,
                                                                binding.dims, binding.channels_last, stream_);
      if (!out.ok()) return out.status();
      output = *out;
      ptrs[uid] = output.data();
      continue;
    }
    absl::StatusOr<DeviceTensor> t = Bound(binding, values);
    if (!t.ok()) return t.status();
    ptrs[uid] = t->data();
    keep_alive.push_back(*std::move(t));
  }
  DeviceTensor workspace;
  if (entry.plan->workspace_bytes() > 0) {
    absl::StatusOr<DeviceTensor> ws = DeviceTensor::Allocate(
        ir::DType::kUint8, {static_cast<int64_t>(entry.plan->workspace_bytes())}, false, stream_);
    if (!ws.ok()) return ws.status();
    workspace = *std::move(ws);
  }
  absl::Status status = entry.plan->Execute(cudnn_, ptrs, workspace.data());
  if (!status.ok()) return status;
  absl::StatusOr<DeviceTensor> stored = ToLayout(output, WantsNhwc(step.outputs[0]), stream_);
  if (!stored.ok()) return stored.status();
  values[step.outputs[0]] = *std::move(stored);
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunSplit(size_t index, const absl::Status& why_not_whole,
                                    std::vector<DeviceTensor>& values) {
  const Step& fused = plan_.steps[index];
  const ir::Graph& g = plan_.graph;
  const std::string why(why_not_whole.message());
  const bool ran_on_host_before = ran_on_host_;
  ran_on_host_ = false;
  for (ir::NodeId id : fused.nodes) {
    const ir::Node& node = g.node(id);
    Step single;
    single.kind = StepKind::kKernel;
    single.nodes = {id};
    for (ir::ValueId in : node.inputs) {
      if (in != ir::kNoValue) single.inputs.push_back(in);
    }
    single.outputs = node.outputs;
    absl::Status status;
    if (id == fused.nodes[0]) {
      status = RunLegacy(index, single, values);
    } else if (RunsOnDevicePointwise(g, node)) {
      status = RunPointwise(single, values);
    } else {
      status = RunOnHost(single, values);
    }
    if (!status.ok()) return status;
  }
  for (ir::NodeId id : fused.nodes) {  // intermediates of the split graph die here
    for (ir::ValueId out : g.node(id).outputs) {
      if (std::find(fused.outputs.begin(), fused.outputs.end(), out) == fused.outputs.end()) {
        values[out] = DeviceTensor();
      }
    }
  }
  const bool all_on_device = !ran_on_host_;
  ran_on_host_ = ran_on_host_ || ran_on_host_before;
  notes_[index] =
      absl::StrCat(all_on_device ? "split into single nodes: the conv/matmul on legacy cuDNN, each following "
                                   "op on an own kernel"
                                 : "split into single nodes, some on the host reference kernels",
                   " (as one step: ", why.substr(0, why.find('\n')), ")");
  return absl::OkStatus();
}

namespace {

cudnn::Shape4 ToShape4(const std::vector<int64_t>& d) {
  return cudnn::Shape4{static_cast<int>(d[0]), static_cast<int>(d[1]), static_cast<int>(d[2]), static_cast<int>(d[3])};
}

// The activation a Legacy step absorbed after its first node (Relu, or Clip(0,
// 6)).
// Whether a Legacy step's absorbed tail is x * Sigmoid(x) (SiLU; the own depthwise kernel only).
bool HasSiluTail(const ir::Graph& g, const Step& step) {
  return step.nodes.size() == 3 && g.node(step.nodes[1]).op_type == "Sigmoid" && g.node(step.nodes[2]).op_type == "Mul";
}

absl::StatusOr<cudnn::LegacyActivation> AbsorbedActivation(const ir::Graph& g, const Step& step) {
  if (step.nodes.size() == 1 || HasSiluTail(g, step)) return cudnn::LegacyActivation::kNone;
  const ir::Node& act = g.node(step.nodes[1]);
  if (act.op_type == "Relu") return cudnn::LegacyActivation::kRelu;
  if (act.op_type == "Clip" && act.input(1) != ir::kNoValue && act.input(2) != ir::kNoValue &&
      g.value(act.input(1)).constant->GetAsDouble(0) == 0.0 && g.value(act.input(2)).constant->GetAsDouble(0) == 6.0) {
    return cudnn::LegacyActivation::kRelu6;
  }
  return absl::UnimplementedError("absorbed activation is not ReLU or ReLU6");
}

// The own depthwise kernel's parameters for a legacy conv spec, when it is a depthwise conv (one
// output channel per input channel) in NHWC that the kernel handles; nullopt otherwise.
std::optional<kernels::cuda::DepthwiseConvParams> OwnDepthwise(const cudnn::LegacyConvSpec& spec,
                                                               const std::vector<int64_t>& w,
                                                               cudnn::LegacyActivation act) {
  if (spec.layout != cudnn::Layout::kNHWC || spec.groups != spec.x.c || spec.k != spec.x.c || w[1] != 1) {
    return std::nullopt;
  }
  kernels::cuda::DepthwiseConvParams p;
  p.n = spec.x.n, p.c = spec.x.c, p.h = spec.x.h, p.w = spec.x.w, p.r = spec.r, p.s = spec.s;
  p.pad_top = p.pad_bottom = spec.pad_h;
  p.pad_left = p.pad_right = spec.pad_w;
  p.stride_h = spec.stride_h, p.stride_w = spec.stride_w;
  p.dilation_h = spec.dilation_h, p.dilation_w = spec.dilation_w;
  p.out_h = (p.h + 2 * p.pad_top - ((p.r - 1) * p.dilation_h + 1)) / p.stride_h + 1;
  p.out_w = (p.w + 2 * p.pad_left - ((p.s - 1) * p.dilation_w + 1)) / p.stride_w + 1;
  p.activation = act == cudnn::LegacyActivation::kRelu    ? kernels::cuda::DepthwiseConvParams::kRelu
                 : act == cudnn::LegacyActivation::kRelu6 ? kernels::cuda::DepthwiseConvParams::kRelu6
                                                          : kernels::cuda::DepthwiseConvParams::kNone;
  p.fp16 = spec.type == cudnn::IoType::kHalf;
  if (p.out_h < 1 || p.out_w < 1 || !kernels::cuda::DepthwiseConvSupported(p)) return std::nullopt;
  return p;
}

// Gemm(A[M,K], B[N,K] transposed, C[N]) as a 1x1 convolution of A read as [M,K,1,1] NCHW with
// filters B read as [N,K,1,1]: the legacy rung for a matmul cuDNN's graph API cannot build (e.g.
// strict fp32, where every matmul engine uses TF32).
absl::StatusOr<cudnn::LegacyConvSpec> GemmAsConv(const ir::Graph& g, const ir::Node& node,
                                                 const std::vector<int64_t>& a, cudnn::IoType io, bool allow_tf32) {
  const ir::ValueId b = node.input(1), c = node.input(2);
  if (a.size() != 2 || node.attrs.GetInt("transA", 0) != 0 || node.attrs.GetInt("transB", 0) != 1 ||
      node.attrs.GetFloat("alpha", 1.0f) != 1.0f || node.attrs.GetFloat("beta", 1.0f) != 1.0f || !g.value(b).constant ||
      g.value(b).constant->rank() != 2 || g.value(b).constant->shape()[1] != a[1]) {
    return absl::UnimplementedError("Gemm form (transposed A, untransposed B, alpha/beta, non-constant B)");
  }
  const int64_t n = g.value(b).constant->shape()[0];
  // A bias per output column: [N] or [1,N] ([N,1] would be per row).
  const ir::Tensor* bias = c == ir::kNoValue ? nullptr : (g.value(c).constant ? &*g.value(c).constant : nullptr);
  if (c != ir::kNoValue && (bias == nullptr || bias->num_elements() != n || bias->rank() > 2 ||
                            (bias->rank() == 2 && bias->shape()[0] != 1))) {
    return absl::UnimplementedError("Gemm bias is not a constant [N] or [1,N]");
  }
  cudnn::LegacyConvSpec spec;
  spec.x = cudnn::Shape4{static_cast<int>(a[0]), static_cast<int>(a[1]), 1, 1};
  spec.k = static_cast<int>(n);
  spec.r = spec.s = 1;
  spec.layout = cudnn::Layout::kNCHW;
  spec.type = io;
  spec.allow_tf32 = allow_tf32;
  spec.has_bias = c != ir::kNoValue;
  return spec;
}

bool SymmetricPads(const std::vector<int64_t>& pads) {
  return pads.size() == 4 && pads[0] == pads[2] && pads[1] == pads[3];
}

}  // namespace

absl::StatusOr<DeviceTensor> CudaExecutor::FloatConstant(ir::ValueId id) {
  DeviceTensor& cached = float_constants_[id];
  if (cached.valid()) return cached;
  if (Capturing()) return absl::FailedPreconditionError("a constant cache would be filled inside a CUDA graph");
  const ir::Tensor& c = *plan_.graph.value(id).constant;
  absl::StatusOr<ir::Tensor> f = ir::Tensor::Create(ir::DType::kFloat32, c.shape());
  if (!f.ok()) return f.status();
  for (int64_t i = 0; i < c.num_elements(); ++i) f->data<float>()[i] = static_cast<float>(c.GetAsDouble(i));
  absl::StatusOr<DeviceTensor> d = Upload(*f, false, stream_);
  if (!d.ok()) return d.status();
  cached = *std::move(d);
  return cached;
}

absl::Status CudaExecutor::RunLegacy(size_t index, const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  absl::StatusOr<DeviceTensor> x = Input(node.inputs[0], values);
  if (!x.ok()) return x.status();
  const ir::ValueId out_id = step.outputs.size() == 1 ? step.outputs[0] : ir::kNoValue;
  // One node of a split step and the whole step differ: the node count is part of the key.
  const std::string key = absl::StrCat(ir::ShapeToString(x->dims), "#", step.nodes.size());
  auto [it, inserted] = legacy_[index].try_emplace(key);
  LegacyEntry& e = it->second;
  if (inserted) {
    e.status = [&]() -> absl::Status {
      if (out_id == ir::kNoValue) return absl::UnimplementedError("several outputs");
      const cudnn::IoType io = x->dtype == ir::DType::kFloat16 ? cudnn::IoType::kHalf : cudnn::IoType::kFloat;
      if (!IsFloatType(x->dtype)) return absl::UnimplementedError("not float");
      absl::StatusOr<cudnn::LegacyActivation> act = AbsorbedActivation(g, step);
      if (!act.ok()) return act.status();
      const std::string& op = node.op_type;
      if (op == "Softmax") {
        const int64_t axis = node.attrs.GetInt("axis", node.opset < 13 ? 1 : -1);
        if (x->dims.size() != 2 || (axis != 1 && axis != -1)) return absl::UnimplementedError("softmax form");
        CUDNN_ASSIGN_OR_RETURN(cudnn::Softmax sm, cudnn::Softmax::Create(x->dims[0], x->dims[1], io));
        e.softmax = std::make_unique<cudnn::Softmax>(std::move(sm));
        e.out_dims = x->dims;
        return absl::OkStatus();
      }
      if (op == "Gemm") {
        absl::StatusOr<cudnn::LegacyConvSpec> spec = GemmAsConv(g, node, x->dims, io, plan_.precision == "tf32");
        if (!spec.ok()) return spec.status();
        CUDNN_ASSIGN_OR_RETURN(cudnn::LegacyConv conv, cudnn::LegacyConv::Create(cudnn_, *spec));
        e.out_dims = {x->dims[0], spec->k};
        e.conv = std::make_unique<cudnn::LegacyConv>(std::move(conv));
        return absl::OkStatus();
      }
      if (x->dims.size() != 4) return absl::UnimplementedError("not 4-D");
      e.nhwc = WantsNhwc(out_id);
      const cudnn::Layout layout = e.nhwc ? cudnn::Layout::kNHWC : cudnn::Layout::kNCHW;
      const cudnn::Shape4 shape = ToShape4(x->dims);
      if (op == "BatchNormalization") {
        for (int i = 1; i <= 4; ++i) {
          if (!g.value(node.inputs[i]).constant) return absl::UnimplementedError("BN parameters are not constants");
        }
        CUDNN_ASSIGN_OR_RETURN(
            cudnn::BatchNormInference bn,
            cudnn::BatchNormInference::Create(shape, layout, io, node.attrs.GetFloat("epsilon", 1e-5f), *act));
        e.bn = std::make_unique<cudnn::BatchNormInference>(std::move(bn));
        e.out_dims = x->dims;
        return absl::OkStatus();
      }
      if (op == "Conv") {
        const std::vector<int64_t> pads = node.attrs.GetInts("pads", {0, 0, 0, 0});
        if (!SymmetricPads(pads) || node.attrs.GetString("auto_pad", "NOTSET") != "NOTSET") {
          return absl::UnimplementedError("asymmetric or auto pads");
        }
        absl::StatusOr<DeviceTensor> weights = Input(node.inputs[1], values);
        if (!weights.ok()) return weights.status();
        const std::vector<int64_t> w = weights->dims;
        if (w.size() != 4) return absl::UnimplementedError("weights not 4-D");
        const std::vector<int64_t> strides = node.attrs.GetInts("strides", {1, 1});
        const std::vector<int64_t> dilations = node.attrs.GetInts("dilations", {1, 1});
        cudnn::LegacyConvSpec spec;
        spec.x = shape;
        spec.k = static_cast<int>(w[0]);
        spec.r = static_cast<int>(w[2]);
        spec.s = static_cast<int>(w[3]);
        spec.groups = static_cast<int>(node.attrs.GetInt("group", 1));
        spec.pad_h = static_cast<int>(pads[0]);
        spec.pad_w = static_cast<int>(pads[1]);
        spec.stride_h = static_cast<int>(strides[0]);
        spec.stride_w = static_cast<int>(strides[1]);
        spec.dilation_h = static_cast<int>(dilations[0]);
        spec.dilation_w = static_cast<int>(dilations[1]);
        spec.layout = layout;
        spec.type = io;
        spec.allow_tf32 = false;  // depthwise/grouped convs are memory-bound:
                                  // TF32 only costs accuracy
        spec.has_bias = node.input(2) != ir::kNoValue;
        spec.activation = *act;
        const bool silu = HasSiluTail(g, step);
        if (std::optional<kernels::cuda::DepthwiseConvParams> dw = OwnDepthwise(spec, w, *act)) {
          if (silu) dw->activation = kernels::cuda::DepthwiseConvParams::kSilu;
          e.depthwise = dw;
          e.out_dims = {spec.x.n, spec.k, dw->out_h, dw->out_w};
          return absl::OkStatus();
        }
        if (silu) return absl::UnimplementedError("a SiLU tail runs only on the own depthwise kernel");
        CUDNN_ASSIGN_OR_RETURN(cudnn::LegacyConv conv, cudnn::LegacyConv::Create(cudnn_, spec));
        const cudnn::Shape4 y = conv.output_shape();
        e.out_dims = {y.n, y.c, y.h, y.w};
        e.conv = std::make_unique<cudnn::LegacyConv>(std::move(conv));
        return absl::OkStatus();
      }
      cudnn::PoolSpec pool;
      pool.x = shape;
      pool.layout = layout;
      pool.type = io;
      if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
        pool.mode = op == "GlobalMaxPool" ? cudnn::PoolMode::kMax : cudnn::PoolMode::kAverageIncludePad;
        pool.window_h = shape.h;
        pool.window_w = shape.w;
      } else {
        const std::vector<int64_t> k = node.attrs.GetInts("kernel_shape");
        const std::vector<int64_t> pads = node.attrs.GetInts("pads", {0, 0, 0, 0});
        const std::vector<int64_t> strides = node.attrs.GetInts("strides", {1, 1});
        if (k.size() != 2 || !SymmetricPads(pads) || node.attrs.GetInt("ceil_mode", 0) != 0 ||
            node.attrs.GetString("auto_pad", "NOTSET") != "NOTSET" ||
            node.attrs.GetInts("dilations", {1, 1}) != std::vector<int64_t>{1, 1} ||
            (node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue)) {
          return absl::UnimplementedError("pooling form (ceil_mode, dilations, asymmetric pads, indices)");
        }
        pool.mode = op == "MaxPool"                             ? cudnn::PoolMode::kMax
                    : node.attrs.GetInt("count_include_pad", 0) ? cudnn::PoolMode::kAverageIncludePad
                                                                : cudnn::PoolMode::kAverageExcludePad;
        pool.window_h = static_cast<int>(k[0]);
        pool.window_w = static_cast<int>(k[1]);
        pool.pad_h = static_cast<int>(pads[0]);
        pool.pad_w = static_cast<int>(pads[1]);
        pool.stride_h = static_cast<int>(strides[0]);
        pool.stride_w = static_cast<int>(strides[1]);
      }
      CUDNN_ASSIGN_OR_RETURN(cudnn::Pooling p, cudnn::Pooling::Create(pool));
      const cudnn::Shape4 y = p.output_shape();
      e.out_dims = {y.n, y.c, y.h, y.w};
      e.pool = std::make_unique<cudnn::Pooling>(std::move(p));
      return absl::OkStatus();
    }();
    notes_[index] = e.status.ok() && e.depthwise ? "own NHWC depthwise-conv kernel (kernels/cuda/depthwise_conv)"
                    : e.status.ok()
                        ? absl::StrCat("legacy cuDNN: ", e.conv ? e.conv->description() : node.op_type)
                        : absl::StrCat("host reference kernels (legacy cuDNN not used: ", e.status.message(), ")");
  }
  if (!e.status.ok()) return step.nodes.size() > 1 ? RunSplit(index, e.status, values) : RunOnHost(step, values);
  absl::StatusOr<DeviceTensor> in = ToLayout(*x, e.nhwc, stream_);
  if (!in.ok()) return in.status();
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(x->dtype, e.out_dims, e.nhwc, stream_);
  if (!out.ok()) return out.status();
  if (e.softmax) {
    CUDNN_RETURN_IF_NOT_OK(e.softmax->Run(cudnn_, in->data(), out->data()));
  } else if (e.pool) {
    CUDNN_RETURN_IF_NOT_OK(e.pool->Run(cudnn_, in->data(), out->data()));
  } else if (e.bn) {
    std::vector<DeviceTensor> params;
    for (int i = 1; i <= 4; ++i) {
      absl::StatusOr<DeviceTensor> p = FloatConstant(node.inputs[i]);
      if (!p.ok()) return p.status();
      params.push_back(*std::move(p));
    }
    CUDNN_RETURN_IF_NOT_OK(e.bn->Run(cudnn_, in->data(), out->data(), params[0].data(), params[1].data(),
                                     params[2].data(), params[3].data()));
  } else if (e.depthwise) {
    absl::StatusOr<DeviceTensor> w = Input(node.inputs[1], values);  // [C,1,R,S] as given
    if (!w.ok()) return w.status();
    DeviceTensor bias;
    if (node.input(2) != ir::kNoValue) {
      absl::StatusOr<DeviceTensor> b = Input(node.input(2), values);
      if (!b.ok()) return b.status();
      bias = *std::move(b);
    }
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        kernels::cuda::DepthwiseConvNhwc(*e.depthwise, in->data(), w->data(), bias.data(), out->data(), stream_));
  } else {
    absl::StatusOr<DeviceTensor> w = Bound({node.inputs[1], e.nhwc, {}}, values);
    if (!w.ok()) return w.status();
    DeviceTensor bias, workspace;
    if (node.input(2) != ir::kNoValue) {
      absl::StatusOr<DeviceTensor> b = Input(node.input(2), values);
      if (!b.ok()) return b.status();
      bias = *std::move(b);
    }
    if (e.conv->workspace_bytes() > 0) {
      absl::StatusOr<DeviceTensor> ws =
          DeviceTensor::Allocate(ir::DType::kUint8, {static_cast<int64_t>(e.conv->workspace_bytes())}, false, stream_);
      if (!ws.ok()) return ws.status();
      workspace = *std::move(ws);
    }
    CUDNN_RETURN_IF_NOT_OK(e.conv->Run(cudnn_, in->data(), w->data(), bias.data(), out->data(), workspace.data()));
  }
  values[out_id] = *std::move(out);
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunConcat(const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Node& node = plan_.graph.node(step.nodes[0]);
  std::vector<DeviceTensor> inputs;
  for (ir::ValueId in : node.inputs) {
    absl::StatusOr<DeviceTensor> t = Input(in, values);
    if (!t.ok()) return t.status();
    inputs.push_back(*std::move(t));
  }
  const int64_t rank = static_cast<int64_t>(inputs[0].dims.size());
  int64_t axis = node.attrs.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  std::vector<int64_t> dims = inputs[0].dims;
  dims[axis] = 0;
  for (const DeviceTensor& t : inputs) dims[axis] += t.dims[axis];
  const bool nhwc = WantsNhwc(node.outputs[0]);
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(inputs[0].dtype, dims, nhwc, stream_);
  if (!out.ok()) return out.status();
  const std::vector<int64_t> out_strides = out->strides();
  const size_t element = ir::DTypeSize(out->dtype);
  int64_t offset = 0;
  for (const DeviceTensor& t : inputs) {
    absl::StatusOr<DeviceTensor> src = ToLayout(t, nhwc, stream_);
    if (!src.ok()) return src.status();
    char* dst = static_cast<char*>(out->data()) + offset * out_strides[axis] * element;
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        kernels::cuda::StridedCopy(src->data(), dst, CopyOf(*src, out_strides), static_cast<int>(element), stream_));
    offset += t.dims[axis];
  }
  values[node.outputs[0]] = *std::move(out);
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunPad(const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  absl::StatusOr<DeviceTensor> x = Input(node.inputs[0], values);
  if (!x.ok()) return x.status();
  const std::vector<int64_t> pads = g.value(node.input(1)).constant->ToInt64Vector();
  const size_t rank = x->dims.size();
  if (pads.size() != 2 * rank) return RunOnHost(step, values);
  std::vector<int64_t> dims = x->dims;
  for (size_t d = 0; d < rank; ++d) dims[d] += pads[d] + pads[d + rank];
  const bool nhwc = WantsNhwc(node.outputs[0]);
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(x->dtype, dims, nhwc, stream_);
  if (!out.ok()) return out.status();
  const size_t element = ir::DTypeSize(x->dtype);
  uint64_t bits = 0;
  if (node.input(2) != ir::kNoValue) std::memcpy(&bits, g.value(node.input(2)).constant->raw_data(), element);
  ONNXRUN_CUDA_RETURN_IF_ERROR(
      kernels::cuda::Fill(out->data(), out->num_elements(), static_cast<int>(element), bits, stream_));
  absl::StatusOr<DeviceTensor> src = ToLayout(*x, nhwc, stream_);
  if (!src.ok()) return src.status();
  const std::vector<int64_t> out_strides = out->strides();
  int64_t offset = 0;
  for (size_t d = 0; d < rank; ++d) offset += pads[d] * out_strides[d];
  char* dst = static_cast<char*>(out->data()) + offset * element;
  ONNXRUN_CUDA_RETURN_IF_ERROR(
      kernels::cuda::StridedCopy(src->data(), dst, CopyOf(*src, out_strides), static_cast<int>(element), stream_));
  values[node.outputs[0]] = *std::move(out);
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunStep(size_t index, std::vector<DeviceTensor>& values) {
  const Step& step = plan_.steps[index];
  const ir::Graph& g = plan_.graph;
  if (step.kind == StepKind::kFusedGraph) return RunFused(index, values);
  if (step.kind == StepKind::kLegacy) return RunLegacy(index, step, values);
  if (step.kind == StepKind::kAlias) return RunAlias(step, values);
  if (step.kind == StepKind::kKernel && step.nodes.size() == 1) {
    const ir::Node& node = g.node(step.nodes[0]);
    if (RunsOnDevicePointwise(g, node)) return RunPointwise(step, values);
    if (RunsOnDeviceCopy(g, node)) return node.op_type == "Concat" ? RunConcat(step, values) : RunPad(step, values);
    if (CudaKernelSupports(g, node)) return RunKernel(step, values);
  }
  return RunOnHost(step, values);
}

absl::Status CudaExecutor::RunKernel(const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  std::vector<DeviceTensor> inputs;
  for (ir::ValueId in : node.inputs) {
    if (in == ir::kNoValue) {
      inputs.emplace_back();
      continue;
    }
    absl::StatusOr<DeviceTensor> t = Input(in, values);
    if (!t.ok()) return t.status();
    inputs.push_back(*std::move(t));
  }
  absl::StatusOr<std::vector<DeviceTensor>> outputs = RunCudaKernel(g, node, inputs, stream_);
  if (outputs.status().code() == absl::StatusCode::kUnimplemented) return RunOnHost(step, values);
  if (!outputs.ok()) return outputs.status();
  for (size_t i = 0; i < node.outputs.size() && i < outputs->size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) continue;
    absl::StatusOr<DeviceTensor> stored = ToLayout((*outputs)[i], WantsNhwc(node.outputs[i]), stream_);
    if (!stored.ok()) return stored.status();
    values[node.outputs[i]] = *std::move(stored);
  }
  return absl::OkStatus();
}

}  // namespace exec
