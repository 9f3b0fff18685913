// ExpandFlexAttention (see flex_attention.h): a NodeWriter emits the standard nodes in order, the
// modifier graphs through InlineGraphBody.
#include "importer/flex_attention.h"

#include <cmath>
#include <deque>
#include <optional>

#include "absl/strings/str_cat.h"
#include "importer/inline_functions.h"
#include "importer/tensor_proto.h"

namespace importer {
namespace {

// Appends nodes whose outputs get fresh names under one prefix. A node returned by Add stays where
// it is while more are added (a deque), so its attributes can be set after its inputs are written.
class NodeWriter {
 public:
  explicit NodeWriter(std::string prefix) : prefix_(std::move(prefix)) {}

  // op(inputs) with one output (`output`, or a fresh name); returns the node to add attributes to.
  onnx::NodeProto& Add(const std::string& op, const std::vector<std::string>& inputs, std::string output = "") {
    onnx::NodeProto& n = nodes_.emplace_back();
    n.set_op_type(op);
    n.set_name(absl::StrCat(prefix_, op, "_", nodes_.size()));
    for (const std::string& in : inputs) n.add_input(in);
    n.add_output(output.empty() ? absl::StrCat(prefix_, "v", nodes_.size()) : std::move(output));
    return n;
  }
  std::string Op(const std::string& op, const std::vector<std::string>& inputs) { return Add(op, inputs).output(0); }
  std::string Cast(const std::string& x, ir::DType to) {
    onnx::NodeProto& n = Add("Cast", {x});
    SetInt(n, "to", static_cast<int64_t>(to));
    return n.output(0);
  }
  std::string Int64s(const std::vector<int64_t>& values) { return Constant(ir::Tensor::FromInt64s(values)); }
  std::string Float(float value) { return Constant(ir::Tensor::Scalar(value)); }
  // Dims `indices` of `shape` (a Shape output), as a 1-D int64 tensor.
  std::string Dims(const std::string& shape, const std::vector<int64_t>& indices) {
    return Op("Gather", {shape, Int64s(indices)});
  }
  void Append(std::vector<onnx::NodeProto> nodes) {
    for (onnx::NodeProto& n : nodes) nodes_.push_back(std::move(n));
  }
  std::string Fresh(const std::string& what) { return absl::StrCat(prefix_, what, "_", nodes_.size()); }
  const std::string& prefix() const { return prefix_; }
  std::vector<onnx::NodeProto> Take() { return {nodes_.begin(), nodes_.end()}; }

  static void SetInt(onnx::NodeProto& n, const std::string& name, int64_t value) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  static void SetInts(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& values) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }

 private:
  std::string Constant(const ir::Tensor& value) {
    onnx::NodeProto& n = Add("Constant", {});
    *n.mutable_attribute() = ConstantNodeProto(TensorToProto(value, ""), "").attribute();
    return n.output(0);
  }

