// CUDA execution of a Plan (see cuda_executor.h for what runs where).
#include "runtime/cuda_executor.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/elementwise.h"
#include "ops/op_def.h"
#include "runtime/cpu_executor.h"

namespace exec {
namespace {

using kernels::cuda::BinaryOp;
using kernels::cuda::UnaryOp;

const std::map<std::string, UnaryOp>& UnaryOps() {
  static const auto* ops = new std::map<std::string, UnaryOp>{
      {"Relu", UnaryOp::kRelu},       {"Sigmoid", UnaryOp::kSigmoid},     {"Tanh", UnaryOp::kTanh},
      {"LeakyRelu", UnaryOp::kLeakyRelu}, {"Elu", UnaryOp::kElu},         {"Selu", UnaryOp::kSelu},
      {"HardSigmoid", UnaryOp::kHardSigmoid}, {"HardSwish", UnaryOp::kHardSwish},
      {"Softplus", UnaryOp::kSoftplus}, {"Erf", UnaryOp::kErf},           {"Sqrt", UnaryOp::kSqrt},
      {"Exp", UnaryOp::kExp},         {"Log", UnaryOp::kLog},             {"Neg", UnaryOp::kNeg},
      {"Abs", UnaryOp::kAbs},         {"Reciprocal", UnaryOp::kReciprocal}};
  return *ops;
}

const std::map<std::string, BinaryOp>& BinaryOps() {
  static const auto* ops = new std::map<std::string, BinaryOp>{
      {"Add", BinaryOp::kAdd}, {"Sub", BinaryOp::kSub}, {"Mul", BinaryOp::kMul},
      {"Div", BinaryOp::kDiv}, {"Pow", BinaryOp::kPow}, {"Min", BinaryOp::kMin},
      {"Max", BinaryOp::kMax}, {"PRelu", BinaryOp::kPRelu}};
  return *ops;
}

bool IsFloatType(ir::DType d) { return d == ir::DType::kFloat32 || d == ir::DType::kFloat16; }

// The unary op's alpha/beta from the node's attributes (and Clip's constant bounds).
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

// Pointwise ops this executor runs with its own kernels: unary/binary float ops of the maps above
// and Clip with constant bounds; Gelu by its approximation attribute.
bool RunsOnDevicePointwise(const ir::Graph& graph, const ir::Node& node) {
  if (node.outputs.size() != 1 || node.inputs.empty() || node.inputs[0] == ir::kNoValue) return false;
  if (!IsFloatType(graph.value(node.inputs[0]).type.dtype)) return false;
  if (UnaryOps().count(node.op_type) || node.op_type == "Gelu") return node.inputs.size() == 1;
  if (node.op_type == "Clip") {
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != ir::kNoValue && !graph.value(node.inputs[i]).constant) return false;
    }
    return true;
  }
  if (BinaryOps().count(node.op_type)) {
    return node.inputs.size() == 2 && node.inputs[1] != ir::kNoValue &&
           graph.value(node.inputs[1]).type.dtype == graph.value(node.inputs[0]).type.dtype;
  }
  return false;
}

// Strides of `dims` broadcast to `out` (numpy alignment), 0 on broadcast dims.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& dims, const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    const size_t o = out.size() - dims.size() + i;
    strides[o] = dims[i] == 1 ? 0 : stride;
    stride *= dims[i];
  }
  return strides;
}

}  // namespace

std::string CudaUnavailableReason() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) return absl::StrCat("no usable CUDA device (", cudaGetErrorString(error), ")");
  if (count == 0) return "no CUDA device";
  return "";
}

absl::StatusOr<std::unique_ptr<CudaExecutor>> CudaExecutor::Create(const Plan& plan) {
  const std::string unavailable = CudaUnavailableReason();
  if (!unavailable.empty()) return absl::UnavailableError(unavailable);
  std::unique_ptr<CudaExecutor> executor(new CudaExecutor(plan));
  absl::Status status = executor->Init();
  if (!status.ok()) return status;
  return executor;
}

