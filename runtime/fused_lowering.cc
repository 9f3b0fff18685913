// FusedGraph step -> cudnn::FusedGraphSpec.
#include "runtime/fused_lowering.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/infer_concrete.h"
#include "ops/op_def.h"
#include "partitioner/silu_tail.h"

namespace exec {
namespace {

using cudnn::IoType;
using cudnn::PointwiseOp;
using cudnn::TensorDesc;

}  // namespace

absl::StatusOr<IoType> IoTypeOf(ir::DType dtype) {
  if (dtype == ir::DType::kFloat32) return IoType::kFloat;
  if (dtype == ir::DType::kFloat16) return IoType::kHalf;
  if (dtype == ir::DType::kBFloat16) return IoType::kBFloat16;
  return absl::UnimplementedError(absl::StrCat(ir::DTypeName(dtype), " is not a float type cuDNN computes in"));
}

namespace {

class Lowerer {
 public:
  Lowerer(const Plan& plan, const Step& step, const std::map<ir::ValueId, std::vector<int64_t>>& dims)
      : plan_(plan), graph_(plan.graph), step_(step), dims_(dims) {}

  absl::StatusOr<LoweredStep> Lower(bool allow_tf32);

 private:
  absl::StatusOr<std::vector<int64_t>> DimsOf(ir::ValueId id) const;
  absl::StatusOr<std::vector<int64_t>> InferOutputDims(const ir::Node& node) const;
  absl::Status LowerConv(const ir::Node& conv);
  absl::Status LowerMatMul(const ir::Node& node);
  absl::Status LowerEpilogueNode(const ir::Node& node, bool last);
  bool IsSiluAt(size_t i) const;
  // UID of the running value or of an external operand, aligned to the anchor output's rank.
  absl::StatusOr<int64_t> Operand(ir::ValueId id);
  int64_t Scalar(double value);
  int64_t Virtual();
  // Appends `mode` on (in0, in1) writing a new virtual tensor (or the output when `out` >= 0).
  int64_t Emit(const std::string& mode, int64_t in0, int64_t in1, double alpha = 0, int64_t out = -1);
  std::vector<int64_t> StridesFor(const std::vector<int64_t>& dims) const {
    return conv_ ? cudnn::ChannelsLastStrides(dims) : cudnn::RowMajorStrides(dims);
  }

