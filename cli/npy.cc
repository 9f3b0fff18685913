// .npy parsing: magic, header dict (descr, fortran_order, shape), raw data.
#include "cli/npy.h"

#include <cstring>
#include <fstream>
#include <map>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cli {
namespace {

absl::StatusOr<ir::DType> DTypeFromDescr(const std::string& descr) {
  static const auto* table = new std::map<std::string, ir::DType>{
      {"<f4", ir::DType::kFloat32}, {"<f8", ir::DType::kFloat64}, {"<f2", ir::DType::kFloat16},
      {"<i8", ir::DType::kInt64},   {"<i4", ir::DType::kInt32},   {"<i2", ir::DType::kInt16},
      {"|i1", ir::DType::kInt8},    {"|u1", ir::DType::kUint8},   {"<u2", ir::DType::kUint16},
      {"<u4", ir::DType::kUint32},  {"<u8", ir::DType::kUint64},  {"|b1", ir::DType::kBool}};
  auto it = table->find(descr);
  if (it == table->end()) return absl::UnimplementedError(absl::StrCat("unsupported .npy dtype '", descr, "'"));
  return it->second;
}

}  // namespace

absl::StatusOr<ir::Tensor> ReadNpy(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  char magic[8];
  if (!file.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a .npy file"));
  }
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint8_t b[2];
    file.read(reinterpret_cast<char*>(b), 2);
    header_len = b[0] | (b[1] << 8);
  } else {
    uint8_t b[4];
    file.read(reinterpret_cast<char*>(b), 4);
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  }
  if (!file || header_len > (1u << 20))
    return absl::InvalidArgumentError(absl::StrCat("'", path, "': bad .npy header"));
  std::string header(header_len, '\0');
  file.read(header.data(), header_len);
  std::smatch descr, order, shape;
  if (!std::regex_search(header, descr, std::regex("'descr':\\s*'([^']+)'")) ||
      !std::regex_search(header, order, std::regex("'fortran_order':\\s*(True|False)")) ||
      !std::regex_search(header, shape, std::regex("'shape':\\s*\\(([^)]*)\\)"))) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "': cannot parse .npy header"));
  }
  if (order[1] == "True") return absl::UnimplementedError(absl::StrCat("'", path, "': Fortran order"));
  absl::StatusOr<ir::DType> dtype = DTypeFromDescr(descr[1]);
  if (!dtype.ok()) return dtype.status();
  std::vector<int64_t> dims;
  for (absl::string_view part : absl::StrSplit(std::string(shape[1]), ',', absl::SkipWhitespace())) {
    int64_t d;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &d)) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "': bad shape in .npy header"));
    }
    dims.push_back(d);
  }
  absl::StatusOr<ir::Tensor> tensor = ir::Tensor::Create(*dtype, dims);
  if (!tensor.ok()) return tensor.status();
  if (!file.read(static_cast<char*>(tensor->raw_data()), static_cast<std::streamsize>(tensor->byte_size()))) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "': data shorter than its shape"));
  }
  return tensor;
}

}  // namespace cli
