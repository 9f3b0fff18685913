// Proto -> IR conversions of single items: value infos, attributes, Constant values, limit checks.
#include "importer/convert.h"

#include "absl/strings/str_cat.h"
#include "importer/tensor_proto.h"
#include "ops/op_def.h"

namespace importer {

bool HandledByImporter(const std::string& op_type) {
  for (const ops::ImportedOp& op : ops::ImporterRewrittenOps()) {
    if (op.op_type == op_type) return true;
  }
  return false;
}

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string CanonicalOpType(const onnx::NodeProto& node) {
  if (!IsDefaultDomain(node.domain())) return absl::StrCat(node.domain(), ".", node.op_type());
  return node.op_type().find('.') == std::string::npos ? node.op_type() : "";
}

DomainVersions SupportedDomainVersions(const std::string& domain) {
  if (domain == "ai.onnx.preview.training") return {1, 1};  // Adagrad, Adam, Momentum
  if (domain == "ai.onnx.preview") return {1, 1};           // FlexAttention (flex_attention.h)
  if (domain == "ai.onnx.ml") return {1, 5};                // ops/ml_ops.h
  if (domain == "com.microsoft") return {1, 1};             // ONNX Runtime's contrib ops (contrib_ops.h)
  return {};
}

std::string NodeName(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? absl::StrCat(node.op_type(), "_", index) : node.name();
}

absl::Status CheckTypeLimits(const std::string& what, const ir::TensorType& type, const ImportLimits& limits) {
  if (!type.shape) return absl::OkStatus();
  if (type.rank() > limits.max_rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has rank ", type.rank(), ", more than the limit of ", limits.max_rank));
  }
  const int64_t elem_size = static_cast<int64_t>(ir::DTypeLimitSize(type.dtype));
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

// A TYPE_PROTO attribute (Optional's `type`) as {kind, elem dtype}: kind 0 for a tensor, 1 for a
// sequence of tensors (ops::OptionalTypeAttribute reads it).
absl::StatusOr<ir::AttributeValue> TypeAttribute(const onnx::AttributeProto& attr) {
  const onnx::TypeProto& type = attr.tp();
  if (type.has_tensor_type()) return ir::AttributeValue(std::vector<int64_t>{0, type.tensor_type().elem_type()});
  if (type.has_sequence_type() && type.sequence_type().elem_type().has_tensor_type()) {
    return ir::AttributeValue(std::vector<int64_t>{1, type.sequence_type().elem_type().tensor_type().elem_type()});
  }
  return absl::UnimplementedError(absl::StrCat("attribute '", attr.name(),
                                               "' names a type other than a tensor or a "
                                               "sequence of tensors"));
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
    case onnx::AttributeProto::TYPE_PROTO: return TypeAttribute(attr);
    default:
      return absl::UnimplementedError(absl::StrCat("attribute '", attr.name(), "' has unsupported type ",
                                                   onnx::AttributeProto::AttributeType_Name(attr.type())));
  }
}

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
  if (attrs.Has("value_string")) return ir::Tensor::FromStrings({attrs.GetString("value_string", "")}).Reshaped({});
  if (attrs.Has("value_strings")) return ir::Tensor::FromStrings(attrs.GetStrings("value_strings"));
  return absl::UnimplementedError("Constant without a supported value attribute (sparse)");
}

namespace {

absl::StatusOr<ir::TensorType> ConvertTensorType(const std::string& name, const onnx::TypeProto::Tensor& tensor_type,
                                                 const ImportLimits& limits) {
  ir::TensorType type;
  type.dtype = static_cast<ir::DType>(tensor_type.elem_type());
  if (!ir::IsTensorDType(type.dtype)) {
    return absl::UnimplementedError(absl::StrCat("'", name, "' has unsupported dtype ", ir::DTypeName(type.dtype)));
  }
  if (!tensor_type.has_shape()) return type;
  if (tensor_type.shape().dim_size() > limits.max_rank) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' has rank ", tensor_type.shape().dim_size(),
                                                   ", more than the limit of ", limits.max_rank));
  }
  ir::Shape shape;
  for (const auto& dim : tensor_type.shape().dim()) {
    // Unknown: no value or name, a negative value (PaddlePaddle's exports write -1; ORT reads it so)
    // or the name "?" (paddle2onnx names every unknown dim so: not one symbol all of them equal).
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      shape.push_back(ir::Dim(dim.dim_value()));
    } else if (dim.has_dim_param() && !dim.dim_param().empty() && dim.dim_param() != "?") {
      shape.push_back(ir::Dim::Symbol(dim.dim_param()));
    } else {
      shape.push_back(ir::Dim());
    }
  }
  type.shape = std::move(shape);
  absl::Status fits = CheckTypeLimits(absl::StrCat("'", name, "'"), type, limits);
  if (!fits.ok()) return fits;
  return type;
}

