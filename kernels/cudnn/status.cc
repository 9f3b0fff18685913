// kernels/cudnn/status.cc: cudnnStatus_t / cudaError_t → absl::Status.
#include "kernels/cudnn/status.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace cudnn {
namespace {

std::string LastCudnnMessage() {
  char buffer[1024] = {0};
  cudnnGetLastErrorString(buffer, sizeof(buffer));
  return std::string(buffer);
}

}  // namespace

absl::StatusCode CodeOf(cudnnStatus_t status) {
  const int code = static_cast<int>(status);
  if (code == 0) return absl::StatusCode::kOk;
  if (status == CUDNN_STATUS_NOT_INITIALIZED) return absl::StatusCode::kFailedPrecondition;
  if (status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
      status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED) {
    return absl::StatusCode::kResourceExhausted;
  }
  if (code >= 2000 && code < 3000) return absl::StatusCode::kInvalidArgument;
  if (code >= 3000 && code < 4000) return absl::StatusCode::kUnimplemented;
  return absl::StatusCode::kInternal;
}

absl::Status ToStatus(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  std::string message = absl::StrCat(call, " failed: ", cudnnGetErrorString(status), " (", static_cast<int>(status),
                                     ") at ", file, ":", line);
  const std::string detail = LastCudnnMessage();
  if (!detail.empty()) absl::StrAppend(&message, "; cuDNN: ", detail);
  return absl::Status(CodeOf(status), message);
}

absl::Status ToStatus(cudaError_t error, const char* call, const char* file, int line) {
  if (error == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();  // clear a non-sticky error so later calls are not blamed for it
  const absl::StatusCode code =
      (error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver || error == cudaErrorInitializationError)
          ? absl::StatusCode::kFailedPrecondition
          : (error == cudaErrorMemoryAllocation ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal);
  return absl::Status(code, absl::StrCat(call, " failed: ", cudaGetErrorName(error), " (", cudaGetErrorString(error),
                                         ") at ", file, ":", line));
}

}  // namespace cudnn
