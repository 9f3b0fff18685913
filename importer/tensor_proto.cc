// TensorProto <-> ir::Tensor: raw_data, the typed repeated fields (string_data for strings), and
// checked external data.
#include "importer/tensor_proto.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ir/half.h"
#include "ir/narrow.h"

namespace importer {
namespace {

namespace fs = std::filesystem;

absl::Status SizeMismatch(const onnx::TensorProto& proto, int64_t got, int64_t want) {
  return absl::InvalidArgumentError(
      absl::StrCat("tensor '", proto.name(), "' has ", got, " elements of data, its shape needs ", want));
}

// Bytes of `count` elements of `dtype` packed as TensorProto packs them (4-, 2- and 6-bit types
// LSB first, several to a byte).
int64_t PackedBytes(ir::DType dtype, int64_t count) { return (count * ir::PackedBits(dtype) + 7) / 8; }

// The packed bit stream `packed` into one element per byte of `out`.
void Unpack(const uint8_t* packed, int bits, int64_t count, uint8_t* out) {
  for (int64_t i = 0; i < count; ++i) {
    int value = 0;
    for (int b = 0; b < bits; ++b) {
      const int64_t at = i * bits + b;
      value |= ((packed[at / 8] >> (at % 8)) & 1) << b;
    }
    out[i] = static_cast<uint8_t>(value);
  }
}

std::string Pack(const uint8_t* codes, int bits, int64_t count) {
  std::string packed(static_cast<size_t>((count * bits + 7) / 8), '\0');
  for (int64_t i = 0; i < count; ++i) {
    for (int b = 0; b < bits; ++b) {
      const int64_t at = i * bits + b;
      if ((codes[i] >> b) & 1) packed[at / 8] = static_cast<char>(packed[at / 8] | (1 << (at % 8)));
    }
  }
  return packed;
}

bool IsPacked(ir::DType dtype) { return ir::PackedBits(dtype) < 8; }

// Copies a typed repeated field into the tensor, converting each element to the storage type.
template <typename Field>
absl::Status CopyTyped(const onnx::TensorProto& proto, const Field& field, ir::Tensor& tensor) {
  if (field.size() != tensor.num_elements()) {
    return SizeMismatch(proto, field.size(), tensor.num_elements());
  }
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    auto v = field.Get(static_cast<int>(i));
    switch (tensor.dtype()) {
      case ir::DType::kFloat32: tensor.data<float>()[i] = static_cast<float>(v); break;
      case ir::DType::kFloat64: tensor.data<double>()[i] = static_cast<double>(v); break;
      case ir::DType::kFloat16:
      case ir::DType::kBFloat16: tensor.data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
      case ir::DType::kUint8:
      case ir::DType::kBool: tensor.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
      case ir::DType::kInt8: tensor.data<int8_t>()[i] = static_cast<int8_t>(v); break;
      case ir::DType::kUint16: tensor.data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
      case ir::DType::kInt16: tensor.data<int16_t>()[i] = static_cast<int16_t>(v); break;
      case ir::DType::kInt32: tensor.data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case ir::DType::kUint32: tensor.data<uint32_t>()[i] = static_cast<uint32_t>(v); break;
      case ir::DType::kInt64: tensor.data<int64_t>()[i] = static_cast<int64_t>(v); break;
      case ir::DType::kUint64: tensor.data<uint64_t>()[i] = static_cast<uint64_t>(v); break;
      default:
        if (!ir::IsNarrowDType(tensor.dtype())) return absl::InternalError("unexpected dtype");
        // float8 (one code per entry); float6 (the low 6 bits of each entry)
        tensor.data<uint8_t>()[i] =
            static_cast<uint8_t>(static_cast<uint32_t>(v) & (ir::PackedBits(tensor.dtype()) == 6 ? 0x3F : 0xFF));
    }
  }
  return absl::OkStatus();
}

// Resolves `location` inside `model_dir`; refuses absolute paths and paths that escape it.
absl::StatusOr<fs::path> ResolveExternalPath(const std::string& model_dir, const std::string& location,
                                             const std::string& tensor_name) {
  if (model_dir.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", tensor_name, "' uses external data, but the model was not loaded from a file"));
  }
  fs::path rel(location);
  if (location.empty() || rel.is_absolute() || rel.has_root_name()) {
    return absl::PermissionDeniedError(absl::StrCat("tensor '", tensor_name, "': external data path '", location,
                                                    "' must be relative to the model's folder"));
  }
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(model_dir), ec);
  fs::path full = fs::weakly_canonical(base / rel, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("external data '", location, "': ", ec.message()));
  auto [base_end, full_it] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (base_end != base.end()) {
    return absl::PermissionDeniedError(absl::StrCat("tensor '", tensor_name, "': external data path '", location,
                                                    "' points outside the model's folder"));
  }
  return full;
}

