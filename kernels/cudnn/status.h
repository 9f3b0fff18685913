// kernels/cudnn/status.h: the one place where cudnnStatus_t and cudaError_t become absl::Status.
// The Status names the call text, file:line and, for cuDNN, cudnnGetLastErrorString's message.
// Status codes: NOT_INITIALIZED and no device → kFailedPrecondition; BAD_PARAM* → kInvalidArgument;
// NOT_SUPPORTED* → kUnimplemented; allocation failures → kResourceExhausted; the rest → kInternal.
#ifndef ONNXRUN_KERNELS_CUDNN_STATUS_H_
#define ONNXRUN_KERNELS_CUDNN_STATUS_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <utility>

#include "absl/status/status.h"

namespace cudnn {

// OK for CUDNN_STATUS_SUCCESS; otherwise a Status naming `call` at `file`:`line`.
absl::Status ToStatus(cudnnStatus_t status, const char* call, const char* file, int line);
// OK for cudaSuccess; otherwise a Status naming `call` at `file`:`line` (clears the sticky error).
absl::Status ToStatus(cudaError_t error, const char* call, const char* file, int line);

// The StatusCode a cuDNN status maps to (exposed for tests and callers that branch on it).
absl::StatusCode CodeOf(cudnnStatus_t status);

}  // namespace cudnn

// Evaluates a cuDNN or CUDA runtime call; returns its Status from the enclosing function on
// failure.
#define CUDNN_RETURN_IF_ERROR(call)                                                      \
  do {                                                                                   \
    ::absl::Status _cudnn_status = ::cudnn::ToStatus((call), #call, __FILE__, __LINE__); \
    if (!_cudnn_status.ok()) return _cudnn_status;                                       \
  } while (0)

// Generic helpers for absl::Status / absl::StatusOr inside this package.
#define CUDNN_STATUS_CONCAT_INNER(a, b) a##b
#define CUDNN_STATUS_CONCAT(a, b) CUDNN_STATUS_CONCAT_INNER(a, b)

#define CUDNN_RETURN_IF_NOT_OK(expr)       \
  do {                                     \
    ::absl::Status _cudnn_st = (expr);     \
    if (!_cudnn_st.ok()) return _cudnn_st; \
  } while (0)

#define CUDNN_ASSIGN_OR_RETURN(lhs, expr) \
  CUDNN_ASSIGN_OR_RETURN_IMPL(CUDNN_STATUS_CONCAT(_cudnn_or_, __LINE__), lhs, expr)
#define CUDNN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(*tmp)

#endif  // ONNXRUN_KERNELS_CUDNN_STATUS_H_
