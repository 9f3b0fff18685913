// The C API (include/onnxrun/onnxrun_c.h) over runtime::Session: handles wrap C++ objects, inputs
// are copied into ir::Tensors, outputs stay owned by their OnnxrunValues, and every absl::Status
// becomes an OnnxrunStatus with its code and message.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/tensor.h"
#include "onnxrun/onnxrun_c.h"
#include "runtime/session.h"

struct OnnxrunStatus {
  absl::Status status;
  std::string message;  // null-terminated for onnxrun_status_message
};
struct OnnxrunSession {
  std::unique_ptr<runtime::Session> session;
};
struct OnnxrunValues {
  std::vector<runtime::NamedTensor> tensors;
};

namespace {

// The C header numbers dtypes as ONNX does, which is ir::DType's numbering: casts between them are exact.
static_assert(
    ONNXRUN_FLOAT32 == static_cast<int>(ir::DType::kFloat32) && ONNXRUN_UINT8 == static_cast<int>(ir::DType::kUint8) &&
    ONNXRUN_INT8 == static_cast<int>(ir::DType::kInt8) && ONNXRUN_UINT16 == static_cast<int>(ir::DType::kUint16) &&
    ONNXRUN_INT16 == static_cast<int>(ir::DType::kInt16) && ONNXRUN_INT32 == static_cast<int>(ir::DType::kInt32) &&
    ONNXRUN_INT64 == static_cast<int>(ir::DType::kInt64) && ONNXRUN_BOOL == static_cast<int>(ir::DType::kBool) &&
    ONNXRUN_FLOAT16 == static_cast<int>(ir::DType::kFloat16) &&
    ONNXRUN_FLOAT64 == static_cast<int>(ir::DType::kFloat64) &&
    ONNXRUN_UINT32 == static_cast<int>(ir::DType::kUint32) && ONNXRUN_UINT64 == static_cast<int>(ir::DType::kUint64) &&
    ONNXRUN_BFLOAT16 == static_cast<int>(ir::DType::kBFloat16));

OnnxrunStatus* ToC(absl::Status status) {
  if (status.ok()) return nullptr;
  std::string message(status.message());
  return new OnnxrunStatus{std::move(status), std::move(message)};
}

absl::StatusOr<runtime::SessionOptions> ToOptions(const OnnxrunOptions* options) {
  runtime::SessionOptions out;
  if (options == nullptr) return out;
  switch (options->device) {
    case ONNXRUN_DEVICE_AUTO: out.device = runtime::Device::kAuto; break;
    case ONNXRUN_DEVICE_CPU: out.device = runtime::Device::kCpu; break;
    case ONNXRUN_DEVICE_CUDA: out.device = runtime::Device::kCuda; break;
    default: return absl::InvalidArgumentError(absl::StrCat("unknown device ", static_cast<int>(options->device)));
  }
  if (options->precision != nullptr) out.precision = options->precision;
  return out;
}

// A copy of the caller's tensor; an error for a null pointer, a bad dtype or dims.
absl::StatusOr<runtime::NamedTensor> ToNamedTensor(const OnnxrunTensor& in, size_t index) {
  const std::string where = absl::StrCat("input ", index, in.name != nullptr ? absl::StrCat(" '", in.name, "'") : "");
  if (in.name == nullptr) return absl::InvalidArgumentError(absl::StrCat(where, ": no name"));
  if (in.rank > 0 && in.dims == nullptr) return absl::InvalidArgumentError(absl::StrCat(where, ": dims is NULL"));
  const auto dtype = static_cast<ir::DType>(in.dtype);
  if (!ir::IsSupportedDType(dtype) || dtype == ir::DType::kString) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": unsupported dtype ", static_cast<int>(in.dtype)));
  }
  std::vector<int64_t> dims(in.dims, in.dims + in.rank);
  absl::StatusOr<ir::Tensor> tensor = ir::Tensor::Create(dtype, dims);
  if (!tensor.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", tensor.status().message()));
  if (tensor->byte_size() > 0) {
    if (in.data == nullptr) return absl::InvalidArgumentError(absl::StrCat(where, ": data is NULL"));
    std::memcpy(tensor->raw_data(), in.data, tensor->byte_size());
  }
  return runtime::NamedTensor{in.name, *std::move(tensor)};
}

const runtime::TensorInfo* InfoAt(const std::vector<runtime::TensorInfo>& infos, size_t i) {
  return i < infos.size() ? &infos[i] : nullptr;
}

}  // namespace

