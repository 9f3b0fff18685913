// The free functions and value types around CudaExecutor (cuda_executor.h): whether CUDA is usable,
// which ops have own kernels, the caller's device buffers, in-place views, folded shape values, the
// scaled-conv decisions, squeeze-excite gates joined to their Mul, a matmul step's note.
#ifndef ONNXRUN_RUNTIME_CUDA_EXECUTOR_TYPES_H_
#define ONNXRUN_RUNTIME_CUDA_EXECUTOR_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/tensor.h"
#include "kernels/cublas/lt_matmul.h"
#include "kernels/cuda/squeeze_excite.h"
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

// Per input dims: the shape computations folded for them (shape_folding.h), host and device.
struct FoldedValues {
  std::map<ir::ValueId, ir::Tensor> host;
  std::map<ir::ValueId, DeviceTensor> device;
};

// A conv step's decision between its gate's Mul + the conv and the folded form (cuda_steps_scaled_conv.cc).
struct ScaledConvEntry {
  bool decided = false;
  std::string note;
  std::shared_ptr<const kernels::cublas::LtMatmul> lt;  // set when the folded form won
};

// Squeeze-excite gates joined to the Mul reading them (cuda_steps_joined_gate.cc): per MLP step the
// Mul step, per Mul step the MLP step, and this run's gates left for their Mul to compute.
struct JoinedGates {
  struct Deferred {
    kernels::cuda::SqueezeExciteParams params;  // points into `input` (or its channel sums)
    DeviceTensor input;                         // the pooled values or the channel sums, held alive
    const void* x = nullptr;                    // the pooled values (null with channel sums)
    DeviceTensor gate;                          // the gate's dtype, dims and layout (no data)
    size_t mlp_step = 0;
  };
  std::vector<std::optional<size_t>> mul_of, mlp_of;
  std::map<ir::ValueId, Deferred> deferred;  // by gate value (mu_ held)
};

// The step note of a matmul run as `lt` + the own epilogue kernel for what `form` has left.
std::string MatmulEpilogueNote(const kernels::cublas::LtMatmulShape& lt, const MatmulEpilogueForm& form);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CUDA_EXECUTOR_TYPES_H_