// Checks `proto`'s external data (path inside `model_dir`, length, bounds of the file) before the
// tensor is allocated, then reads it.
absl::StatusOr<ir::Tensor> ReadExternalData(const onnx::TensorProto& proto, const std::string& model_dir,
                                            ir::DType dtype, std::vector<int64_t> shape, int64_t want) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset" || entry.key() == "length") {
      int64_t v = 0;
      if (!absl::SimpleAtoi(entry.value(), &v) || v < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", proto.name(), "': bad external data ", entry.key(), " '", entry.value(), "'"));
      }
      (entry.key() == "offset" ? offset : length) = v;
    }
  }
  absl::StatusOr<fs::path> path = ResolveExternalPath(model_dir, location, proto.name());
  if (!path.ok()) return path.status();
  std::ifstream file(*path, std::ios::binary | std::ios::ate);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open external data file '", location, "'"));
  const int64_t file_size = static_cast<int64_t>(file.tellg());
  if (length >= 0 && length != want) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", proto.name(), "': external data length ", length,
                                                   " != ", want, " bytes its shape needs"));
  }
  if (offset > file_size || want > file_size - offset) {
    return absl::OutOfRangeError(absl::StrCat("tensor '", proto.name(), "': external data [", offset, ", ",
                                              offset + want, ") is past the end of '", location, "' (", file_size,
                                              " bytes)"));
  }
  absl::StatusOr<ir::Tensor> tensor = ir::Tensor::Create(dtype, std::move(shape));
  if (!tensor.ok()) return tensor.status();
  file.seekg(offset);
  file.read(static_cast<char*>(tensor->raw_data()), want);
  if (!file) return absl::DataLossError(absl::StrCat("reading external data '", location, "' failed"));
  if (IsPacked(dtype)) {  // `want` packed bytes at the start of the buffer: spread them out
    const std::string packed(static_cast<const char*>(tensor->raw_data()), static_cast<size_t>(want));
    Unpack(reinterpret_cast<const uint8_t*>(packed.data()), ir::PackedBits(dtype), tensor->num_elements(),
           tensor->data<uint8_t>());
  }
  return tensor;
}

// Elements of data `proto` carries inline (raw_data counts in bytes, see InlineDataFits).
int64_t TypedDataSize(const onnx::TensorProto& proto, ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kFloat32: return proto.float_data_size();
    case ir::DType::kFloat64: return proto.double_data_size();
    case ir::DType::kInt64: return proto.int64_data_size();
    case ir::DType::kUint32:
    case ir::DType::kUint64: return proto.uint64_data_size();
    default: return proto.int32_data_size();
  }
}

// Whether the inline data has exactly the size the shape needs; checked before allocating.
absl::Status InlineDataFits(const onnx::TensorProto& proto, ir::DType dtype, int64_t count, int64_t bytes) {
  if (ir::IsNarrowDType(dtype)) bytes = PackedBytes(dtype, count);
  if (ir::PackedBits(dtype) == 4 || ir::PackedBits(dtype) == 2) count = bytes;  // int32_data: a packed byte each
  if (proto.has_raw_data()) {
    if (static_cast<int64_t>(proto.raw_data().size()) != bytes) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", proto.name(), "' has ", proto.raw_data().size(),
                                                     " bytes of raw data, its shape needs ", bytes));
    }
    return absl::OkStatus();
  }
  const int64_t got = TypedDataSize(proto, dtype);
  return got == count ? absl::OkStatus() : SizeMismatch(proto, got, count);
}

absl::Status FillData(const onnx::TensorProto& proto, ir::Tensor& t) {
  if (IsPacked(t.dtype())) {
    const int bits = ir::PackedBits(t.dtype());
    if (!proto.has_raw_data() && bits == 6) return CopyTyped(proto, proto.int32_data(), t);  // a code per entry
    // raw_data as it is; int32_data holds a packed byte per entry (4- and 2-bit types).
    std::string from_int32;
    if (!proto.has_raw_data()) {
      for (int32_t v : proto.int32_data()) from_int32.push_back(static_cast<char>(v & 0xFF));
    }
    const std::string& bytes = proto.has_raw_data() ? proto.raw_data() : from_int32;
    if (static_cast<int64_t>(bytes.size()) != PackedBytes(t.dtype(), t.num_elements())) {
      return SizeMismatch(proto, static_cast<int64_t>(bytes.size()), PackedBytes(t.dtype(), t.num_elements()));
    }
    Unpack(reinterpret_cast<const uint8_t*>(bytes.data()), bits, t.num_elements(), t.data<uint8_t>());
    return absl::OkStatus();
  }
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != t.byte_size()) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", proto.name(), "' has ", proto.raw_data().size(),
                                                     " bytes of raw data, its shape needs ", t.byte_size()));
    }
    std::memcpy(t.raw_data(), proto.raw_data().data(), t.byte_size());
    return absl::OkStatus();
  }
  switch (t.dtype()) {
    case ir::DType::kFloat32: return CopyTyped(proto, proto.float_data(), t);
    case ir::DType::kFloat64: return CopyTyped(proto, proto.double_data(), t);
    case ir::DType::kInt64: return CopyTyped(proto, proto.int64_data(), t);
    case ir::DType::kUint32:
    case ir::DType::kUint64: return CopyTyped(proto, proto.uint64_data(), t);
    default: return CopyTyped(proto, proto.int32_data(), t);  // int8/16/32, uint8/16, bool, float16
  }
}

