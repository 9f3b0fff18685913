// ModelProto -> ir::Graph: parse, check opset and op support, order nodes, convert values,
// attributes and constants, canonicalize each node and infer its output types.
#include "importer/importer.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "importer/canonicalize.h"
#include "importer/tensor_proto.h"
#include "onnx/onnx_pb.h"
#include "ops/infer_graph.h"
#include "ops/op_def.h"

namespace importer {
namespace {

// Ops the importer itself consumes or rewrites (not in the op registry under that name).
bool HandledByImporter(const std::string& op_type) {
  return op_type == "Constant" || op_type == "Upsample" || op_type == "Scatter" || op_type == "CastLike";
}

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string NodeName(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? absl::StrCat(node.op_type(), "_", index) : node.name();
}

// Checks a value's rank and, over its known dims (symbolic ones count as 1), its byte size against
// the limits; `what` names the value in the error.
absl::Status CheckTypeLimits(const std::string& what, const ir::TensorType& type, const ImportLimits& limits) {
  if (!type.shape) return absl::OkStatus();
  if (type.rank() > limits.max_rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has rank ", type.rank(), ", more than the limit of ", limits.max_rank));
  }
  const int64_t elem_size = static_cast<int64_t>(ir::DTypeSize(type.dtype));
  int64_t bytes = elem_size;
  for (const ir::Dim& d : *type.shape) {
    if (!d.known() || d.value == 0) continue;
    if (bytes > limits.max_tensor_bytes / d.value) {
      return absl::ResourceExhaustedError(absl::StrCat(
          what, " of type ", type.ToString(), " needs more than the limit of ", limits.max_tensor_bytes, " bytes"));
    }
    bytes *= d.value;
  }
  return absl::OkStatus();
}

absl::StatusOr<int> DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& import : model.opset_import()) {
    if (!IsDefaultDomain(import.domain())) continue;
    const int64_t version = import.version();
    if (version < kMinOpset || version > kMaxOpset) {
      return absl::UnimplementedError(absl::StrCat("model uses ai.onnx opset ", version, "; onnxrun supports opsets ",
                                                   kMinOpset, " to ", kMaxOpset));
    }
    return static_cast<int>(version);
  }
  return absl::InvalidArgumentError("model has no ai.onnx opset_import");
}

// Every unsupported op, with its nodes, in one error.
absl::Status CheckOpsSupported(const onnx::GraphProto& graph, int opset) {
  std::map<std::string, std::vector<std::string>> unsupported;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const bool known = IsDefaultDomain(node.domain()) &&
                       (HandledByImporter(node.op_type()) || ops::FindOpDef(node.op_type()) != nullptr);
    if (!known) {
      std::string op = node.domain().empty() ? node.op_type() : node.domain() + "." + node.op_type();
      unsupported[op].push_back(absl::StrCat("'", NodeName(node, i), "'"));
    }
  }
  if (unsupported.empty()) return absl::OkStatus();
  std::vector<std::string> parts;
  for (const auto& [op, nodes] : unsupported) {
    parts.push_back(absl::StrCat(op, " (nodes ", absl::StrJoin(nodes, ", "), ")"));
  }
  return absl::UnimplementedError(absl::StrCat("unsupported ops at opset ", opset, ": ", absl::StrJoin(parts, "; ")));
}

// Node indices in an order where every input is produced before it is read. Errors on a cycle or
// on an input that nothing produces.
absl::StatusOr<std::vector<int>> TopologicalOrder(const onnx::GraphProto& graph) {
  std::set<std::string> available;
  for (const auto& input : graph.input()) available.insert(input.name());
  for (const auto& init : graph.initializer()) available.insert(init.name());
  std::map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string& out : graph.node(i).output()) {
      if (out.empty()) continue;
      if (available.count(out) || !producer.emplace(out, i).second) {
        return absl::InvalidArgumentError(absl::StrCat("value '", out, "' is produced more than once"));
      }
    }
  }
  std::vector<int> order;
  std::vector<bool> placed(graph.node_size(), false);
  bool progress = true;
  while (progress && static_cast<int>(order.size()) < graph.node_size()) {
    progress = false;
    for (int i = 0; i < graph.node_size(); ++i) {
      if (placed[i]) continue;
      bool ready = true;
      for (const std::string& in : graph.node(i).input()) {
        if (in.empty() || available.count(in)) continue;
        if (!producer.count(in)) {
          return absl::InvalidArgumentError(absl::StrCat("node '", NodeName(graph.node(i), i), "' reads '", in,
                                                         "', which nothing produces (dangling input)"));
        }
        ready = false;
      }
      if (!ready) continue;
      for (const std::string& out : graph.node(i).output()) available.insert(out);
      placed[i] = true;
      order.push_back(i);
      progress = true;
    }
  }
  if (static_cast<int>(order.size()) < graph.node_size()) {
    std::vector<std::string> stuck;
    for (int i = 0; i < graph.node_size(); ++i) {
      if (!placed[i]) stuck.push_back(absl::StrCat("'", NodeName(graph.node(i), i), "'"));
    }
    return absl::InvalidArgumentError(absl::StrCat("the graph has a cycle through nodes ", absl::StrJoin(stuck, ", ")));
  }
  return order;
}