  const std::string prefix_;
  std::deque<onnx::NodeProto> nodes_;
};

std::optional<int64_t> StaticDim(const ir::TensorType& type, int axis) {
  if (!type.shape || (*type.shape)[axis].value < 0) return std::nullopt;
  return (*type.shape)[axis].value;
}

// The type the scores are cast to before score_mod (see flex_attention.h).
absl::StatusOr<ir::DType> SoftmaxType(const onnx::NodeProto& node, ir::DType input) {
  const onnx::AttributeProto* precision = FindAttribute(node.attribute(), "softmax_precision");
  if (precision == nullptr) {
    return input == ir::DType::kFloat16 || input == ir::DType::kBFloat16 ? ir::DType::kFloat32 : input;
  }
  const auto type = static_cast<ir::DType>(precision->i());
  if (type != ir::DType::kFloat32 && type != ir::DType::kFloat16 && type != ir::DType::kBFloat16 &&
      type != ir::DType::kFloat64) {
    return absl::InvalidArgumentError(
        absl::StrCat("softmax_precision ", precision->i(), " is not one of float, float16, bfloat16, double"));
  }
  return type;
}

// The dims of `type` when all are known and non-zero (a Reshape to them then needs no Shape op).
std::optional<std::vector<int64_t>> StaticShape(const ir::TensorType& type) {
  if (!type.shape) return std::nullopt;
  std::vector<int64_t> dims;
  for (const ir::Dim& d : *type.shape) {
    if (d.value <= 0) return std::nullopt;
    dims.push_back(d.value);
  }
  return dims;
}

std::string CastUnlessFloat32(NodeWriter& w, const std::string& x, ir::DType dtype) {
  return dtype == ir::DType::kFloat32 ? x : w.Cast(x, dtype);
}

// sqrt(scale) in `dtype`: from the attribute, else sqrt(1 / sqrt(head_size)) from Q's last dim.
std::string SqrtScale(NodeWriter& w, const onnx::NodeProto& node, const std::string& q, const ir::TensorType& q_type) {
  if (const onnx::AttributeProto* scale = FindAttribute(node.attribute(), "scale")) {
    return CastUnlessFloat32(w, w.Float(std::sqrt(scale->f())), q_type.dtype);
  }
  if (const std::optional<int64_t> head_size = StaticDim(q_type, 3)) {
    const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(*head_size)));
    return CastUnlessFloat32(w, w.Float(std::sqrt(scale)), q_type.dtype);
  }
  const std::string head_size = w.Cast(w.Dims(w.Op("Shape", {q}), {3}), ir::DType::kFloat32);
  const std::string scale = w.Op("Reciprocal", {w.Op("Sqrt", {head_size})});
  return CastUnlessFloat32(w, w.Op("Sqrt", {scale}), q_type.dtype);
}

std::string ConcatInt64s(NodeWriter& w, const std::vector<std::string>& parts) {
  onnx::NodeProto& concat = w.Add("Concat", parts);
  NodeWriter::SetInt(concat, "axis", 0);
  return concat.output(0);
}

// `x` [B, Hkv, S, D] with each head repeated `group` = Hq / Hkv times along axis 1 ([B, Hq, S, D],
// head h reading head h / group): through [B, Hkv, 1, S, D] expanded to [B, Hkv, group, S, D].
// The shapes are constants where the dims are known, else computed from Shape.
std::string RepeatHeads(NodeWriter& w, const std::string& x, const ir::TensorType& x_type,
                        std::optional<int64_t> q_heads, const std::string& q) {
  const std::optional<std::vector<int64_t>> dims = StaticShape(x_type);
  if (dims && q_heads) {
    const std::vector<int64_t>& d = *dims;
    const std::string five_d = w.Op("Reshape", {x, w.Int64s({d[0], d[1], 1, d[2], d[3]})});
    const std::string expanded = w.Op("Expand", {five_d, w.Int64s({1, 1, *q_heads / d[1], 1, 1})});
    return w.Op("Reshape", {expanded, w.Int64s({d[0], *q_heads, d[2], d[3]})});
  }
  const std::string shape = w.Op("Shape", {x});
  const std::string group = w.Op("Div", {w.Dims(w.Op("Shape", {q}), {1}), w.Dims(shape, {1})});
  const std::string split = ConcatInt64s(w, {w.Dims(shape, {0, 1}), w.Int64s({1}), w.Dims(shape, {2, 3})});
  const std::string tiles = ConcatInt64s(w, {w.Int64s({1, 1}), group, w.Int64s({1, 1})});
  const std::string expanded = w.Op("Expand", {w.Op("Reshape", {x, split}), tiles});
  const std::string merged = ConcatInt64s(w, {w.Dims(shape, {0}), w.Int64s({-1}), w.Dims(shape, {2, 3})});
  return w.Op("Reshape", {expanded, merged});
}