// map(int64|string, tensor) -> a map type (DictVectorizer's and CastMap's input; string values
// too); in a sequence (ZipMap's output) the values must be numbers.
absl::StatusOr<ir::TensorType> ConvertMapType(const std::string& name, const onnx::TypeProto::Map& map,
                                              bool in_sequence) {
  const auto key = static_cast<ir::DType>(map.key_type());
  const onnx::TypeProto& value = map.value_type();
  if ((key != ir::DType::kInt64 && key != ir::DType::kString) || !value.has_tensor_type()) {
    return absl::UnimplementedError(absl::StrCat("'", name, "' is a map other than map(int64 or string, tensor)"));
  }
  const auto value_dtype = static_cast<ir::DType>(value.tensor_type().elem_type());
  if (!ir::IsSupportedDType(value_dtype) || (in_sequence && value_dtype == ir::DType::kString)) {
    return absl::UnimplementedError(absl::StrCat("'", name, "' is a map with unsupported values"));
  }
  return in_sequence ? ir::TensorType::SequenceOfMaps(key, value_dtype) : ir::TensorType::Map(key, value_dtype);
}

// seq(tensor) -> a sequence type of the element dtype (element shapes are not kept).
absl::StatusOr<ir::TensorType> ConvertSequenceType(const std::string& name, const onnx::TypeProto::Sequence& seq,
                                                   const ImportLimits& limits) {
  if (seq.elem_type().has_map_type()) return ConvertMapType(name, seq.elem_type().map_type(), /*in_sequence=*/true);
  if (!seq.elem_type().has_tensor_type()) {
    return absl::UnimplementedError(absl::StrCat("'", name, "' is a sequence of non-tensors"));
  }
  absl::StatusOr<ir::TensorType> elem = ConvertTensorType(name, seq.elem_type().tensor_type(), limits);
  if (!elem.ok()) return elem.status();
  if (elem->dtype == ir::DType::kString) {
    return absl::UnimplementedError(absl::StrCat("'", name, "' is a sequence of strings (not supported)"));
  }
  return ir::TensorType::Sequence(elem->dtype);
}

absl::StatusOr<ir::TensorType> ConvertValueInfoType(const std::string& name, const onnx::TypeProto& type,
                                                    const ImportLimits& limits) {
  if (type.has_sequence_type()) return ConvertSequenceType(name, type.sequence_type(), limits);
  if (type.has_map_type()) return ConvertMapType(name, type.map_type(), /*in_sequence=*/false);
  return ConvertTensorType(name, type.tensor_type(), limits);
}

}  // namespace

absl::StatusOr<ir::TensorType> ConvertValueInfo(const onnx::ValueInfoProto& info, const ImportLimits& limits) {
  const onnx::TypeProto& type = info.type();
  if (type.has_tensor_type() || type.has_sequence_type() || type.has_map_type()) {
    return ConvertValueInfoType(info.name(), type, limits);
  }
  if (type.has_optional_type()) {
    const onnx::TypeProto& elem = type.optional_type().elem_type();
    if (!elem.has_tensor_type() && !elem.has_sequence_type()) {
      return absl::UnimplementedError(absl::StrCat("'", info.name(), "' is an optional of a non-tensor type"));
    }
    absl::StatusOr<ir::TensorType> converted = ConvertValueInfoType(info.name(), elem, limits);
    if (!converted.ok()) return converted.status();
    ir::TensorType optional = *std::move(converted);
    optional.shape.reset();  // passes that look at ranks leave optional values alone
    optional.optional = true;
    return optional;
  }
  return absl::UnimplementedError(absl::StrCat("'", info.name(), "' is not a tensor, sequence, map or optional"));
}

absl::Status AddConstantBytes(const std::string& name, const ir::Tensor& t, const ImportLimits& limits,
                              int64_t& total) {
  total += static_cast<int64_t>(t.host_bytes());
  if (total > limits.max_total_initializer_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("constants up to '", name, "' take ", total,
                                                     " bytes, more than the limit of ",
                                                     limits.max_total_initializer_bytes));
  }
  return absl::OkStatus();
}

}  // namespace importer
