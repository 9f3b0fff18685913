// SequenceProto / MapProto / OptionalProto files <-> sequence (of tensors or maps), map and
// optional values (value_proto.h).
#include "importer/value_proto.h"

#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "importer/tensor_proto.h"
#include "onnx/onnx-data.pb.h"

namespace importer {
namespace {

// A MapProto (int64 or string keys; values a sequence of one-element tensors, as ONNX's
// numpy_helper.from_dict writes them) -> a map of 1-D keys and values (of `empty_dtype` when there
// are none).
absl::StatusOr<ir::Tensor> FromMapProto(const onnx::MapProto& proto, ir::DType empty_dtype) {
  ir::Tensor keys;
  if (proto.key_type() == onnx::TensorProto::STRING) {
    keys = ir::Tensor::FromStrings({proto.string_keys().begin(), proto.string_keys().end()});
  } else if (proto.key_type() == onnx::TensorProto::INT64) {
    keys = ir::Tensor::FromInt64s({proto.keys().begin(), proto.keys().end()});
  } else {
    return absl::UnimplementedError("a map whose keys are not int64 or string");
  }
  const int count = proto.values().tensor_values_size();
  if (count != keys.num_elements()) return absl::InvalidArgumentError("a map with as many values as keys expected");
  const ir::DType dtype =
      count == 0 ? empty_dtype : static_cast<ir::DType>(proto.values().tensor_values(0).data_type());
  absl::StatusOr<ir::Tensor> values = ir::Tensor::Create(dtype, {count});
  if (!values.ok()) return values.status();
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<ir::Tensor> value = TensorFromProto(proto.values().tensor_values(i), "");
    if (!value.ok()) return value.status();
    if (value->num_elements() != 1 || value->dtype() != dtype) {
      return absl::UnimplementedError("a map whose values are not one-element tensors of one dtype");
    }
    values->CopyElementFrom(*value, 0, i);
  }
  return ir::Tensor::Map(std::move(keys), *std::move(values));
}

onnx::MapProto ToMapProto(const ir::Tensor& map) {
  onnx::MapProto proto;
  const ir::Tensor& keys = map.map_keys();
  const ir::Tensor& values = map.map_values();
  proto.set_key_type(static_cast<int32_t>(keys.dtype()));
  for (int64_t i = 0; i < keys.num_elements(); ++i) {
    if (keys.dtype() == ir::DType::kString) {
      proto.add_string_keys(keys.strings()[i]);
    } else {
      proto.add_keys(keys.GetAsInt64(i));
    }
  }
  proto.mutable_values()->set_elem_type(onnx::SequenceProto::TENSOR);
  for (int64_t i = 0; i < values.num_elements(); ++i) {
    ir::Tensor one = *ir::Tensor::Create(values.dtype(), {});
    one.CopyElementFrom(values, i, 0);
    *proto.mutable_values()->add_tensor_values() = TensorToProto(one, "");
  }
  return proto;
}

absl::StatusOr<ir::Tensor> FromSequenceProto(const onnx::SequenceProto& proto, ir::DType declared_dtype) {
  if (proto.elem_type() == onnx::SequenceProto::MAP) {
    std::vector<ir::Tensor> maps;
    for (const onnx::MapProto& m : proto.map_values()) {
      absl::StatusOr<ir::Tensor> map = FromMapProto(m, declared_dtype);
      if (!map.ok()) return map.status();
      maps.push_back(*std::move(map));
    }
    for (const ir::Tensor& map : maps) {
      if (map.dtype() != maps[0].dtype() || map.map_keys().dtype() != maps[0].map_keys().dtype()) {
        return absl::InvalidArgumentError("a sequence of maps whose key or value types differ");
      }
    }
    const ir::DType dtype = maps.empty() ? declared_dtype : maps[0].dtype();
    return ir::Tensor::Sequence(dtype, std::move(maps));
  }
  if (proto.elem_type() != onnx::SequenceProto::TENSOR && proto.elem_type() != onnx::SequenceProto::UNDEFINED) {
    return absl::UnimplementedError("a sequence of non-tensors");
  }
  std::vector<ir::Tensor> elements;
  for (const onnx::TensorProto& t : proto.tensor_values()) {
    absl::StatusOr<ir::Tensor> element = TensorFromProto(t, "");
    if (!element.ok()) return element.status();
    elements.push_back(*std::move(element));
  }
  const ir::DType dtype = elements.empty() ? declared_dtype : elements[0].dtype();
  return ir::Tensor::Sequence(dtype, std::move(elements));
}

absl::StatusOr<ir::Tensor> FromOptionalProto(const onnx::OptionalProto& proto, const ir::TensorType& declared) {
  switch (proto.elem_type()) {
    case onnx::OptionalProto::UNDEFINED: return ir::Tensor::None(declared.dtype, declared.kind);
    case onnx::OptionalProto::TENSOR: return TensorFromProto(proto.tensor_value(), "");
    case onnx::OptionalProto::SEQUENCE: return FromSequenceProto(proto.sequence_value(), declared.dtype);
    default: return absl::UnimplementedError("an optional of a map or sparse tensor");
  }
}

// A sequence (of maps when `maps`, which an empty one cannot say itself) as a SequenceProto.
onnx::SequenceProto ToSequenceProto(const ir::Tensor& value, const std::string& name, bool maps) {
  onnx::SequenceProto proto;
  proto.set_name(name);
  if (maps) {
    proto.set_elem_type(onnx::SequenceProto::MAP);
    for (const ir::Tensor& e : value.elements()) *proto.add_map_values() = ToMapProto(e);
    return proto;
  }
  proto.set_elem_type(onnx::SequenceProto::TENSOR);
  for (const ir::Tensor& e : value.elements()) *proto.add_tensor_values() = TensorToProto(e, "");
  return proto;
}

}  // namespace

