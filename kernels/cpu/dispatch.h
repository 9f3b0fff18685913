// Type dispatch for kernels: call a generic lambda with a value of the C++ element type of a dtype.
//   return DispatchNumeric(t.dtype(), [&](auto tag) { using T = decltype(tag); ... });
// ir::Half and ir::BFloat16 convert to and from float, so templated float code works on 16-bit storage.
#ifndef ONNXRUN_KERNELS_CPU_DISPATCH_H_
#define ONNXRUN_KERNELS_CPU_DISPATCH_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/dtype.h"
#include "ir/half.h"

namespace kernels::cpu {

// float32, float64, float16, bfloat16.
template <typename Fn>
absl::Status DispatchFloat(ir::DType dtype, Fn&& fn) {
  switch (dtype) {
    case ir::DType::kFloat32: return fn(float{});
    case ir::DType::kFloat64: return fn(double{});
    case ir::DType::kFloat16: return fn(ir::Half{});
    case ir::DType::kBFloat16: return fn(ir::BFloat16{});
    default:
      return absl::UnimplementedError(
          absl::StrCat("dtype ", ir::DTypeName(dtype), " not supported (floating point only)"));
  }
}

// Every numeric dtype (floating point and integers); bool is handled as uint8_t.
template <typename Fn>
absl::Status DispatchNumeric(ir::DType dtype, Fn&& fn) {
  switch (dtype) {
    case ir::DType::kFloat32: return fn(float{});
    case ir::DType::kFloat64: return fn(double{});
    case ir::DType::kFloat16: return fn(ir::Half{});
    case ir::DType::kBFloat16: return fn(ir::BFloat16{});
    case ir::DType::kInt8: return fn(int8_t{});
    case ir::DType::kUint8: return fn(uint8_t{});
    case ir::DType::kInt16: return fn(int16_t{});
    case ir::DType::kUint16: return fn(uint16_t{});
    case ir::DType::kInt32: return fn(int32_t{});
    case ir::DType::kUint32: return fn(uint32_t{});
    case ir::DType::kInt64: return fn(int64_t{});
    case ir::DType::kUint64: return fn(uint64_t{});
    case ir::DType::kBool: return fn(uint8_t{});
    default: return absl::UnimplementedError(absl::StrCat("dtype ", ir::DTypeName(dtype), " not supported"));
  }
}

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_DISPATCH_H_
