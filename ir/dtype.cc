// Element type names and sizes.
#include "ir/dtype.h"

#include <iterator>

#include "ir/narrow.h"

namespace ir {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kUint8: return 1;
    case DType::kInt8: return 1;
    case DType::kUint16: return 2;
    case DType::kInt16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kFloat16: return 2;
    case DType::kFloat64: return 8;
    case DType::kUint32: return 4;
    case DType::kUint64: return 8;
    case DType::kBFloat16: return 2;
    default: return IsNarrowDType(dtype) ? 1 : 0;  // narrow types: one byte per element (ir/narrow.h)
  }
}

std::string DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kUint8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUint16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kString: return "string";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kFloat64: return "float64";
    case DType::kUint32: return "uint32";
    case DType::kUint64: return "uint64";
    case DType::kBFloat16: return "bfloat16";
    default: break;
  }
  // ONNX's narrow types (opsets 19-28), named so that errors say which one is not supported.
  static const char* const kNarrow[] = {"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
                                        "uint4",        "int4",           "float4e2m1", "float8e8m0",
                                        "uint2",        "int2",           "float6e2m3", "float6e3m2"};
  const int code = static_cast<int>(dtype);
  if (code >= 17 && code < 17 + static_cast<int>(std::size(kNarrow))) return kNarrow[code - 17];
  return "dtype(" + std::to_string(code) + ")";
}

size_t DTypeLimitSize(DType dtype) { return dtype == DType::kString ? kStringElementBytes : DTypeSize(dtype); }

bool IsSupportedDType(DType dtype) { return DTypeSize(dtype) != 0; }

bool IsTensorDType(DType dtype) { return IsSupportedDType(dtype) || dtype == DType::kString; }

bool IsFloatingPoint(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kFloat64 || dtype == DType::kBFloat16;
}

}  // namespace ir
