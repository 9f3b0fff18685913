// Recurrent Legacy steps (LSTM, GRU, RNN) on cuDNN's RNN API: the support rule, the spec, and
// CudaExecutor::RunRecurrent, which packs the weights once, keeps descriptors per X dims, and
// rearranges ONNX's layouts around cudnnRNNForward (see cuda_steps_rnn.h).
#include "runtime/cuda_steps_rnn.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/strided_copy.h"
#include "kernels/cudnn/status.h"
#include "ops/rnn_attrs.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_step_rules.h"
#include "runtime/fused_lowering.h"

namespace exec {
namespace {

using ops::RnnActivationKind;
using ops::RnnKind;

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

// Whether every direction uses the activations cuDNN's cell computes.
bool DefaultActivations(const ops::RnnAttrs& a) {
  using K = RnnActivationKind;
  std::vector<K> expected;
  switch (a.kind) {
    case RnnKind::kLstm: expected = {K::kSigmoid, K::kTanh, K::kTanh}; break;
    case RnnKind::kGru: expected = {K::kSigmoid, K::kTanh}; break;
    case RnnKind::kRnn: expected = {a.activation(0, 0).kind}; break;
  }
  if (a.kind == RnnKind::kRnn && expected[0] != K::kTanh && expected[0] != K::kRelu) return false;
  for (int64_t d = 0; d < a.num_directions; ++d) {
    for (size_t i = 0; i < expected.size(); ++i) {
      if (a.activation(d, static_cast<int64_t>(i)).kind != expected[i]) return false;
    }
  }
  return true;
}

const ir::Tensor* ConstantInput(const ir::Graph& g, const ir::Node& node, size_t i) {
  const ir::ValueId id = node.input(i);
  return id == ir::kNoValue || !g.value(id).constant ? nullptr : &*g.value(id).constant;
}

// Why W, R, B (and P) cannot be packed for cuDNN ("" when they can).
std::string WeightRejection(const ir::Graph& g, const ir::Node& node, const ops::RnnAttrs& a, ir::DType dtype) {
  const ir::Tensor* w = ConstantInput(g, node, 1);
  const ir::Tensor* r = ConstantInput(g, node, 2);
  const ir::Tensor* b = ConstantInput(g, node, 3);
  if (w == nullptr || r == nullptr) return "W or R is not a constant";
  if (node.input(3) != ir::kNoValue && b == nullptr) return "B is not a constant";
  for (const ir::Tensor* t : {w, r, b}) {
    if (t != nullptr && t->dtype() != dtype) return "W, R or B differs from X in dtype";
  }
  if (w->rank() != 3 || r->rank() != 3) return "W or R is not 3-D";
  const int64_t hidden = a.hidden_size ? *a.hidden_size : r->shape()[2];
  const int64_t rows = a.num_gates * hidden, input = w->shape()[2];
  if (w->shape() != std::vector<int64_t>{a.num_directions, rows, input} ||
      r->shape() != std::vector<int64_t>{a.num_directions, rows, hidden} ||
      (b != nullptr && b->shape() != std::vector<int64_t>{a.num_directions, 2 * rows})) {
    return "W, R or B shape does not match hidden_size and direction";
  }
  if (input < 1 || hidden < 1 || input > kIntMax || rows * hidden > kIntMax) return "sizes outside cuDNN's int range";
  if (a.kind == RnnKind::kLstm && node.input(7) != ir::kNoValue) {
    const ir::Tensor* p = ConstantInput(g, node, 7);
    if (p == nullptr) return "peepholes P computed at run time (cuDNN's LSTM has none)";
    for (int64_t i = 0; i < p->num_elements(); ++i) {
      if (p->GetAsDouble(i) != 0.0) return "peepholes P not all zero (cuDNN's LSTM has none)";
    }
  }
  return "";
}

// int32 [n] filled with `value`, on the device.
absl::StatusOr<DeviceTensor> FilledLengths(int64_t n, int32_t value, cudaStream_t stream) {
  absl::StatusOr<ir::Tensor> host = ir::Tensor::Create(ir::DType::kInt32, {n});
  if (!host.ok()) return host.status();
  std::fill(host->data<int32_t>(), host->data<int32_t>() + n, value);
  return Upload(*host, false, stream);
}

// Whether every length is in [1, seq] (cuDNN takes no empty sequence; longer ones are errors the
// host kernel reports).
bool LengthsUsable(const std::vector<int32_t>& lengths, int64_t seq) {
  return std::all_of(lengths.begin(), lengths.end(), [&](int32_t l) { return l >= 1 && l <= seq; });
}

std::vector<int32_t> LengthsOf(const ir::Tensor& t) {
  return std::vector<int32_t>(t.data<int32_t>(), t.data<int32_t>() + t.num_elements());
}

// A dense copy of `src` (dense, viewed with `dims`) with dims a and b exchanged.
absl::StatusOr<DeviceTensor> SwapDims(const DeviceTensor& src, const std::vector<int64_t>& dims, int a, int b,
                                      cudaStream_t stream) {
  std::vector<int64_t> out_dims = dims;
  std::swap(out_dims[a], out_dims[b]);
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(src.dtype, out_dims, false, stream);
  if (!out.ok()) return out.status();
  if (out->num_elements() != src.num_elements()) return absl::InternalError("SwapDims: element count differs");
  kernels::cuda::CopyShape shape;
  shape.rank = static_cast<int>(dims.size());
  std::vector<int64_t> src_strides(dims.size(), 1), dst_strides(dims.size(), 1);
  for (int i = shape.rank - 2; i >= 0; --i) {
    src_strides[i] = src_strides[i + 1] * dims[i + 1];
    dst_strides[i] = dst_strides[i + 1] * out_dims[i + 1];
  }
  std::swap(src_strides[a], src_strides[b]);
  for (int i = 0; i < shape.rank; ++i) {
    shape.dims[i] = out_dims[i];
    shape.src_strides[i] = src_strides[i];
    shape.dst_strides[i] = dst_strides[i];
  }
  if (out->num_elements() == 0) return out;
  ONNXRUN_CUDA_RETURN_IF_ERROR(
      kernels::cuda::StridedCopy(src.data(), out->data(), shape, static_cast<int>(ir::DTypeSize(src.dtype)), stream));
  return out;
}

}  // namespace

bool IsRecurrentOp(std::string_view op_type) { return op_type == "LSTM" || op_type == "GRU" || op_type == "RNN"; }

std::string RecurrentRejection(const ir::Graph& graph, const ir::Node& node) {
  absl::StatusOr<ops::RnnAttrs> attrs = ops::ParseRnnAttrs(node);
  if (!attrs.ok()) return std::string(attrs.status().message());
  const ops::RnnAttrs& a = *attrs;
  if (node.inputs.empty() || node.inputs[0] == ir::kNoValue) return "no X";
  const ir::DType dtype = graph.value(node.inputs[0]).type.dtype;
  if (dtype != ir::DType::kFloat32 && dtype != ir::DType::kFloat16) return "X is not float32 or float16";
  if (a.reverse) return "direction reverse (cuDNN has no reverse-only mode)";
  if (a.clip) return "clip (cuDNN clips the LSTM cell, not ONNX's gate inputs)";
  if (!DefaultActivations(a)) {
    return "activations other than cuDNN's (LSTM Sigmoid/Tanh/Tanh, GRU Sigmoid/Tanh, RNN Tanh or Relu)";
  }
  if (a.kind == RnnKind::kLstm && a.input_forget) return "input_forget (cuDNN's LSTM has a forget gate)";
  if (a.kind == RnnKind::kGru && !a.linear_before_reset) {
    return "GRU with linear_before_reset = 0 (cuDNN applies the reset gate after the recurrent matmul)";
  }
  return WeightRejection(graph, node, a, dtype);
}

absl::StatusOr<cudnn::RnnSpec> RecurrentSpecOf(const ir::Graph& graph, const ir::Node& node, bool allow_tf32) {
  const std::string why = RecurrentRejection(graph, node);
  if (!why.empty()) return absl::UnimplementedError(why);
  absl::StatusOr<ops::RnnAttrs> a = ops::ParseRnnAttrs(node);
  if (!a.ok()) return a.status();
  const ir::Tensor& w = *graph.value(node.inputs[1]).constant;
  const ir::Tensor& r = *graph.value(node.inputs[2]).constant;
  cudnn::RnnSpec spec;
  spec.cell = a->kind == RnnKind::kLstm                              ? cudnn::RnnCell::kLstm
              : a->kind == RnnKind::kGru                             ? cudnn::RnnCell::kGru
              : a->activation(0, 0).kind == RnnActivationKind::kRelu ? cudnn::RnnCell::kRnnRelu
                                                                     : cudnn::RnnCell::kRnnTanh;
  CUDNN_ASSIGN_OR_RETURN(spec.type, IoTypeOf(graph.value(node.inputs[0]).type.dtype));
  spec.allow_tf32 = allow_tf32;
  spec.bidirectional = a->num_directions == 2;
  spec.batch_major = a->batch_major;
  spec.input_size = static_cast<int>(w.shape()[2]);
  spec.hidden_size = static_cast<int>(r.shape()[2]);
  return spec;
}

namespace {

// The descriptor and packed weights of a supported node (its first run).
absl::Status PrepareStep(cudnnHandle_t handle, const Plan& plan, const ir::Node& node, cudaStream_t stream,
                         RecurrentStep& state) {
  const ir::Graph& g = plan.graph;
  CUDNN_ASSIGN_OR_RETURN(cudnn::RnnSpec spec, RecurrentSpecOf(g, node, plan.precision == "tf32"));
  CUDNN_ASSIGN_OR_RETURN(cudnn::Rnn rnn, cudnn::Rnn::Create(handle, spec));
  CUDNN_ASSIGN_OR_RETURN(
      state.weights,
      DeviceTensor::Allocate(ir::DType::kUint8, {static_cast<int64_t>(rnn.weight_space_bytes())}, false, stream));
  const ir::Tensor* b = ConstantInput(g, node, 3);
  const cudnn::RnnOnnxWeights onnx{g.value(node.inputs[1]).constant->raw_data(),
                                   g.value(node.inputs[2]).constant->raw_data(),
                                   b != nullptr ? b->raw_data() : nullptr};
  CUDNN_RETURN_IF_NOT_OK(rnn.LoadWeights(handle, onnx, state.weights.data(), stream));
  state.rnn = std::make_unique<cudnn::Rnn>(std::move(rnn));
  return absl::OkStatus();
}

// The descriptors for X of `x` dims: sequence lengths from a constant sequence_lens, else all T
// (lengths computed at run time replace them each run).
absl::Status PrepareShape(cudnnHandle_t handle, const ir::Graph& g, const ir::Node& node, const cudnn::Rnn& rnn,
                          const DeviceTensor& x, cudaStream_t stream, RecurrentShape& shape) {
  const cudnn::RnnSpec& spec = rnn.spec();
  const ir::DType want = spec.type == cudnn::IoType::kHalf ? ir::DType::kFloat16 : ir::DType::kFloat32;
  if (x.dtype != want || x.dims.size() != 3 || x.dims[2] != spec.input_size) {
    return absl::UnimplementedError("X's dtype or dims differ from the weights'");
  }
  const int64_t seq = x.dims[spec.batch_major ? 1 : 0], batch = x.dims[spec.batch_major ? 0 : 1];
  if (seq < 1 || batch < 1 || seq > kIntMax || batch > kIntMax) {
    return absl::UnimplementedError("empty X, or dims outside cuDNN's int range");
  }
  std::vector<int32_t> lengths(batch, static_cast<int32_t>(seq));
  if (node.input(4) == ir::kNoValue) {
    CUDNN_ASSIGN_OR_RETURN(shape.full_lengths, FilledLengths(batch, static_cast<int32_t>(seq), stream));
  } else if (const ir::Tensor* constant = ConstantInput(g, node, 4)) {
    lengths = LengthsOf(*constant);
    if (lengths.size() != static_cast<size_t>(batch) || !LengthsUsable(lengths, seq)) {
      return absl::UnimplementedError("sequence_lens has an empty sequence (cuDNN takes none) or a bad length");
    }
  }
  CUDNN_ASSIGN_OR_RETURN(cudnn::RnnData data, cudnn::RnnData::Create(handle, rnn, static_cast<int>(seq),
                                                                     static_cast<int>(batch), std::move(lengths)));
  shape.data = std::make_unique<cudnn::RnnData>(std::move(data));
  return absl::OkStatus();
}

// An initial state in cuDNN's [dirs, N, H] order: as given, or from layout 1's [N, dirs, H].
absl::StatusOr<DeviceTensor> StateForCudnn(const DeviceTensor& given, const cudnn::RnnSpec& spec, int64_t batch,
                                           cudaStream_t stream) {
  absl::StatusOr<DeviceTensor> dense = ToLayout(given, false, stream);
  if (!dense.ok()) return dense.status();
  const int64_t dirs = spec.directions(), hidden = spec.hidden_size;
  if (dense->dtype != given.dtype || dense->num_elements() != dirs * batch * hidden) {
    return absl::InternalError("initial state of the wrong size");
  }
  if (!spec.batch_major || dirs == 1) return dense;  // [N, 1, H] has the bytes of [1, N, H]
  return SwapDims(*dense, {batch, dirs, hidden}, 0, 1, stream);
}

// Output `i` (Y, Y_h, Y_c) of cuDNN in ONNX's layout: Y [T, N, dirs*H] -> [T, dirs, N, H] and
// [N, T, dirs*H] -> [N, T, dirs, H]; states [dirs, N, H] stay, or become [N, dirs, H] for layout 1.
absl::StatusOr<DeviceTensor> ToOnnxLayout(DeviceTensor t, size_t i, const cudnn::RnnSpec& spec, cudaStream_t stream) {
  const int64_t dirs = spec.directions(), hidden = spec.hidden_size;
  const int64_t a = t.dims[0], b = t.dims[1];
  if (i == 0) {
    if (spec.batch_major) {
      t.dims = {a, b, dirs, hidden};
      return t;
    }
    if (dirs == 1) {
      t.dims = {a, 1, b, hidden};
      return t;
    }
    return SwapDims(t, {a, b, dirs, hidden}, 1, 2, stream);
  }
  if (!spec.batch_major) return t;
  if (dirs == 1) {
    t.dims = {b, 1, hidden};
    return t;
  }
  return SwapDims(t, {dirs, b, hidden}, 0, 1, stream);
}

// Inputs of one cudnnRNNForward call in cuDNN's layouts, and which states to return.
struct ForwardInputs {
  DeviceTensor x, hx, cx, lengths;
  bool want_hy = false, want_cy = false;
};

// Runs cuDNN on `in`: {Y, Y_h, Y_c} in cuDNN's layouts (invalid where not wanted).
absl::StatusOr<std::array<DeviceTensor, 3>> ForwardOnDevice(cudnnHandle_t handle, const cudnn::Rnn& rnn,
                                                            const cudnn::RnnData& data, const DeviceTensor& weights,
                                                            const ForwardInputs& in, cudaStream_t stream) {
  const cudnn::RnnSpec& spec = rnn.spec();
  const int64_t seq = in.x.dims[spec.batch_major ? 1 : 0], batch = in.x.dims[spec.batch_major ? 0 : 1];
  const int64_t dirs = spec.directions(), hidden = spec.hidden_size;
  auto allocate = [&](ir::DType dtype, std::vector<int64_t> dims) {
    return DeviceTensor::Allocate(dtype, std::move(dims), false, stream);
  };
  std::array<DeviceTensor, 3> out;
  const std::vector<int64_t> y_dims = spec.batch_major ? std::vector<int64_t>{batch, seq, dirs * hidden}
                                                       : std::vector<int64_t>{seq, batch, dirs * hidden};
  CUDNN_ASSIGN_OR_RETURN(out[0], allocate(in.x.dtype, y_dims));
  if (in.want_hy) {
    CUDNN_ASSIGN_OR_RETURN(out[1], allocate(in.x.dtype, {dirs, batch, hidden}));
  }
  if (in.want_cy) {
    CUDNN_ASSIGN_OR_RETURN(out[2], allocate(in.x.dtype, {dirs, batch, hidden}));
  }
  DeviceTensor workspace, reserve;
  if (data.workspace_bytes() > 0) {
    CUDNN_ASSIGN_OR_RETURN(workspace, allocate(ir::DType::kUint8, {static_cast<int64_t>(data.workspace_bytes())}));
  }
  if (data.reserve_bytes() > 0) {
    CUDNN_ASSIGN_OR_RETURN(reserve, allocate(ir::DType::kUint8, {static_cast<int64_t>(data.reserve_bytes())}));
  }
  cudnn::RnnBuffers b;
  b.device_lengths = static_cast<const int32_t*>(in.lengths.data());
  b.x = in.x.data();
  b.y = out[0].data();
  b.hx = in.hx.data();
  b.hy = out[1].data();
  b.cx = in.cx.data();
  b.cy = out[2].data();
  b.weights = weights.data();
  b.workspace = workspace.data();
  b.reserve = reserve.data();
  CUDNN_RETURN_IF_NOT_OK(rnn.Forward(handle, data, b));
  return out;
}

}  // namespace

absl::StatusOr<bool> CudaExecutor::RecurrentLengths(const ir::Node& node, RecurrentStep& state, RecurrentShape& shape,
                                                    const DeviceTensor& x, const std::vector<DeviceTensor>& values,
                                                    DeviceTensor& lengths) {
  const ir::ValueId id = node.input(4);
  if (id == ir::kNoValue) {
    lengths = shape.full_lengths;
    return true;
  }
  absl::StatusOr<DeviceTensor> lens = Input(id, values);
  if (!lens.ok()) return lens.status();
  lengths = *lens;
  if (plan_.graph.value(id).constant) return true;  // checked when the shape was prepared
  // Computed at run time: read on the host every run, which a CUDA graph cannot hold, so the run
  // counts as one with a host step.
  ran_on_host_ = true;
  if (Capturing()) return absl::FailedPreconditionError("sequence_lens computed at run time inside a CUDA graph");
  absl::StatusOr<ir::Tensor> host = Download(lengths, stream_);
  if (!host.ok()) return host.status();
  std::vector<int32_t> now = LengthsOf(*host);
  const cudnn::RnnSpec& spec = state.rnn->spec();
  const int64_t seq = x.dims[spec.batch_major ? 1 : 0], batch = x.dims[spec.batch_major ? 0 : 1];
  if (now.size() != static_cast<size_t>(batch) || !LengthsUsable(now, seq)) return false;
  if (now == shape.data->lengths()) return true;
  CUDNN_ASSIGN_OR_RETURN(cudnn::RnnData data, cudnn::RnnData::Create(cudnn_, *state.rnn, static_cast<int>(seq),
                                                                     static_cast<int>(batch), std::move(now)));
  shape.data = std::make_unique<cudnn::RnnData>(std::move(data));
  return true;
}

absl::Status CudaExecutor::RunRecurrent(size_t index, const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  std::unique_ptr<RecurrentStep>& state = recurrent_[index];
  // Weights are uploaded (and the stream synchronised) at the first run, never inside a capture.
  if (!state && Capturing()) return absl::FailedPreconditionError("recurrent step prepared inside a CUDA graph");
  if (!state) {
    state = std::make_unique<RecurrentStep>();
    state->status = PrepareStep(cudnn_, plan_, node, stream_, *state);
    notes_[index] = state->status.ok()
                        ? absl::StrCat("legacy cuDNN: ", node.op_type, " (cudnnRNNForward)")
                        : absl::StrCat("host reference kernels (legacy cuDNN not used: ", state->status.message(), ")");
  }
  if (!state->status.ok()) return RunOnHost(step, values);
  ForwardInputs in;
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor given_x, Input(node.inputs[0], values));
  CUDNN_ASSIGN_OR_RETURN(in.x, ToLayout(given_x, false, stream_));
  const std::string key = ir::ShapeToString(in.x.dims);
  if (!state->shapes.count(key) && Capturing()) {
    return absl::FailedPreconditionError("recurrent step prepared inside a CUDA graph");
  }
  auto [it, inserted] = state->shapes.try_emplace(key);
  RecurrentShape& shape = it->second;
  if (inserted) {
    shape.status = PrepareShape(cudnn_, g, node, *state->rnn, in.x, stream_, shape);
    if (!shape.status.ok()) {
      notes_[index] = absl::StrCat("host reference kernels for X ", it->first, " (", shape.status.message(), ")");
    }
  }
  if (!shape.status.ok()) return RunOnHost(step, values);
  CUDNN_ASSIGN_OR_RETURN(const bool on_device, RecurrentLengths(node, *state, shape, in.x, values, in.lengths));
  if (!on_device) return RunOnHost(step, values);  // an empty sequence or a bad length
  const cudnn::RnnSpec& spec = state->rnn->spec();
  const int64_t batch = in.x.dims[spec.batch_major ? 0 : 1];
  const bool lstm = spec.cell == cudnn::RnnCell::kLstm;
  for (size_t i : {5, 6}) {
    if (node.input(i) == ir::kNoValue || (i == 6 && !lstm)) continue;
    CUDNN_ASSIGN_OR_RETURN(DeviceTensor given, Input(node.input(i), values));
    DeviceTensor& state_in = i == 5 ? in.hx : in.cx;
    CUDNN_ASSIGN_OR_RETURN(state_in, StateForCudnn(given, spec, batch, stream_));
  }
  // The outputs other steps read (or the graph returns); the others are not kept.
  std::array<ir::ValueId, 3> wanted = {ir::kNoValue, ir::kNoValue, ir::kNoValue};
  for (size_t i = 0; i < 3 && i < node.outputs.size(); ++i) {
    const ir::ValueId id = node.outputs[i];
    if (std::find(step.outputs.begin(), step.outputs.end(), id) != step.outputs.end()) wanted[i] = id;
  }
  in.want_hy = wanted[1] != ir::kNoValue;
  in.want_cy = lstm && wanted[2] != ir::kNoValue;
  CUDNN_ASSIGN_OR_RETURN(auto results, ForwardOnDevice(cudnn_, *state->rnn, *shape.data, state->weights, in, stream_));
  for (size_t i = 0; i < 3; ++i) {
    if (wanted[i] == ir::kNoValue || !results[i].buffer) continue;
    CUDNN_ASSIGN_OR_RETURN(DeviceTensor onnx, ToOnnxLayout(results[i], i, spec, stream_));
    CUDNN_ASSIGN_OR_RETURN(values[wanted[i]], ToLayout(onnx, WantsNhwc(wanted[i]), stream_));
  }
  return absl::OkStatus();
}

}  // namespace exec
