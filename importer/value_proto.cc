// SequenceProto / OptionalProto files <-> sequence and optional values (value_proto.h).
#include "importer/value_proto.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "importer/tensor_proto.h"
#include "onnx/onnx-data.pb.h"

namespace importer {
namespace {

absl::StatusOr<ir::Tensor> FromSequenceProto(const onnx::SequenceProto& proto, ir::DType declared_dtype) {
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

onnx::SequenceProto ToSequenceProto(const ir::Tensor& value, const std::string& name) {
  onnx::SequenceProto proto;
  proto.set_name(name);
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
  if (declared.optional) {
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
      *proto.mutable_sequence_value() = ToSequenceProto(value, "");
    } else if (value.is_dense()) {
      proto.set_elem_type(onnx::OptionalProto::TENSOR);
      *proto.mutable_tensor_value() = TensorToProto(value, "");
    }
    written = file && proto.SerializeToOstream(&file);
  } else {
    written = file && ToSequenceProto(value, name).SerializeToOstream(&file);
  }
  if (!written) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

}  // namespace importer
