// The free functions and value types around CudaExecutor (cuda_executor.h): whether CUDA is usable,
// which ops have own kernels, the caller's device buffers, in-place views, a matmul step's note.
#ifndef ONNXRUN_RUNTIME_CUDA_EXECUTOR_TYPES_H_
#define ONNXRUN_RUNTIME_CUDA_EXECUTOR_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/tensor.h"
#include "kernels/cublas/lt_matmul.h"
#include "runtime/device_tensor.h"
#include "runtime/matmul_epilogue_form.h"
#include "runtime/strided_view.h"

namespace exec {

// "" when a CUDA device is usable, else why not (no driver, no device, ...).
std::string CudaUnavailableReason();

// Whether Kernel steps of this op type have an own CUDA kernel for some of its forms (pointwise ops,
// Concat/Pad, the device runners); other forms and other ops run their host reference kernel.
bool HasOwnCudaKernel(std::string_view op_type);

// A dense, row-major tensor in device memory: the caller's (data only; onnxrun never frees it), or
// one onnxrun allocated (owner set; freed when the last copy of owner goes).
struct DeviceBuffer {
  ir::DType dtype = ir::DType::kUndefined;
  std::vector<int64_t> dims;
  void* data = nullptr;
  std::shared_ptr<void> owner;
  size_t bytes() const;
};

// A value read in place from another's buffer (runtime/cuda_views.cc): `base` is dense, in logical order.
struct ValueView {
  DeviceTensor base;
  StridedView view;
};

// The step note of a matmul run as `lt` + the own epilogue kernel for what `form` has left.
std::string MatmulEpilogueNote(const kernels::cublas::LtMatmulShape& lt, const MatmulEpilogueForm& form);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CUDA_EXECUTOR_TYPES_H_
