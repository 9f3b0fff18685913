// Element types of tensors. Values match onnx.TensorProto.DataType so the importer converts by cast.
#ifndef ONNXRUN_IR_DTYPE_H_
#define ONNXRUN_IR_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace ir {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,  // elements are std::string (ir::Tensor::strings()); only ops that say so take them
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBFloat16 = 16,  // storage and Cast only
  // ONNX's narrow types (ir/narrow.h): one byte per element here, storage, Cast and Q/DQ only.
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
  kFloat6E2M3 = 27,
  kFloat6E3M2 = 28,
};

// What one string element counts against the byte limits (kMaxTensorBytes, the importer's limits):
// its std::string. The characters count on top where they are known (a TensorProto's string_data).
inline constexpr size_t kStringElementBytes = 32;

// Bytes per element of dense storage; 0 for kUndefined and kString (strings are not bytes: never
// memcpy them).
size_t DTypeSize(DType dtype);
// Bytes an element counts against size limits: DTypeSize, or kStringElementBytes for kString; 0
// for kUndefined.
size_t DTypeLimitSize(DType dtype);
// "float32", "int64", ...
std::string DTypeName(DType dtype);
// True for the dtypes of fixed-size elements that kernels compute on: everything but kUndefined
// and kString. Checks written with it reject strings, which is what ops that do not take string
// tensors want (see ops::OpDef::takes_strings).
bool IsSupportedDType(DType dtype);
// True for every dtype a tensor can hold: IsSupportedDType's and kString.
bool IsTensorDType(DType dtype);
bool IsFloatingPoint(DType dtype);

}  // namespace ir

#endif  // ONNXRUN_IR_DTYPE_H_
