// DeviceTensor: a tensor in GPU memory with its logical dims and its physical layout (row-major in
// logical order, or NHWC for 4-D). The buffer is stream-ordered memory (cudaMallocAsync) freed on
// the same stream when the last DeviceTensor sharing it goes away.
#ifndef ONNXRUN_RUNTIME_DEVICE_TENSOR_H_
#define ONNXRUN_RUNTIME_DEVICE_TENSOR_H_

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "ir/tensor.h"

namespace exec {

// cudaError_t -> Status naming the call.
absl::Status CudaStatus(cudaError_t error, const char* call);
#define ONNXRUN_CUDA_RETURN_IF_ERROR(call)                              \
  do {                                                                  \
    if (cudaError_t onnxrun_err_ = (call); onnxrun_err_ != cudaSuccess) \
      return ::exec::CudaStatus(onnxrun_err_, #call);                   \
  } while (0)

// Where DeviceTensor::Allocate takes memory from on the thread that installed it
// (ScopedAllocationHook), instead of cudaMallocAsync: runtime/device_arena.h records a run's
// allocations and serves a captured run's from one planned arena.
class AllocationHook {
 public:
  virtual ~AllocationHook() = default;
  virtual absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes, cudaStream_t stream) = 0;
};

// Installs `hook` for this thread while it lives (and restores the one before).
class ScopedAllocationHook {
 public:
  explicit ScopedAllocationHook(AllocationHook* hook);
  ~ScopedAllocationHook();
  ScopedAllocationHook(const ScopedAllocationHook&) = delete;
  ScopedAllocationHook& operator=(const ScopedAllocationHook&) = delete;

 private:
  AllocationHook* previous_;
};

struct DeviceTensor {
  std::shared_ptr<void> buffer;
  ir::DType dtype = ir::DType::kUndefined;
  std::vector<int64_t> dims;  // logical order
  bool nhwc = false;          // 4-D stored channels-last
  // A sequence, an empty optional or a string tensor stays on the host (only host steps read such
  // values: StaysOnHost); the device fields are then unused and dtype is the element dtype.
  std::shared_ptr<const ir::Tensor> host_value;

  bool valid() const { return buffer != nullptr || host_value != nullptr || num_elements() == 0; }
  void* data() const { return buffer.get(); }
  int64_t num_elements() const;
  size_t bytes() const { return static_cast<size_t>(num_elements()) * ir::DTypeSize(dtype); }
  // Element strides of the stored layout, in logical dim order.
  std::vector<int64_t> strides() const;
  // Element strides for reading this tensor (in its stored layout) at each logical index of an
  // output with dims `out` under numpy broadcasting: 0 on broadcast dims.
  std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& out) const;

  // InvalidArgument for a dtype without device storage (kString).
  static absl::StatusOr<DeviceTensor> Allocate(ir::DType dtype, std::vector<int64_t> dims, bool nhwc,
                                               cudaStream_t stream);
};

// What CUDA knows of `ptr` (memory type, device), or nullopt when the call fails (its error cleared).
std::optional<cudaPointerAttributes> PointerAttributes(const void* ptr);
// OK when `ptr` is device (or managed) memory of CUDA device `device_id`; else InvalidArgument
// naming `what`.
absl::Status CheckDevicePointer(const void* ptr, int device_id, const std::string& what);

// Values the GPU backend keeps on the host: sequences, empty optionals and string tensors.
inline bool StaysOnHost(const ir::Tensor& t) { return !t.is_dense() || t.dtype() == ir::DType::kString; }

// Host tensor (logical order) -> device, stored NHWC when `nhwc` (4-D only). A value that
// StaysOnHost is kept there (host_value).
absl::StatusOr<DeviceTensor> Upload(const ir::Tensor& host, bool nhwc, cudaStream_t stream);
// Device -> host tensor in logical order. Synchronizes the stream.
absl::StatusOr<ir::Tensor> Download(const DeviceTensor& device, cudaStream_t stream);
// The same values stored in the other layout (or `t` itself when it already is).
absl::StatusOr<DeviceTensor> ToLayout(const DeviceTensor& t, bool nhwc, cudaStream_t stream);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_DEVICE_TENSOR_H_
