// Kernel steps on onnxrun's own CUDA kernels: pointwise ops (kernels/cuda/elementwise.h), Concat and
// constant Pad as strided copies, and every op of runtime/cuda_kernel_steps (Transpose, Slice,
// reductions, softmax, norms, Resize, ...); forms they do not cover run on the host.
#include <map>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cast_pad.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/squeeze_excite.h"
#include "kernels/cudnn/status.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_kernel_steps.h"
#include "runtime/cuda_step_rules.h"
#include "runtime/device_runner.h"

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
                                                              {"Reciprocal", UnaryOp::kReciprocal},
                                                              {"Sin", UnaryOp::kSin},
                                                              {"Cos", UnaryOp::kCos},
                                                              {"Tan", UnaryOp::kTan},
                                                              {"Asin", UnaryOp::kAsin},
                                                              {"Acos", UnaryOp::kAcos},
                                                              {"Atan", UnaryOp::kAtan},
                                                              {"Sinh", UnaryOp::kSinh},
                                                              {"Cosh", UnaryOp::kCosh},
                                                              {"Asinh", UnaryOp::kAsinh},
                                                              {"Acosh", UnaryOp::kAcosh},
                                                              {"Atanh", UnaryOp::kAtanh},
                                                              {"Floor", UnaryOp::kFloor},
                                                              {"Ceil", UnaryOp::kCeil},
                                                              {"Round", UnaryOp::kRound},
                                                              {"Sign", UnaryOp::kSign},
                                                              {"Softsign", UnaryOp::kSoftsign},
                                                              {"Mish", UnaryOp::kMish},
                                                              {"Celu", UnaryOp::kCelu},
                                                              {"ThresholdedRelu", UnaryOp::kThresholdedRelu},
                                                              {"Shrink", UnaryOp::kShrink},
                                                              {"Swish", UnaryOp::kSwish}};
  return *ops;
}

const std::map<std::string, BinaryOp>& BinaryOps() {
  static const auto* ops = new std::map<std::string, BinaryOp>{
      {"Add", BinaryOp::kAdd}, {"Sub", BinaryOp::kSub}, {"Mul", BinaryOp::kMul}, {"Div", BinaryOp::kDiv},
      {"Pow", BinaryOp::kPow}, {"Min", BinaryOp::kMin}, {"Max", BinaryOp::kMax}, {"PRelu", BinaryOp::kPRelu}};
  return *ops;
}

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
  if (node.op_type == "Celu" || node.op_type == "ThresholdedRelu" || node.op_type == "Swish")
    alpha = node.attrs.GetFloat("alpha", 1.0f);
  if (node.op_type == "Shrink") {
    alpha = node.attrs.GetFloat("lambd", 0.5f);
    beta = node.attrs.GetFloat("bias", 0.0f);
  }
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

bool HasOwnCudaKernel(std::string_view op_type) {
  const std::string op(op_type);
  return UnaryOps().count(op) > 0 || BinaryOps().count(op) > 0 || op == "Gelu" || op == "Clip" || op == "Cast" ||
         op == "Attention" || op == "Concat" || op == "Pad" || HasDeviceRunner(op_type);
}