// A string tensor from string_data (ONNX keeps strings nowhere else): the element count and the
// bytes (kStringElementBytes per string plus its characters) are checked before allocating.
absl::StatusOr<ir::Tensor> StringTensorFromProto(const onnx::TensorProto& proto, std::vector<int64_t> shape,
                                                 int64_t count, int64_t max_bytes) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL || proto.has_raw_data()) {
    return absl::InvalidArgumentError(
        absl::StrCat("string tensor '", proto.name(), "' must hold its strings in string_data"));
  }
  if (proto.string_data_size() != count) return SizeMismatch(proto, proto.string_data_size(), count);
  int64_t bytes = count * static_cast<int64_t>(ir::kStringElementBytes);
  for (const std::string& s : proto.string_data()) bytes += static_cast<int64_t>(s.size());
  if (bytes > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("string tensor '", proto.name(), "' of shape ",
                                                     ir::ShapeToString(shape), " takes ", bytes,
                                                     " bytes, more than the limit of ", max_bytes));
  }
  absl::StatusOr<ir::Tensor> tensor = ir::Tensor::Create(ir::DType::kString, std::move(shape));
  if (!tensor.ok()) return tensor.status();
  std::copy(proto.string_data().begin(), proto.string_data().end(), tensor->mutable_strings());
  return tensor;
}

}  // namespace

absl::StatusOr<ir::Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& model_dir,
                                           int64_t max_bytes) {
  const auto dtype = static_cast<ir::DType>(proto.data_type());
  if (!ir::IsTensorDType(dtype)) {
    return absl::UnimplementedError(
        absl::StrCat("tensor '", proto.name(), "' has unsupported dtype ", ir::DTypeName(dtype)));
  }
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  absl::StatusOr<int64_t> count = ir::CheckedElementCount(shape, dtype);
  if (!count.ok()) {
    return absl::Status(count.status().code(), absl::StrCat("tensor '", proto.name(), "': ", count.status().message()));
  }
  if (dtype == ir::DType::kString) return StringTensorFromProto(proto, std::move(shape), *count, max_bytes);
  const int64_t bytes = *count * static_cast<int64_t>(ir::DTypeSize(dtype));
  if (bytes > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("tensor '", proto.name(), "' of shape ", ir::ShapeToString(shape),
                                                     " needs ", bytes, " bytes, more than the limit of ", max_bytes));
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return ReadExternalData(proto, model_dir, dtype, std::move(shape),
                            IsPacked(dtype) ? PackedBytes(dtype, *count) : bytes);
  }
  absl::Status fits = InlineDataFits(proto, dtype, *count, bytes);
  if (!fits.ok()) return fits;
  absl::StatusOr<ir::Tensor> tensor = ir::Tensor::Create(dtype, std::move(shape));
  if (!tensor.ok()) {
    return absl::Status(tensor.status().code(),
                        absl::StrCat("tensor '", proto.name(), "': ", tensor.status().message()));
  }
  absl::Status filled = FillData(proto, *tensor);
  if (!filled.ok()) return filled;
  return tensor;
}

onnx::TensorProto TensorToProto(const ir::Tensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  if (const std::string* strings = tensor.strings()) {
    for (int64_t i = 0; i < tensor.num_elements(); ++i) proto.add_string_data(strings[i]);
    return proto;
  }
  if (IsPacked(tensor.dtype())) {
    proto.set_raw_data(Pack(tensor.data<uint8_t>(), ir::PackedBits(tensor.dtype()), tensor.num_elements()));
    return proto;
  }
  proto.set_raw_data(tensor.raw_data(), tensor.byte_size());
  return proto;
}

absl::StatusOr<ir::Tensor> ReadTensorProtoFile(const std::string& path, std::string* name) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&file)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a serialized TensorProto"));
  }
  if (name != nullptr) *name = proto.name();
  return TensorFromProto(proto, "");
}

absl::Status WriteTensorProtoFile(const ir::Tensor& tensor, const std::string& name, const std::string& path) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file || !TensorToProto(tensor, name).SerializeToOstream(&file)) {
    return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace importer