  const Plan& plan_;
  const ir::Graph& graph_;
  const Step& step_;
  const std::map<ir::ValueId, std::vector<int64_t>>& dims_;
  LoweredStep out_;
  std::map<ir::ValueId, int64_t> region_uid_;  // values computed inside the step
  std::vector<int64_t> y_dims_;                // anchor output dims as cuDNN sees them
  std::vector<int64_t> matmul_out_dims_;       // a matmul's logical output dims ([..., M, N])
  bool conv_ = true;
  bool relu_fwd_ = false;  // Relu as RELU_FWD (see UsesConvBiasActivation), else MAX(x, 0)
  IoType io_ = IoType::kFloat;
  int64_t next_uid_ = 1;
};

absl::StatusOr<std::vector<int64_t>> Lowerer::DimsOf(ir::ValueId id) const {
  const ir::Value& v = graph_.value(id);
  if (v.constant) return v.constant->shape();
  auto it = dims_.find(id);
  if (it == dims_.end()) return absl::InternalError(absl::StrCat("no dims for '", v.name, "'"));
  return it->second;
}

absl::StatusOr<std::vector<int64_t>> Lowerer::InferOutputDims(const ir::Node& node) const {
  std::vector<ops::ConcreteInput> concrete;
  for (ir::ValueId id : node.inputs) {
    if (id == ir::kNoValue) {
      concrete.push_back(ops::ConcreteInput::Absent());
      continue;
    }
    const ir::Value& value = graph_.value(id);
    const ir::Tensor* constant = value.constant ? &*value.constant : nullptr;
    if (auto it = dims_.find(id); it != dims_.end()) {
      concrete.push_back(ops::ConcreteInput::Of(value.type.dtype, it->second, constant));
    } else if (constant != nullptr) {
      concrete.push_back(ops::ConcreteInput::Of(value.type.dtype, constant->shape(), constant));
    } else {
      return absl::InternalError(absl::StrCat("no dims for '", value.name, "'"));
    }
  }
  absl::StatusOr<std::vector<ops::ConcreteOutput>> out = ops::InferConcrete(node, concrete);
  if (!out.ok()) return out.status();
  if (!(*out)[0].dims) return absl::InternalError("output dims not concrete");
  return *(*out)[0].dims;
}

int64_t Lowerer::Scalar(double value) {
  TensorDesc t;
  t.uid = next_uid_++;
  t.dims.assign(y_dims_.size(), 1);
  t.strides.assign(y_dims_.size(), 1);
  t.type = IoType::kFloat;
  t.by_value = true;
  t.value = value;
  out_.spec.extra.push_back(t);
  return t.uid;
}

int64_t Lowerer::Virtual() {
  TensorDesc t;
  t.uid = next_uid_++;
  t.dims = y_dims_;
  t.strides = StridesFor(y_dims_);
  t.type = IoType::kFloat;
  t.is_virtual = true;
  out_.spec.extra.push_back(t);
  return t.uid;
}

int64_t Lowerer::Emit(const std::string& mode, int64_t in0, int64_t in1, double alpha, int64_t out) {
  if (out < 0) out = Virtual();
  out_.spec.epilogue.push_back(PointwiseOp{mode, in0, in1, out, alpha});
  return out;
}

absl::StatusOr<int64_t> Lowerer::Operand(ir::ValueId id) {
  if (auto it = region_uid_.find(id); it != region_uid_.end()) return it->second;
  const ir::Value& v = graph_.value(id);
  absl::StatusOr<std::vector<int64_t>> d = DimsOf(id);
  if (!d.ok()) return d.status();
  int64_t elements = 1;
  for (int64_t x : *d) elements *= x;
  if (elements == 1 && v.constant) return Scalar(v.constant->GetAsDouble(0));
  std::vector<int64_t> aligned(y_dims_.size() - std::min(y_dims_.size(), d->size()), 1);
  aligned.insert(aligned.end(), d->begin(), d->end());
  if (!conv_ && matmul_out_dims_.size() > 2) {
    // The matmul's leading dims are folded into M: a full-size operand is read the same way; else
    // only operands constant along everything but the last dim ([N], [1, 1, N], scalars) fit.
    const bool full = *d == matmul_out_dims_;
    const bool row = std::all_of(d->begin(), d->end() - (d->empty() ? 0 : 1), [](int64_t x) { return x == 1; });
    if (!full && !row) return absl::UnimplementedError("operand broadcast over some leading dims of an N-D matmul");
    aligned = full ? y_dims_ : std::vector<int64_t>{1, 1, d->empty() ? 1 : d->back()};
  }
  if (aligned.size() != y_dims_.size()) return absl::UnimplementedError("operand rank above the output's");
  absl::StatusOr<IoType> type = IoTypeOf(v.type.dtype);
  if (!type.ok()) return type.status();
  TensorDesc t;
  t.uid = next_uid_++;
  t.dims = aligned;
  // A full-size operand is stored like the output (NHWC for a conv); a broadcast one is packed,
  // and its packed strides equal the channels-last ones (only one dim differs from 1).
  t.strides = StridesFor(aligned);
  t.type = *type;
  out_.spec.extra.push_back(t);
  const bool full = aligned == y_dims_;
  out_.bindings[t.uid] = {id, conv_ && full, *d};
  return t.uid;
}

absl::Status Lowerer::LowerConv(const ir::Node& conv) {
  absl::StatusOr<std::vector<int64_t>> x = DimsOf(conv.inputs[0]), w = DimsOf(conv.inputs[1]);
  if (!x.ok()) return x.status();
  if (!w.ok()) return w.status();
  if (x->size() != 4 || w->size() != 4) return absl::UnimplementedError("only 2-D convs");
  absl::StatusOr<std::vector<int64_t>> y = InferOutputDims(conv);
  if (!y.ok()) return y.status();
  y_dims_ = *y;
  cudnn::FusedGraphSpec& spec = out_.spec;
  spec.anchor = cudnn::FusedGraphSpec::kConv;
  const std::vector<int64_t> pads = conv.attrs.GetInts("pads", {0, 0, 0, 0});
  if (conv.attrs.GetString("auto_pad", "NOTSET") != "NOTSET") return absl::UnimplementedError("auto_pad");
  spec.conv.pads_begin = {pads[0], pads[1]};
  spec.conv.pads_end = {pads[2], pads[3]};
  spec.conv.strides = conv.attrs.GetInts("strides", {1, 1});
  spec.conv.dilations = conv.attrs.GetInts("dilations", {1, 1});
  spec.x = {next_uid_++, *x, cudnn::ChannelsLastStrides(*x), io_};
  spec.w = {next_uid_++, *w, cudnn::ChannelsLastStrides(*w), io_};
  out_.bindings[spec.x.uid] = {conv.inputs[0], true, *x};
  out_.bindings[spec.w.uid] = {conv.inputs[1], true, *w};
  const bool has_epilogue = step_.nodes.size() > 1 || conv.input(2) != ir::kNoValue;
  spec.y = {next_uid_++, y_dims_, cudnn::ChannelsLastStrides(y_dims_), has_epilogue ? IoType::kFloat : io_,
            has_epilogue};
  int64_t running = spec.y.uid;
  if (conv.input(2) != ir::kNoValue) {  // bias [K] -> [1,K,1,1]
    absl::StatusOr<std::vector<int64_t>> b = DimsOf(conv.input(2));
    if (!b.ok()) return b.status();
    TensorDesc bias{next_uid_++, {1, (*b)[0], 1, 1}, cudnn::ChannelsLastStrides({1, (*b)[0], 1, 1}), io_};
    spec.extra.push_back(bias);
    out_.bindings[bias.uid] = {conv.input(2), false, *b};
    running = Emit("ADD", running, bias.uid, 0, step_.nodes.size() > 1 ? -1 : 0);
  }
  region_uid_[conv.outputs[0]] = running;
  return absl::OkStatus();
}

absl::Status Lowerer::LowerMatMul(const ir::Node& node) {
  conv_ = false;
  absl::StatusOr<std::vector<int64_t>> a = DimsOf(node.inputs[0]), b = DimsOf(node.inputs[1]);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  const bool gemm = node.op_type == "Gemm";
  if (a->size() < 2 || b->size() != 2 || (gemm && a->size() != 2)) {
    return absl::UnimplementedError("only matmuls of a 2-D or N-D input by a 2-D weight are lowered");
  }
  if (a->size() > 2 && !out_.spec.allow_tf32) {
    // Measured on the H200: cuDNN's matmul engine (cuBLASLt, no numerical note) computes these in
    // TF32 (3e-4 relative on vit_b_16), so strict fp32 keeps them off cuDNN.
    return absl::UnimplementedError("strict fp32: cuDNN computes an N-D matmul in TF32");
  }
  const bool ta = gemm && node.attrs.GetInt("transA", 0), tb = gemm && node.attrs.GetInt("transB", 0);
  // A [..., M, K] (row-major) is the same bytes as [prod(...) * M, K]: the leading dims fold into M.
  int64_t lead = 1;
  for (size_t i = 0; i + 2 < a->size(); ++i) lead *= (*a)[i];
  const size_t r = a->size();
  const int64_t m = lead * (ta ? (*a)[1] : (*a)[r - 2]), k = ta ? (*a)[0] : (*a)[r - 1], n = tb ? (*b)[0] : (*b)[1];
  matmul_out_dims_.assign(a->begin(), a->end() - 2);
  matmul_out_dims_.insert(matmul_out_dims_.end(), {ta ? (*a)[1] : (*a)[r - 2], n});
  y_dims_ = {1, m, n};
  cudnn::FusedGraphSpec& spec = out_.spec;
  spec.anchor = cudnn::FusedGraphSpec::kMatMul;
  // Logical [1,M,K] / [1,K,N] over the row-major stored A / B (transposed through strides).
  spec.x = {next_uid_++, {1, m, k}, ta ? std::vector<int64_t>{m * k, 1, m} : std::vector<int64_t>{m * k, k, 1}, io_};
  spec.w = {next_uid_++, {1, k, n}, tb ? std::vector<int64_t>{k * n, 1, k} : std::vector<int64_t>{k * n, n, 1}, io_};
  out_.bindings[spec.x.uid] = {node.inputs[0], false, *a};
  out_.bindings[spec.w.uid] = {node.inputs[1], false, *b};
  const bool has_epilogue = step_.nodes.size() > 1 || node.input(2) != ir::kNoValue;
  spec.y = {next_uid_++, y_dims_, cudnn::RowMajorStrides(y_dims_), has_epilogue ? IoType::kFloat : io_, has_epilogue};
  int64_t running = spec.y.uid;
  if (gemm && node.input(2) != ir::kNoValue) {
    absl::StatusOr<int64_t> c = Operand(node.input(2));
    if (!c.ok()) return c.status();
    running = Emit("ADD", running, *c, 0, step_.nodes.size() > 1 ? -1 : 0);
  }
  region_uid_[node.outputs[0]] = running;
  return absl::OkStatus();
}

absl::Status Lowerer::LowerEpilogueNode(const ir::Node& node, bool last) {
  const int64_t out = last ? 0 : -1;  // 0: placeholder for the output UID, patched at the end
  auto in = [&](size_t i) { return Operand(node.inputs[i]); };
  absl::StatusOr<int64_t> x = in(0);
  const std::string& op = node.op_type;
  int64_t result;
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    absl::StatusOr<int64_t> y = in(1);
    if (!x.ok()) return x.status();
    if (!y.ok()) return y.status();
    int64_t a = *x, b = *y;
    const bool region_second = region_uid_.count(node.inputs[1]) && !region_uid_.count(node.inputs[0]);
    if (region_second && (op == "Add" || op == "Mul")) std::swap(a, b);
    static const std::map<std::string, std::string> kModes = {
        {"Add", "ADD"}, {"Sub", "SUB"}, {"Mul", "MUL"}, {"Div", "DIV"}};
    result = Emit(kModes.at(op), a, b, 0, out);
  } else if (!x.ok()) {
    return x.status();
  } else if (op == "Relu") {
    result = relu_fwd_ ? Emit("RELU_FWD", *x, -1, 0, out) : Emit("MAX", *x, Scalar(0.0), 0, out);
  } else if (op == "Clip") {
    int64_t v = *x;
    const bool has_lo = node.input(1) != ir::kNoValue, has_hi = node.input(2) != ir::kNoValue;
    if (has_lo) v = Emit("MAX", v, Scalar(graph_.value(node.input(1)).constant->GetAsDouble(0)), 0, has_hi ? -1 : out);
    if (has_hi) v = Emit("MIN", v, Scalar(graph_.value(node.input(2)).constant->GetAsDouble(0)), 0, out);
    if (!has_lo && !has_hi) v = Emit("IDENTITY", v, -1, 0, out);
    result = v;
  } else if (op == "Sigmoid" || op == "Tanh" || op == "Gelu" || op == "Erf") {
    static const std::map<std::string, std::string> kModes = {
        {"Sigmoid", "SIGMOID_FWD"}, {"Tanh", "TANH_FWD"}, {"Gelu", "GELU_FWD"}, {"Erf", "ERF"}};
    const bool tanh_gelu = op == "Gelu" && node.attrs.GetString("approximate", "none") == "tanh";
    result = Emit(tanh_gelu ? "GELU_APPROX_TANH_FWD" : kModes.at(op), *x, -1, 0, out);
  } else if (op == "Elu") {
    result = Emit("ELU_FWD", *x, -1, node.attrs.GetFloat("alpha", 1.0f), out);
  } else if (op == "LeakyRelu") {
    const int64_t scaled = Emit("MUL", *x, Scalar(node.attrs.GetFloat("alpha", 0.01f)));
    result = Emit("MAX", *x, scaled, 0, out);
  } else if (op == "HardSigmoid" || op == "HardSwish") {
    const double alpha = op == "HardSwish" ? 1.0 / 6 : node.attrs.GetFloat("alpha", 0.2f);
    const double beta = op == "HardSwish" ? 0.5 : node.attrs.GetFloat("beta", 0.5f);
    int64_t t = Emit("MUL", *x, Scalar(alpha));
    t = Emit("ADD", t, Scalar(beta));
    t = Emit("MAX", t, Scalar(0.0));
    t = Emit("MIN", t, Scalar(1.0), 0, op == "HardSigmoid" ? out : -1);
    result = op == "HardSwish" ? Emit("MUL", *x, t, 0, out) : t;
  } else {
    return absl::UnimplementedError(absl::StrCat(op, " is not lowered to cuDNN pointwise modes"));
  }
  region_uid_[node.outputs[0]] = result;
  return absl::OkStatus();
}

// True when step nodes i and i + 1 are the Sigmoid and Mul of x * Sigmoid(x) (MatchSiluTail, with
// the step's nodes as the readers: a value read by another step would make it a second output,
// which Lower refuses): SiLU, written as one SWISH_FWD. cuDNN's runtime-compiled engines ran conv +
// bias + SWISH_FWD in 26.9 us against 41.6 us for SIGMOID_FWD then MUL (CUDNN_FACTS).
bool Lowerer::IsSiluAt(size_t i) const {
  if (i + 1 >= step_.nodes.size() || graph_.node(step_.nodes[i]).op_type != "Sigmoid") return false;
  auto readers = [&](ir::ValueId v) {
    std::vector<ir::NodeId> in_step;
    for (ir::NodeId id : step_.nodes) {
      const std::vector<ir::ValueId>& in = graph_.node(id).inputs;
      if (std::find(in.begin(), in.end(), v) != in.end()) in_step.push_back(id);
    }
    return in_step;
  };
  const std::optional<std::pair<ir::NodeId, ir::NodeId>> silu =
      partitioner::MatchSiluTail(graph_, graph_.node(step_.nodes[i]).inputs[0], readers);
  return silu && silu->first == step_.nodes[i] && silu->second == step_.nodes[i + 1];
}

// True for a dense conv followed by at most an Add of a constant (a bias) and a final Relu: with the
// Relu written RELU_FWD, cuDNN serves that graph from its precompiled conv+bias+activation engines
// (no runtime compilation; on the fp16 C=4 stem engine 48 is 10x faster than the runtime-compiled
// engine heuristics pick for MAX(x, 0): bench/stem_bench). Depthwise, grouped and residual forms keep
// MAX(x, 0), which their fast (runtime-compiled) engines need (CUDNN_FACTS lesson 1).
bool UsesConvBiasActivation(const ir::Graph& graph, const Step& step) {
  const std::vector<ir::NodeId>& nodes = step.nodes;
  if (nodes.size() < 2 || nodes.size() > 3) return false;
  const ir::Node& conv = graph.node(nodes[0]);
  if (conv.op_type != "Conv" || conv.attrs.GetInt("group", 1) != 1) return false;
  if (graph.node(nodes.back()).op_type != "Relu") return false;
  if (nodes.size() == 2) return true;
  const ir::Node& add = graph.node(nodes[1]);
  if (add.op_type != "Add") return false;
  return std::any_of(add.inputs.begin(), add.inputs.end(),
                     [&](ir::ValueId v) { return v != ir::kNoValue && graph.value(v).constant.has_value(); });
}

absl::StatusOr<LoweredStep> Lowerer::Lower(bool allow_tf32) {
  const ir::Node& anchor = graph_.node(step_.nodes[0]);
  relu_fwd_ = UsesConvBiasActivation(graph_, step_);
  if (step_.outputs.size() != 1) return absl::UnimplementedError("fused step with several outputs");
  const ir::ValueId output = step_.outputs[0];
  absl::StatusOr<IoType> io = IoTypeOf(graph_.value(output).type.dtype);
  if (!io.ok()) return io.status();
  io_ = *io;
  out_.spec.allow_tf32 = allow_tf32 || cudnn::Is16Bit(io_);
  absl::Status status = anchor.op_type == "Conv" ? LowerConv(anchor) : LowerMatMul(anchor);
  if (!status.ok()) return status;
  if (conv_ && io_ == IoType::kFloat && IsFloat32Stem(out_.spec.w.dims)) out_.spec.allow_tf32 = false;
  for (size_t i = 1; i < step_.nodes.size(); ++i) {
    if (IsSiluAt(i)) {  // Sigmoid, then Mul(x, sigmoid(x)): one SWISH_FWD
      const ir::Node& mul = graph_.node(step_.nodes[++i]);
      absl::StatusOr<int64_t> x = Operand(graph_.node(step_.nodes[i - 1]).inputs[0]);
      if (!x.ok()) return x.status();
      region_uid_[mul.outputs[0]] = Emit("SWISH_FWD", *x, -1, 1.0, i + 1 == step_.nodes.size() ? 0 : -1);
      continue;
    }
    status = LowerEpilogueNode(graph_.node(step_.nodes[i]), i + 1 == step_.nodes.size());
    if (!status.ok()) return status;
  }
  // The step's output: the anchor's y when there is no epilogue, else a new non-virtual tensor that
  // the last op (written with the placeholder UID 0) stores.
  out_.output_dims = conv_ ? y_dims_ : matmul_out_dims_;
  if (out_.spec.epilogue.empty()) {
    out_.output_uid = out_.spec.y.uid;
  } else {
    TensorDesc o{next_uid_++, y_dims_, StridesFor(y_dims_), io_};
    out_.spec.extra.push_back(o);
    out_.output_uid = o.uid;
    for (PointwiseOp& p : out_.spec.epilogue) {
      if (p.out == 0) p.out = o.uid;
    }
  }
  out_.bindings[out_.output_uid] = {output, conv_, out_.output_dims};
  return out_;
}

}  // namespace

absl::StatusOr<LoweredStep> LowerFusedStep(const Plan& plan, const Step& step,
                                           const std::map<ir::ValueId, std::vector<int64_t>>& dims, bool allow_tf32) {
  return Lowerer(plan, step, dims).Lower(allow_tf32);
}

}  // namespace exec