extern "C" {

int onnxrun_status_code(const OnnxrunStatus* status) {
  return status == nullptr ? 0 : static_cast<int>(status->status.code());
}

const char* onnxrun_status_message(const OnnxrunStatus* status) {
  return status == nullptr ? "" : status->message.c_str();
}

void onnxrun_status_free(OnnxrunStatus* status) { delete status; }

OnnxrunStatus* onnxrun_session_create(const char* model_path, const OnnxrunOptions* options, OnnxrunSession** session) {
  if (session == nullptr) return ToC(absl::InvalidArgumentError("session is NULL"));
  *session = nullptr;
  if (model_path == nullptr) return ToC(absl::InvalidArgumentError("model_path is NULL"));
  absl::StatusOr<runtime::SessionOptions> opts = ToOptions(options);
  if (!opts.ok()) return ToC(opts.status());
  absl::StatusOr<std::unique_ptr<runtime::Session>> created = runtime::Session::Create(model_path, *opts);
  if (!created.ok()) return ToC(created.status());
  *session = new OnnxrunSession{*std::move(created)};
  return nullptr;
}

void onnxrun_session_free(OnnxrunSession* session) { delete session; }

const char* onnxrun_session_device(const OnnxrunSession* session) {
  return session == nullptr ? "" : runtime::DeviceName(session->session->device());
}

size_t onnxrun_session_input_count(const OnnxrunSession* session) {
  return session == nullptr ? 0 : session->session->inputs().size();
}

size_t onnxrun_session_output_count(const OnnxrunSession* session) {
  return session == nullptr ? 0 : session->session->outputs().size();
}

const char* onnxrun_session_input_name(const OnnxrunSession* session, size_t i) {
  const runtime::TensorInfo* info = session == nullptr ? nullptr : InfoAt(session->session->inputs(), i);
  return info == nullptr ? nullptr : info->name.c_str();
}

const char* onnxrun_session_output_name(const OnnxrunSession* session, size_t i) {
  const runtime::TensorInfo* info = session == nullptr ? nullptr : InfoAt(session->session->outputs(), i);
  return info == nullptr ? nullptr : info->name.c_str();
}

OnnxrunStatus* onnxrun_session_run(const OnnxrunSession* session, const OnnxrunTensor* inputs, size_t input_count,
                                   OnnxrunValues** outputs) {
  if (outputs == nullptr) return ToC(absl::InvalidArgumentError("outputs is NULL"));
  *outputs = nullptr;
  if (session == nullptr) return ToC(absl::InvalidArgumentError("session is NULL"));
  if (input_count > 0 && inputs == nullptr) return ToC(absl::InvalidArgumentError("inputs is NULL"));
  std::vector<runtime::NamedTensor> named;
  for (size_t i = 0; i < input_count; ++i) {
    absl::StatusOr<runtime::NamedTensor> t = ToNamedTensor(inputs[i], i);
    if (!t.ok()) return ToC(t.status());
    named.push_back(*std::move(t));
  }
  absl::StatusOr<std::vector<runtime::NamedTensor>> results = session->session->Run(named);
  if (!results.ok()) return ToC(results.status());
  *outputs = new OnnxrunValues{*std::move(results)};
  return nullptr;
}

size_t onnxrun_values_count(const OnnxrunValues* values) { return values == nullptr ? 0 : values->tensors.size(); }

OnnxrunStatus* onnxrun_values_get(const OnnxrunValues* values, size_t i, OnnxrunTensor* tensor) {
  if (values == nullptr || tensor == nullptr) return ToC(absl::InvalidArgumentError("values or tensor is NULL"));
  if (i >= values->tensors.size()) {
    return ToC(absl::OutOfRangeError(absl::StrCat("output ", i, " of ", values->tensors.size())));
  }
  const runtime::NamedTensor& out = values->tensors[i];
  if (!out.tensor.is_dense() || out.tensor.dtype() == ir::DType::kString) {
    return ToC(absl::UnimplementedError(
        absl::StrCat("output '", out.name, "' is not a dense numeric tensor; the C API returns only those")));
  }
  *tensor = OnnxrunTensor{out.name.c_str(), static_cast<OnnxrunDType>(out.tensor.dtype()), out.tensor.shape().data(),
                          out.tensor.shape().size(), out.tensor.raw_data()};
  return nullptr;
}

void onnxrun_values_free(OnnxrunValues* values) { delete values; }

}  // extern "C"