// Pointwise ops this executor runs with its own kernels: unary/binary float ops
// of the maps above and Clip with constant bounds; Gelu by its approximation
// attribute.
bool RunsOnDevicePointwise(const ir::Graph& graph, const ir::Node& node) {
  if (node.outputs.size() != 1 || node.inputs.empty() || node.inputs[0] == ir::kNoValue) return false;
  if (node.op_type == "Cast") {
    const ir::DType from = graph.value(node.inputs[0]).type.dtype;
    return (IsFloat(from) || IntegerSource(from).has_value()) && IsFloat(graph.value(node.outputs[0]).type.dtype);
  }
  if (!IsFloat(graph.value(node.inputs[0]).type.dtype)) return false;
  if (node.op_type == "Celu" && node.attrs.GetFloat("alpha", 1.0f) == 0) return false;  // the host's error
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

bool IsChannelZeroPad(const ir::Graph& graph, const ir::Node& pad) {
  const std::vector<int64_t> pads = graph.value(pad.input(1)).constant->ToInt64Vector();
  bool channel_zero_pad =
      pads.size() == 8 && (pad.input(2) == ir::kNoValue || graph.value(pad.input(2)).constant->GetAsDouble(0) == 0);
  for (size_t i = 0; i < pads.size() && channel_zero_pad; ++i) channel_zero_pad = i == 5 || pads[i] == 0;
  return channel_zero_pad;
}

bool IsCastPadStep(const ir::Graph& graph, const Step& step) {
  if (step.kind != StepKind::kKernel || step.nodes.size() != 2) return false;
  const ir::Node &cast = graph.node(step.nodes[0]), &pad = graph.node(step.nodes[1]);
  return cast.op_type == "Cast" && pad.op_type == "Pad" && RunsOnDevicePointwise(graph, cast) &&
         RunsOnDeviceCopy(graph, pad) && pad.inputs[0] == cast.outputs[0];
}

absl::Status CudaExecutor::RunCastPad(const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node &cast = g.node(step.nodes[0]), &pad = g.node(step.nodes[1]);
  absl::StatusOr<DeviceTensor> x = Input(cast.inputs[0], values);
  if (!x.ok()) return x.status();
  const ir::ValueId out_id = pad.outputs[0];
  const bool one_pass =
      IsChannelZeroPad(g, pad) && !x->nhwc && x->dims.size() == 4 && WantsNhwc(out_id) && IsFloat(x->dtype);
  if (!one_pass) {  // each node as its own step (an integer source's Cast too)
    for (ir::NodeId id : step.nodes) {
      Step single{StepKind::kKernel, {id}, {}, g.node(id).outputs};
      absl::Status s = id == step.nodes[0] ? RunPointwise(single, values) : RunPad(single, values);
      if (!s.ok()) return s;
    }
    values[cast.outputs[0]] = DeviceTensor();
    return absl::OkStatus();
  }
  return CastPadToNhwc(*x, g.value(out_id).type.dtype, pad, values);
}

absl::Status CudaExecutor::CastPadToNhwc(const DeviceTensor& x, ir::DType to, const ir::Node& pad,
                                         std::vector<DeviceTensor>& values) {
  std::vector<int64_t> dims = x.dims;
  dims[1] += plan_.graph.value(pad.input(1)).constant->ToInt64Vector()[5];
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(to, dims, /*nhwc=*/true, stream_);
  if (!out.ok()) return out.status();
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::CastPadToNhwc(ToFloatType(x.dtype), ToFloatType(to), x.data(),
                                                            out->data(), x.dims[0], x.dims[1], x.dims[2] * x.dims[3],
                                                            dims[1], stream_));
  values[pad.outputs[0]] = *std::move(out);
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunAddLayerNorm(const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node &add = g.node(step.nodes[0]), &norm = g.node(step.nodes[1]);
  CUDNN_ASSIGN_OR_RETURN(std::vector<DeviceTensor> inputs, NodeInputs(norm, values, /*first=*/1));
  CUDNN_ASSIGN_OR_RETURN(inputs[0], Input(add.inputs[0], values));  // the sum's first operand for the sum
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor residual, Input(add.inputs[1], values));
  // Unimplemented (the norm's device runner) when the operands' dims or dtypes differ.
  absl::StatusOr<std::vector<DeviceTensor>> outputs = RunCudaKernel(g, norm, inputs, stream_, &residual);
  if (outputs.status().code() == absl::StatusCode::kUnimplemented) {  // each node as its own step
    for (ir::NodeId id : step.nodes) {
      Step single{StepKind::kKernel, {id}, {}, g.node(id).outputs};
      CUDNN_RETURN_IF_NOT_OK(id == step.nodes[0] ? RunPointwise(single, values) : RunKernel(single, values));
    }
    values[add.outputs[0]] = DeviceTensor();
    return absl::OkStatus();
  }
  if (!outputs.ok()) return outputs.status();
  return StoreNodeOutputs(norm, *outputs, values);
}

