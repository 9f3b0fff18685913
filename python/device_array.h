// Device tensors across the Python boundary without copies: inputs from any object with
// __dlpack__ (torch, CuPy, JAX) or __cuda_array_interface__, and onnxrun.DeviceArray, the type of
// a GPU run's outputs, which torch.from_dlpack / cupy.from_dlpack (or __cuda_array_interface__)
// take without copying.
#ifndef ONNXRUN_PYTHON_DEVICE_ARRAY_H_
#define ONNXRUN_PYTHON_DEVICE_ARRAY_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "python/module_util.h"

namespace onnxrun_py {

// Whether `value` is a tensor in CUDA device memory (DLPack device type CUDA, or
// __cuda_array_interface__ without __dlpack__).
bool IsCudaTensor(const pybind11::handle& value);

// A borrowed device input: the C view, the storage its dims point into, and the Python object
// (a DLPack capsule or the tensor) that keeps the memory alive.
struct DeviceInput {
  std::string name;
  std::vector<int64_t> dims;
  OnnxrunTensor view{};
  pybind11::object keep;
};
// `value` as a device input on CUDA device `device_id`, made ready on `stream` (0: the legacy
// default stream) through the DLPack protocol's stream argument. Error for other devices,
// non-contiguous strides or unsupported dtypes.
void ToDeviceInput(const std::string& name, const pybind11::handle& value, int device_id, int64_t stream,
                   DeviceInput& input);

// One output of onnxrun_session_run_device.
class DeviceArray {
 public:
  DeviceArray(SharedValues values, size_t index, int device_id, int64_t stream, pybind11::object inputs)
      : inputs_(std::move(inputs)), values_(std::move(values)), index_(index), device_id_(device_id), stream_(stream) {}
  pybind11::tuple shape() const;
  std::string dtype() const;
  pybind11::dict CudaArrayInterface() const;
  pybind11::tuple DlpackDevice() const;
  // A DLPack capsule viewing the output; `stream` (the consumer's) waits for it to be written.
  pybind11::object Dlpack(const pybind11::object& stream) const;
  static void Register(pybind11::module_& m);

 private:
  OnnxrunTensor View() const;
  // The run's inputs, alive while outputs are; declared first so they go last, after values_
  // (whose free synchronises the device).
  pybind11::object inputs_;
  SharedValues values_;
  size_t index_;
  int device_id_;
  int64_t stream_;  // where it was written (0: legacy default)
};

}  // namespace onnxrun_py

#endif  // ONNXRUN_PYTHON_DEVICE_ARRAY_H_