absl::StatusOr<ir::AttributeValue> ConvertAttribute(const onnx::AttributeProto& attr, const std::string& model_dir,
                                                    const ImportLimits& limits) {
  switch (attr.type()) {
    case onnx::AttributeProto::INT: return ir::AttributeValue(attr.i());
    case onnx::AttributeProto::FLOAT: return ir::AttributeValue(attr.f());
    case onnx::AttributeProto::STRING: return ir::AttributeValue(attr.s());
    case onnx::AttributeProto::INTS:
      return ir::AttributeValue(std::vector<int64_t>(attr.ints().begin(), attr.ints().end()));
    case onnx::AttributeProto::FLOATS:
      return ir::AttributeValue(std::vector<float>(attr.floats().begin(), attr.floats().end()));
    case onnx::AttributeProto::STRINGS:
      return ir::AttributeValue(std::vector<std::string>(attr.strings().begin(), attr.strings().end()));
    case onnx::AttributeProto::TENSOR: {
      if (attr.t().dims_size() > limits.max_rank) {
        return absl::InvalidArgumentError(absl::StrCat("attribute '", attr.name(), "' has rank ", attr.t().dims_size(),
                                                       ", more than the limit of ", limits.max_rank));
      }
      absl::StatusOr<ir::Tensor> t = TensorFromProto(attr.t(), model_dir, limits.max_tensor_bytes);
      if (!t.ok()) return t.status();
      return ir::AttributeValue(*std::move(t));
    }
    default:
      return absl::UnimplementedError(absl::StrCat("attribute '", attr.name(), "' has unsupported type ",
                                                   onnx::AttributeProto::AttributeType_Name(attr.type())));
  }
}

// The tensor a Constant node defines (value, value_float(s), value_int(s)).
absl::StatusOr<ir::Tensor> ConstantValue(const ir::Attributes& attrs) {
  if (const ir::Tensor* t = attrs.GetTensor("value")) return *t;
  if (attrs.Has("value_float")) return ir::Tensor::Scalar(attrs.GetFloat("value_float", 0));
  if (attrs.Has("value_floats")) {
    std::vector<float> v = attrs.GetFloats("value_floats");
    const int64_t n = static_cast<int64_t>(v.size());
    return ir::Tensor::FromFloats(std::move(v), {n});
  }
  if (attrs.Has("value_int")) {
    return ir::Tensor::FromInt64s({attrs.GetInt("value_int", 0)}).Reshaped({});
  }
  if (attrs.Has("value_ints")) return ir::Tensor::FromInt64s(attrs.GetInts("value_ints"));
  return absl::UnimplementedError("Constant without a supported value attribute (sparse or string)");
}

absl::StatusOr<ir::TensorType> ConvertValueInfo(const onnx::ValueInfoProto& info, const ImportLimits& limits) {
  if (!info.type().has_tensor_type()) {
    return absl::UnimplementedError(absl::StrCat("'", info.name(), "' is not a tensor"));
  }
  const auto& tensor_type = info.type().tensor_type();
  ir::TensorType type;
  type.dtype = static_cast<ir::DType>(tensor_type.elem_type());
  if (!ir::IsSupportedDType(type.dtype)) {
    return absl::UnimplementedError(
        absl::StrCat("'", info.name(), "' has unsupported dtype ", ir::DTypeName(type.dtype)));
  }
  if (!tensor_type.has_shape()) return type;
  if (tensor_type.shape().dim_size() > limits.max_rank) {
    return absl::InvalidArgumentError(absl::StrCat("'", info.name(), "' has rank ", tensor_type.shape().dim_size(),
                                                   ", more than the limit of ", limits.max_rank));
  }
  ir::Shape shape;
  for (const auto& dim : tensor_type.shape().dim()) {
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0) {
        return absl::InvalidArgumentError(absl::StrCat("'", info.name(), "' has a negative dimension"));
      }
      shape.push_back(ir::Dim(dim.dim_value()));
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      shape.push_back(ir::Dim::Symbol(dim.dim_param()));
    } else {
      shape.push_back(ir::Dim());
    }
  }
  type.shape = std::move(shape);
  absl::Status fits = CheckTypeLimits(absl::StrCat("'", info.name(), "'"), type, limits);
  if (!fits.ok()) return fits;
  return type;
}