absl::StatusOr<ir::Tensor> ReadValueFile(const std::string& path, const ir::TensorType& declared) {
  if (declared.is_tensor()) return ReadTensorProtoFile(path);
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  absl::StatusOr<ir::Tensor> value;
  if (declared.kind == ir::ValueKind::kMap && !declared.optional) {
    onnx::MapProto proto;
    if (!proto.ParseFromIstream(&file)) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a serialized MapProto"));
    }
    value = FromMapProto(proto, declared.dtype);
  } else if (declared.optional) {
    onnx::OptionalProto proto;
    if (!proto.ParseFromIstream(&file)) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a serialized OptionalProto"));
    }
    value = FromOptionalProto(proto, declared);
  } else {
    onnx::SequenceProto proto;
    if (!proto.ParseFromIstream(&file)) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a serialized SequenceProto"));
    }
    value = FromSequenceProto(proto, declared.dtype);
  }
  if (!value.ok()) return absl::Status(value.status().code(), absl::StrCat("'", path, "': ", value.status().message()));
  return value;
}

absl::Status WriteValueFile(const ir::Tensor& value, const ir::TensorType& declared, const std::string& name,
                            const std::string& path) {
  if (!declared.optional && value.is_dense()) return WriteTensorProtoFile(value, name, path);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  bool written = false;
  if (declared.optional) {
    onnx::OptionalProto proto;
    proto.set_name(name);
    if (value.is_sequence()) {
      proto.set_elem_type(onnx::OptionalProto::SEQUENCE);
      *proto.mutable_sequence_value() = ToSequenceProto(value, "", false);
    } else if (value.is_dense()) {
      proto.set_elem_type(onnx::OptionalProto::TENSOR);
      *proto.mutable_tensor_value() = TensorToProto(value, "");
    }
    written = file && proto.SerializeToOstream(&file);
  } else if (value.is_map()) {
    onnx::MapProto proto = ToMapProto(value);
    proto.set_name(name);
    written = file && proto.SerializeToOstream(&file);
  } else {
    const bool maps = value.is_map_sequence() || declared.map_key != ir::DType::kUndefined;
    written = file && ToSequenceProto(value, name, maps).SerializeToOstream(&file);
  }
  if (!written) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

}  // namespace importer
