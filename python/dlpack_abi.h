// The DLPack tensor ABI (unversioned DLManagedTensor, as `__dlpack__()` returns by default), declared
// from the DLPack specification (https://dmlc.github.io/dlpack/latest/c_api.html) for the Python
// module's zero-copy exchange of device tensors. Layouts and numbering must match the spec.
#ifndef ONNXRUN_PYTHON_DLPACK_ABI_H_
#define ONNXRUN_PYTHON_DLPACK_ABI_H_

#include <cstdint>

namespace dlpack {

enum DeviceType : int32_t { kCpu = 1, kCuda = 2, kCudaHost = 3 };
enum TypeCode : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4, kBool = 6 };

struct Device {
  int32_t device_type;
  int32_t device_id;
};

struct DataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null for compact row-major
  uint64_t byte_offset;
};

struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

// Capsule names of the Python exchange protocol.
inline constexpr char kCapsuleName[] = "dltensor";
inline constexpr char kUsedCapsuleName[] = "used_dltensor";

}  // namespace dlpack

#endif  // ONNXRUN_PYTHON_DLPACK_ABI_H_
