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
  kString = 8,  // not supported by any kernel; named so errors can say so
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBFloat16 = 16,  // storage and Cast only
};

// Bytes per element; 0 for kUndefined and kString (unsupported storage).
size_t DTypeSize(DType dtype);
// "float32", "int64", ...
std::string DTypeName(DType dtype);
// True for the dtypes tensors can hold (everything but kUndefined and kString).
bool IsSupportedDType(DType dtype);
bool IsFloatingPoint(DType dtype);

}  // namespace ir

#endif  // ONNXRUN_IR_DTYPE_H_