CudaExecutor::~CudaExecutor() {
  constants_.clear();
  if (stream_ != nullptr) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

int64_t CudaExecutor::peak_device_bytes() const {
  cudaMemPool_t pool;
  uint64_t high = 0;
  if (cudaDeviceGetDefaultMemPool(&pool, 0) != cudaSuccess ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &high) != cudaSuccess) {
    return -1;
  }
  return static_cast<int64_t>(high);
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
  const ir::Graph& g = plan_.graph;
  constants_.resize(g.values().size());
  for (const Step& step : plan_.steps) {
    for (ir::ValueId in : step.inputs) {
      if (!g.value(in).constant || constants_[in].valid()) continue;
      absl::StatusOr<DeviceTensor> t = Upload(*g.value(in).constant, false, stream_);
      if (!t.ok()) return t.status();
      constants_[in] = *std::move(t);
    }
  }
  for (const Step& step : plan_.steps) {
    const ir::Node& first = g.node(step.nodes[0]);
    std::string note;
    if (step.kind == StepKind::kAlias) {
      note = "alias: same device bytes";
    } else if (step.kind == StepKind::kKernel && step.nodes.size() == 1 && RunsOnDevicePointwise(g, first)) {
      note = "own CUDA kernel";
    } else {
      note = "host reference kernel (no GPU path yet): inputs copied to the host and outputs back";
    }
    notes_.push_back(note);
  }
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
  // The output's dims come from the op's inference on the concrete input (shape inputs are
  // constants after folding; otherwise the step runs on the host).
  std::vector<ir::TensorType> types(node.inputs.size());
  ops::InferContext ctx{node, {}, {}};
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::ValueId id = node.inputs[i];
    if (id == ir::kNoValue) {
      ctx.input_types.push_back(nullptr);
      ctx.input_values.push_back(nullptr);
      continue;
    }
    types[i] = i == 0 ? ir::TensorType{in->dtype, ir::ShapeFromInts(in->dims)} : g.value(id).type;
    ctx.input_types.push_back(&types[i]);
    ctx.input_values.push_back(g.value(id).constant ? &*g.value(id).constant : nullptr);
  }
  absl::StatusOr<std::vector<ir::TensorType>> out_types = ops::FindOpDef(node.op_type)->infer(ctx);
  std::optional<std::vector<int64_t>> dims;
  if (out_types.ok() && (*out_types)[0].shape) dims = ir::ShapeToInts(*(*out_types)[0].shape);
  if (!dims) return RunOnHost(step, values);
  const bool same_dims = *dims == in->dims;
  absl::StatusOr<DeviceTensor> src = ToLayout(*in, same_dims && in->nhwc, stream_);
  if (!src.ok()) return src.status();
  DeviceTensor out = *src;
  out.dims = *dims;
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
  const auto type = a->dtype == ir::DType::kFloat16 ? kernels::cuda::FloatType::kFloat16
                                                    : kernels::cuda::FloatType::kFloat32;
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
  // Logical broadcast: both operands read in logical order through strides; output logical.
  absl::StatusOr<DeviceTensor> la = ToLayout(*a, false, stream_), lb = ToLayout(*b, false, stream_);
  if (!la.ok()) return la.status();
  if (!lb.ok()) return lb.status();
  const std::optional<ir::Shape>& out_shape = g.value(out_id).type.shape;
  std::vector<int64_t> out_dims = la->dims.size() >= lb->dims.size() ? la->dims : lb->dims;
  for (size_t i = 0; i < out_dims.size(); ++i) {
    const size_t oa = out_dims.size() - la->dims.size(), ob = out_dims.size() - lb->dims.size();
    const int64_t da = i >= oa ? la->dims[i - oa] : 1, db = i >= ob ? lb->dims[i - ob] : 1;
    out_dims[i] = std::max(da, db);
  }
  (void)out_shape;
  if (out_dims.size() > kernels::cuda::kMaxRank) return RunOnHost(step, values);
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(a->dtype, out_dims, false, stream_);
  if (!out.ok()) return out.status();
  kernels::cuda::CopyShape shape;
  shape.rank = static_cast<int>(out_dims.size());
  const std::vector<int64_t> sa = BroadcastStrides(la->dims, out_dims), sb = BroadcastStrides(lb->dims, out_dims);
  for (int d = 0; d < shape.rank; ++d) {
    shape.dims[d] = out_dims[d];
    shape.src_strides[d] = sa[d];
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Binary(BinaryOps().at(node.op_type), type, la->data(), lb->data(),
                                                     out->data(), shape, sb.data(), stream_));
  absl::StatusOr<DeviceTensor> stored = ToLayout(*out, nhwc, stream_);
  if (!stored.ok()) return stored.status();
  values[out_id] = *std::move(stored);
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunStep(size_t index, std::vector<DeviceTensor>& values) {
  const Step& step = plan_.steps[index];
  const ir::Graph& g = plan_.graph;
  if (step.kind == StepKind::kAlias) return RunAlias(step, values);
  if (step.kind == StepKind::kKernel && step.nodes.size() == 1 && RunsOnDevicePointwise(g, g.node(step.nodes[0]))) {
    return RunPointwise(step, values);
  }
  return RunOnHost(step, values);
}

absl::StatusOr<std::vector<ir::Tensor>> CudaExecutor::Run(std::vector<ir::Tensor> inputs,
                                                          const ValueObserver& observer) {
  std::lock_guard<std::mutex> lock(mu_);
  const ir::Graph& g = plan_.graph;
  if (inputs.size() != g.inputs().size()) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", g.inputs().size(), " inputs, got ", inputs.size()));
  }
  std::vector<DeviceTensor> values(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::StatusOr<DeviceTensor> d = Upload(inputs[i], false, stream_);
    if (!d.ok()) return d.status();
    values[g.inputs()[i]] = *std::move(d);
  }
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const Step& step = plan_.steps[s];
    absl::Status status = RunStep(s, values);
    if (!status.ok()) {
      const ir::Node& node = g.node(step.nodes[0]);
      return absl::Status(status.code(), absl::StrCat("step #", s, " (", StepKindName(step.kind), " ", step.pattern,
                                                      ", node '", node.name, "'): ", status.message()));
    }
    if (observer) {
      for (ir::ValueId out : step.outputs) {
        absl::StatusOr<ir::Tensor> t = Download(values[out], stream_);
        if (!t.ok()) return t.status();
        observer(s, out, *t);
      }
    }
    for (ir::ValueId dead : step.release_after) values[dead] = DeviceTensor();
  }
  std::vector<ir::Tensor> outputs;
  for (ir::ValueId id : g.outputs()) {
    if (g.value(id).constant) {
      outputs.push_back(*g.value(id).constant);
      continue;
    }
    absl::StatusOr<ir::Tensor> t = Download(values[id], stream_);
    if (!t.ok()) return t.status();
    outputs.push_back(*std::move(t));
  }
  return outputs;
}

}  // namespace exec