absl::Status CudaExecutor::RunSqueezeExcite(size_t index, std::vector<DeviceTensor>& values) {
  const partitioner::SqueezeExciteForm& form = *squeeze_excite_[index];
  kernels::cuda::SqueezeExciteParams p;
  DeviceTensor x, sums;  // sums: the channel sums p points into, held by a deferred gate
  if (auto held = pooled_sums_.find(form.input); held != pooled_sums_.end()) {
    sums = held->second.sums;
    // The pool step left its output unwritten (HandSumsToSqueezeExcite): its mean from the sums.
    x.dtype = held->second.dtype;
    x.dims = {held->second.sums.num_elements() / form.channels, form.channels, 1, 1};
    p.channel_sums = static_cast<const float*>(held->second.sums.data());
    p.sums_scale = 1.f / static_cast<float>(held->second.map_pixels);
    if (notes_[index].find("channel sums") == std::string::npos) {
      absl::StrAppend(&notes_[index], ", its mean taken from the channel sums step #", held->second.writer_step,
                      "'s depthwise kernel wrote");
    }
  } else {
    CUDNN_ASSIGN_OR_RETURN(x, Input(form.input, values));
  }
  p.batch = x.dims.empty() ? 0 : x.dims[0];
  p.channels = form.channels;
  p.reduced = form.reduced;
  p.w2_row = form.w2_row;
  p.type = ToFloatType(x.dtype);
  p.activation = form.activation == partitioner::SqueezeExciteForm::kRelu ? kernels::cuda::SqueezeExciteParams::kRelu
                                                                          : kernels::cuda::SqueezeExciteParams::kSilu;
  p.gate = form.gate == partitioner::SqueezeExciteForm::kSigmoid ? kernels::cuda::SqueezeExciteParams::kSigmoid
                                                                 : kernels::cuda::SqueezeExciteParams::kHardSigmoid;
  p.alpha = form.alpha;
  p.beta = form.beta;
  bool same_types = x.num_elements() == p.batch * p.channels;
  const std::pair<ir::ValueId, const void**> weights[] = {
      {form.w1, &p.w1}, {form.b1, &p.b1}, {form.w2, &p.w2}, {form.b2, &p.b2}};
  for (const auto& [id, pointer] : weights) {
    if (id == ir::kNoValue) continue;
    CUDNN_ASSIGN_OR_RETURN(DeviceTensor w, Input(id, values));
    same_types = same_types && w.dtype == x.dtype;
    *pointer = w.data();
  }
  if (!same_types && p.channel_sums != nullptr) return absl::InternalError("squeeze-excite weights of another type");
  if (!same_types) return RunOnHost(plan_.steps[index], values);
  const bool from_sums = p.channel_sums != nullptr;
  JoinedGates::Deferred gate{p, from_sums ? sums : x, from_sums ? nullptr : x.data(), DeviceTensor(), index};
  gate.gate.dtype = x.dtype, gate.gate.dims = x.dims, gate.gate.nhwc = WantsNhwc(form.output);  // no data
  pooled_sums_.erase(form.input);                       // `gate` holds the sums p points into
  if (DeferGate(index, gate)) return absl::OkStatus();  // the Mul reading it computes it (cuda_steps_joined_gate.cc)
  CUDNN_ASSIGN_OR_RETURN(values[form.output], WriteGate(gate));
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunPointwise(const Step& step, std::vector<DeviceTensor>& values, bool input_dies) {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  const ir::ValueId out_id = node.outputs[0];
  const bool nhwc = WantsNhwc(out_id);
  if (node.inputs.size() != 1 && node.op_type != "Clip" && node.op_type != "Cast") return RunBinary(step, values);
  absl::StatusOr<DeviceTensor> a = Input(node.inputs[0], values);
  if (!a.ok()) return a.status();
  const kernels::cuda::FloatType type = ToFloatType(a->dtype);
  if (node.op_type == "Cast") {
    const ir::DType to = plan_.graph.value(out_id).type.dtype;
    absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(to, a->dims, a->nhwc, stream_);
    if (!out.ok()) return out.status();
    if (const std::optional<kernels::cuda::IntegerType> from = IntegerSource(a->dtype)) {
      ONNXRUN_CUDA_RETURN_IF_ERROR(
          kernels::cuda::IntegerToFloat(*from, ToFloatType(to), a->data(), out->data(), a->num_elements(), stream_));
    } else {
      ONNXRUN_CUDA_RETURN_IF_ERROR(
          kernels::cuda::ConvertFloat(type, ToFloatType(to), a->data(), out->data(), a->num_elements(), stream_));
    }
    absl::StatusOr<DeviceTensor> stored = ToLayout(*out, nhwc, stream_);
    if (!stored.ok()) return stored.status();
    values[out_id] = *std::move(stored);
    return absl::OkStatus();
  }
  if (node.inputs.size() == 1 || node.op_type == "Clip") {
    absl::StatusOr<DeviceTensor> src = ToLayout(*a, nhwc, stream_);
    if (!src.ok()) return src.status();
    const bool in_place = input_dies && src->buffer == a->buffer;  // no layout copy was made
    absl::StatusOr<DeviceTensor> out =
        in_place ? absl::StatusOr<DeviceTensor>(*src) : DeviceTensor::Allocate(a->dtype, a->dims, src->nhwc, stream_);
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
  return absl::InternalError("unreachable: binary ops run in RunBinary");
}

absl::Status CudaExecutor::RunBinary(const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Node& node = plan_.graph.node(step.nodes[0]);
  const ir::ValueId out_id = node.outputs[0];
  const bool nhwc = WantsNhwc(out_id);
  // Both operands are read in place, whatever their layout (NHWC, or a view of a transposed
  // tensor: cuda_views.cc), through strides in the output's index space; the output is written
  // in the layout the plan wants (no conversions).
  CUDNN_ASSIGN_OR_RETURN(HeadsInput a, PointwiseOperand(node.inputs[0], values));
  CUDNN_ASSIGN_OR_RETURN(HeadsInput b, PointwiseOperand(node.inputs[1], values));
  const kernels::cuda::FloatType type = ToFloatType(a.tensor.dtype);
  std::vector<int64_t> out_dims = a.tensor.dims.size() >= b.tensor.dims.size() ? a.tensor.dims : b.tensor.dims;
  for (size_t i = 0; i < out_dims.size(); ++i) {
    const size_t oa = out_dims.size() - a.tensor.dims.size(), ob = out_dims.size() - b.tensor.dims.size();
    const int64_t da = i >= oa ? a.tensor.dims[i - oa] : 1, db = i >= ob ? b.tensor.dims[i - ob] : 1;
    out_dims[i] = da == 1 ? db : da;  // a 1 stretches to the other (to 0 as well); inference checked the rest
  }
  if (out_dims.size() > kernels::cuda::kMaxRank) {
    CUDNN_RETURN_IF_NOT_OK(MaterialiseViews(step, values));
    return RunOnHost(step, values);
  }
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(a.tensor.dtype, out_dims, nhwc, stream_);
  if (!out.ok()) return out.status();
  // The output's dims in storage order (NHWC: N,H,W,C), and each operand's
  // strides in that order.
  std::vector<int> order(out_dims.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<int>(d);
  if (out->nhwc) order = {0, 2, 3, 1};
  const std::vector<int64_t> sa = OperandStrides(a, out_dims), sb = OperandStrides(b, out_dims);
  kernels::cuda::CopyShape shape;
  shape.rank = static_cast<int>(out_dims.size());
  int64_t b_strides[kernels::cuda::kMaxRank] = {};
  for (int d = 0; d < shape.rank; ++d) {
    shape.dims[d] = out_dims[order[d]];
    shape.src_strides[d] = sa[order[d]];
    b_strides[d] = sb[order[d]];
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Binary(BinaryOps().at(node.op_type), type, a.tensor.data(),
                                                     b.tensor.data(), out->data(), shape, b_strides, stream_));
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
  const bool nhwc = WantsNhwc(node.outputs[0]);
  // A float NCHW map whose channels are padded for an NHWC conv: one pass (no fill, transpose, copy).
  if (nhwc && !x->nhwc && rank == 4 && IsFloat(x->dtype) && IsChannelZeroPad(g, node)) {
    return CastPadToNhwc(*x, x->dtype, node, values);
  }
  std::vector<int64_t> dims = x->dims;
  for (size_t d = 0; d < rank; ++d) dims[d] += pads[d] + pads[d + rank];
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

absl::StatusOr<std::vector<DeviceTensor>> CudaExecutor::NodeInputs(const ir::Node& node,
                                                                   const std::vector<DeviceTensor>& values,
                                                                   size_t first) const {
  std::vector<DeviceTensor> inputs(node.inputs.size());
  for (size_t i = first; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == ir::kNoValue) continue;
    CUDNN_ASSIGN_OR_RETURN(inputs[i], Input(node.inputs[i], values));
  }
  return inputs;
}

absl::Status CudaExecutor::StoreNodeOutputs(const ir::Node& node, std::vector<DeviceTensor>& outputs,
                                            std::vector<DeviceTensor>& values) {
  for (size_t i = 0; i < node.outputs.size() && i < outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) continue;
    CUDNN_ASSIGN_OR_RETURN(values[node.outputs[i]], ToLayout(outputs[i], WantsNhwc(node.outputs[i]), stream_));
  }
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunKernel(const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  CUDNN_ASSIGN_OR_RETURN(std::vector<DeviceTensor> inputs, NodeInputs(node, values));
  absl::StatusOr<std::vector<DeviceTensor>> outputs = RunCudaKernel(g, node, inputs, stream_);
  if (outputs.status().code() == absl::StatusCode::kUnimplemented) return RunOnHost(step, values);
  if (!outputs.ok()) return outputs.status();
  return StoreNodeOutputs(node, *outputs, values);
}

}  // namespace exec