// Counts constant bytes (initializers and Constant nodes) against max_total_initializer_bytes.
absl::Status AddConstantBytes(const std::string& name, const ir::Tensor& t, const ImportLimits& limits,
                              int64_t& total) {
  total += static_cast<int64_t>(t.byte_size());
  if (total > limits.max_total_initializer_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("constants up to '", name, "' take ", total,
                                                     " bytes, more than the limit of ",
                                                     limits.max_total_initializer_bytes));
  }
  return absl::OkStatus();
}

absl::Status AddGraphInputs(const onnx::GraphProto& proto, const ImportLimits& limits, const std::string& model_dir,
                            ir::Graph& graph, std::map<std::string, ir::ValueId>& ids, int64_t& constant_bytes) {
  for (const auto& init : proto.initializer()) {
    if (init.dims_size() > limits.max_rank) {
      return absl::InvalidArgumentError(absl::StrCat("initializer '", init.name(), "' has rank ", init.dims_size(),
                                                     ", more than the limit of ", limits.max_rank));
    }
    absl::StatusOr<ir::Tensor> t = TensorFromProto(init, model_dir, limits.max_tensor_bytes);
    if (!t.ok()) return t.status();
    absl::Status fits = AddConstantBytes(init.name(), *t, limits, constant_bytes);
    if (!fits.ok()) return fits;
    ids[init.name()] = graph.AddConstant(init.name(), *std::move(t));
  }
  for (const auto& input : proto.input()) {
    if (ids.count(input.name())) continue;  // an initializer listed as input (IR < 4)
    absl::StatusOr<ir::TensorType> type = ConvertValueInfo(input, limits);
    if (!type.ok()) return absl::Status(type.status().code(), absl::StrCat("graph input ", type.status().message()));
    ir::ValueId id = graph.AddValue(input.name(), *std::move(type));
    ids[input.name()] = id;
    graph.inputs().push_back(id);
  }
  return absl::OkStatus();
}

absl::Status AddNode(const onnx::NodeProto& proto, int index, int opset, const std::string& model_dir,
                     const ImportLimits& limits, ir::Graph& graph, std::map<std::string, ir::ValueId>& ids,
                     int64_t& constant_bytes) {
  ir::Node node;
  node.name = NodeName(proto, index);
  node.op_type = proto.op_type();
  node.opset = opset;
  for (const auto& attr : proto.attribute()) {
    absl::StatusOr<ir::AttributeValue> value = ConvertAttribute(attr, model_dir, limits);
    if (!value.ok()) {
      return absl::Status(value.status().code(), absl::StrCat("node '", node.name, "': ", value.status().message()));
    }
    node.attrs.Set(attr.name(), *std::move(value));
  }
  if (node.op_type == "Constant") {
    absl::StatusOr<ir::Tensor> value = ConstantValue(node.attrs);
    if (!value.ok() || proto.output_size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node.name, "' (Constant): ", value.ok() ? "needs one output" : value.status().message()));
    }
    absl::Status fits = AddConstantBytes(proto.output(0), *value, limits, constant_bytes);
    if (!fits.ok()) return fits;
    ids[proto.output(0)] = graph.AddConstant(proto.output(0), *std::move(value));
    return absl::OkStatus();
  }
  for (const std::string& in : proto.input()) node.inputs.push_back(in.empty() ? ir::kNoValue : ids.at(in));
  while (!node.inputs.empty() && node.inputs.back() == ir::kNoValue) node.inputs.pop_back();
  for (const std::string& out : proto.output()) {
    node.outputs.push_back(out.empty() ? ir::kNoValue : (ids[out] = graph.AddValue(out)));
  }
  absl::StatusOr<std::vector<ir::Node>> nodes = CanonicalizeNode(graph, std::move(node));
  if (!nodes.ok()) {
    return absl::Status(nodes.status().code(), absl::StrCat("node '", NodeName(proto, index), "' (", proto.op_type(),
                                                            "): ", nodes.status().message()));
  }
  for (ir::Node& n : *nodes) {
    ir::NodeId id = graph.AddNode(std::move(n));
    absl::Status inferred = ops::InferNodeTypes(graph, id);
    if (!inferred.ok()) return inferred;
    for (ir::ValueId out : graph.node(id).outputs) {
      if (out == ir::kNoValue) continue;
      absl::Status fits = CheckTypeLimits(absl::StrCat("node '", graph.node(id).name, "' (", graph.node(id).op_type,
                                                       ") output '", graph.value(out).name, "'"),
                                          graph.value(out).type, limits);
      if (!fits.ok()) return fits;
    }
  }
  return absl::OkStatus();
}

