// Device tensors: allocation, upload/download, layout conversion with the strided-copy kernel.
#include "runtime/device_tensor.h"

#include "absl/strings/str_cat.h"
#include "kernels/cuda/strided_copy.h"

namespace exec {

absl::Status CudaStatus(cudaError_t error, const char* call) {
  const absl::StatusCode code =
      error == cudaErrorMemoryAllocation ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal;
  return absl::Status(code, absl::StrCat(call, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")"));
}

std::optional<cudaPointerAttributes> PointerAttributes(const void* ptr) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  return attributes;
}

absl::Status CheckDevicePointer(const void* ptr, int device_id, const std::string& what) {
  if (ptr == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, " is a null pointer"));
  const std::optional<cudaPointerAttributes> attributes = PointerAttributes(ptr);
  if (!attributes) return absl::InvalidArgumentError(absl::StrCat(what, " is not a pointer CUDA knows"));
  if (attributes->type != cudaMemoryTypeDevice && attributes->type != cudaMemoryTypeManaged) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is host memory, not device memory"));
  }
  if (attributes->device != device_id) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is on CUDA device ", attributes->device, ", the session runs on device ", device_id));
  }
  return absl::OkStatus();
}

int64_t DeviceTensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> DeviceTensor::strides() const {
  std::vector<int64_t> s(dims.size(), 1);
  if (nhwc && dims.size() == 4) {
    const int64_t c = dims[1], h = dims[2], w = dims[3];
    return {h * w * c, 1, w * c, c};
  }
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

std::vector<int64_t> DeviceTensor::BroadcastStrides(const std::vector<int64_t>& out) const {
  std::vector<int64_t> result(out.size(), 0);
  const std::vector<int64_t> own = strides();
  const size_t offset = out.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) result[offset + i] = dims[i] == 1 ? 0 : own[i];
  return result;
}

namespace {
thread_local AllocationHook* current_hook = nullptr;
}  // namespace

ScopedAllocationHook::ScopedAllocationHook(AllocationHook* hook) : previous_(current_hook) { current_hook = hook; }
ScopedAllocationHook::~ScopedAllocationHook() { current_hook = previous_; }

absl::StatusOr<DeviceTensor> DeviceTensor::Allocate(ir::DType dtype, std::vector<int64_t> dims, bool nhwc,
                                                    cudaStream_t stream) {
  if (!ir::IsSupportedDType(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(ir::DTypeName(dtype), " tensors have no device storage"));
  }
  absl::StatusOr<int64_t> count = ir::CheckedElementCount(dims, dtype);
  if (!count.ok()) return count.status();
  DeviceTensor t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.nhwc = nhwc && t.dims.size() == 4;
  const size_t bytes = std::max<size_t>(t.bytes(), 16);
  if (current_hook != nullptr) {
    absl::StatusOr<std::shared_ptr<void>> buffer = current_hook->Allocate(bytes, stream);
    if (!buffer.ok()) return buffer.status();
    t.buffer = *std::move(buffer);
    return t;
  }
  void* ptr = nullptr;
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaMallocAsync(&ptr, bytes, stream));
  t.buffer = std::shared_ptr<void>(ptr, [stream](void* p) { cudaFreeAsync(p, stream); });
  return t;
}

absl::StatusOr<DeviceTensor> ToLayout(const DeviceTensor& t, bool nhwc, cudaStream_t stream) {
  nhwc = nhwc && t.dims.size() == 4;
  if (t.nhwc == nhwc || t.host_value != nullptr) return t;
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(t.dtype, t.dims, nhwc, stream);
  if (!out.ok()) return out.status();
  kernels::cuda::CopyShape shape;
  shape.rank = 4;
  const std::vector<int64_t> src = t.strides(), dst = out->strides();
  for (int d = 0; d < 4; ++d) {
    shape.dims[d] = t.dims[d];
    shape.src_strides[d] = src[d];
    shape.dst_strides[d] = dst[d];
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(
      kernels::cuda::StridedCopy(t.data(), out->data(), shape, static_cast<int>(ir::DTypeSize(t.dtype)), stream));
  return out;
}

absl::StatusOr<DeviceTensor> Upload(const ir::Tensor& host, bool nhwc, cudaStream_t stream) {
  if (StaysOnHost(host)) {
    DeviceTensor kept;
    kept.dtype = host.dtype();
    kept.host_value = std::make_shared<const ir::Tensor>(host);
    return kept;
  }
  absl::StatusOr<DeviceTensor> logical = DeviceTensor::Allocate(host.dtype(), host.shape(), false, stream);
  if (!logical.ok()) return logical.status();
  if (host.byte_size() > 0) {
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(logical->data(), host.raw_data(), host.byte_size(), cudaMemcpyHostToDevice, stream));
    // The host tensor may be freed by the caller right after: finish the copy first.
    ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  }
  return ToLayout(*logical, nhwc, stream);
}

absl::StatusOr<ir::Tensor> Download(const DeviceTensor& device, cudaStream_t stream) {
  if (device.host_value != nullptr) return *device.host_value;
  absl::StatusOr<DeviceTensor> logical = ToLayout(device, false, stream);
  if (!logical.ok()) return logical.status();
  absl::StatusOr<ir::Tensor> host = ir::Tensor::Create(device.dtype, device.dims);
  if (!host.ok()) return host.status();
  if (host->byte_size() > 0) {
    ONNXRUN_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(host->raw_data(), logical->data(), host->byte_size(), cudaMemcpyDeviceToHost, stream));
  }
  ONNXRUN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace exec