// The modifier graph attribute `name` applied to `x` (x itself when the node has none).
absl::StatusOr<std::string> ApplyModifier(NodeWriter& w, const onnx::NodeProto& node, const std::string& name,
                                          const std::string& x) {
  const onnx::AttributeProto* attr = FindAttribute(node.attribute(), name);
  if (attr == nullptr) return x;
  if (!attr->has_g() || attr->g().input_size() != 1 || attr->g().output_size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(name, " must be a graph with one input and one output"));
  }
  const std::string out = w.Fresh(name);
  w.Append(InlineGraphBody(attr->g(), {x}, {out}, absl::StrCat(w.prefix(), name, "/")));
  return out;
}

absl::Status CheckShapes(const ir::TensorType& q, const ir::TensorType& k, const ir::TensorType& v) {
  for (const ir::TensorType* t : {&q, &k, &v}) {
    if (!t->is_tensor() || !ir::IsFloatingPoint(t->dtype) || (t->shape && t->shape->size() != 4)) {
      return absl::InvalidArgumentError("Q, K and V must be rank-4 floating-point tensors");
    }
  }
  const std::optional<int64_t> q_heads = StaticDim(q, 1), kv_heads = StaticDim(k, 1);
  if (q_heads && kv_heads && (*kv_heads == 0 || *q_heads % *kv_heads != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("q_num_heads (", *q_heads, ") must be a multiple of kv_num_heads (", *kv_heads, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<onnx::NodeProto>> ExpandFlexAttention(const onnx::NodeProto& node, const std::string& prefix,
                                                                 const ir::TensorType& q, const ir::TensorType& k,
                                                                 const ir::TensorType& v) {
  if (node.input_size() != 3 || node.output_size() != 1 || node.output(0).empty()) {
    return absl::InvalidArgumentError("FlexAttention takes Q, K, V and gives Y");
  }
  if (absl::Status shapes = CheckShapes(q, k, v); !shapes.ok()) return shapes;
  absl::StatusOr<ir::DType> softmax_type = SoftmaxType(node, q.dtype);
  if (!softmax_type.ok()) return softmax_type.status();
  NodeWriter w(prefix);
  std::string key = node.input(1), value = node.input(2);
  const std::optional<int64_t> q_heads = StaticDim(q, 1), kv_heads = StaticDim(k, 1);
  if (!q_heads || !kv_heads || *q_heads != *kv_heads) {
    key = RepeatHeads(w, key, k, q_heads, node.input(0));
    value = RepeatHeads(w, value, v, q_heads, node.input(0));
  }
  const std::string sqrt_scale = SqrtScale(w, node, node.input(0), q);
  onnx::NodeProto& key_t = w.Add("Transpose", {w.Op("Mul", {key, sqrt_scale})});
  NodeWriter::SetInts(key_t, "perm", {0, 1, 3, 2});
  std::string scores = w.Op("MatMul", {w.Op("Mul", {node.input(0), sqrt_scale}), key_t.output(0)});
  if (*softmax_type != q.dtype) scores = w.Cast(scores, *softmax_type);
  absl::StatusOr<std::string> modified = ApplyModifier(w, node, "score_mod", scores);
  if (!modified.ok()) return modified.status();
  onnx::NodeProto& softmax = w.Add("Softmax", {*modified});
  NodeWriter::SetInt(softmax, "axis", -1);
  absl::StatusOr<std::string> probs = ApplyModifier(w, node, "prob_mod", softmax.output(0));
  if (!probs.ok()) return probs.status();
  if (*softmax_type != v.dtype) value = w.Cast(value, *softmax_type);
  if (*softmax_type == v.dtype) {
    w.Add("MatMul", {*probs, value}, node.output(0));
  } else {
    onnx::NodeProto& cast = w.Add("Cast", {w.Op("MatMul", {*probs, value})}, node.output(0));
    NodeWriter::SetInt(cast, "to", static_cast<int64_t>(v.dtype));
  }
  return w.Take();
}

}  // namespace importer