absl::Status AddGraphOutputs(const onnx::GraphProto& proto, ir::Graph& graph,
                             const std::map<std::string, ir::ValueId>& ids) {
  for (const auto& output : proto.output()) {
    auto it = ids.find(output.name());
    if (it == ids.end()) {
      return absl::InvalidArgumentError(absl::StrCat("graph output '", output.name(), "' is never produced"));
    }
    graph.outputs().push_back(it->second);
  }
  if (graph.outputs().empty()) return absl::InvalidArgumentError("the graph has no outputs");
  return absl::OkStatus();
}

absl::StatusOr<ir::Graph> ConvertModel(const onnx::ModelProto& model, const std::string& model_dir,
                                       const ImportLimits& limits) {
  const onnx::GraphProto& proto = model.graph();
  if (proto.node_size() > limits.max_nodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("model has ", proto.node_size(), " nodes, more than the limit of ", limits.max_nodes));
  }
  absl::StatusOr<int> opset = DefaultOpset(model);
  absl::Status supported = CheckOpsSupported(proto, opset.ok() ? *opset : 0);
  if (!supported.ok()) return supported;  // names every unsupported op first
  if (!opset.ok()) return opset.status();
  absl::StatusOr<std::vector<int>> order = TopologicalOrder(proto);
  if (!order.ok()) return order.status();

  ir::Graph graph;
  graph.name = proto.name().empty() ? "main" : proto.name();
  std::map<std::string, ir::ValueId> ids;
  int64_t constant_bytes = 0;
  absl::Status status = AddGraphInputs(proto, limits, model_dir, graph, ids, constant_bytes);
  for (int i : *order) {
    if (!status.ok()) break;
    status = AddNode(proto.node(i), i, *opset, model_dir, limits, graph, ids, constant_bytes);
  }
  if (status.ok()) status = AddGraphOutputs(proto, graph, ids);
  if (status.ok()) status = graph.Validate();
  if (!status.ok()) return status;
  return graph;
}

}  // namespace

absl::StatusOr<ir::Graph> ImportModelBytes(std::string_view bytes, const std::string& model_dir,
                                           const ImportLimits& limits) {
  if (bytes.empty()) return absl::InvalidArgumentError("the model file is empty");
  if (static_cast<int64_t>(bytes.size()) > limits.max_model_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("model of ", bytes.size(), " bytes exceeds the limit of ", limits.max_model_bytes));
  }
  onnx::ModelProto model;
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetRecursionLimit(64);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    return absl::InvalidArgumentError("not a valid ONNX model (protobuf parse failed: truncated or corrupt file)");
  }
  if (!model.has_graph()) return absl::InvalidArgumentError("not a valid ONNX model (no graph)");
  return ConvertModel(model, model_dir, limits);
}

absl::StatusOr<ir::Graph> ImportModelFile(const std::string& path, const ImportLimits& limits) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a folder, not a model file"));
  }
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open model '", path, "'"));
  const std::streamoff size = file.tellg();
  if (size > limits.max_model_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("'", path, "' has ", size, " bytes, more than the limit of ", limits.max_model_bytes));
  }
  std::string bytes(static_cast<size_t>(std::max<std::streamoff>(size, 0)), '\0');
  file.seekg(0);
  if (!file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    return absl::DataLossError(absl::StrCat("cannot read model '", path, "'"));
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  absl::StatusOr<ir::Graph> graph = ImportModelBytes(bytes, dir.empty() ? "." : dir, limits);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(), absl::StrCat(path, ": ", graph.status().message()));
  }
  return graph;
}

}  // namespace importer
