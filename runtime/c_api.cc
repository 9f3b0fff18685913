// The C API (include/onnxrun/onnxrun_c.h) over runtime::Session: handles wrap C++ objects, inputs
// are borrowed as ir::Tensors (host) or device buffers for the call, outputs stay owned by their
// OnnxrunValues, and every absl::Status becomes an OnnxrunStatus with its code and message.
#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/tensor.h"
#include "onnxrun/onnxrun_c.h"
#include "partitioner/explain.h"
#include "runtime/session.h"
#include "runtime/session_config.h"
#include "runtime/version.h"

struct OnnxrunStatus {
  absl::Status status;
  std::string message;  // null-terminated for onnxrun_status_message
};
// The C view of a TensorInfo, with the storage its pointers point into.
struct CTensorInfo {
  OnnxrunTensorInfo view;
  std::vector<int64_t> dims;
  std::vector<std::string> names;
  std::vector<const char*> name_ptrs;
};
struct OnnxrunSession {
  std::unique_ptr<runtime::Session> session;
  std::vector<std::unique_ptr<CTensorInfo>> inputs, outputs;
  std::string explain_json;
};
struct OnnxrunValues {
  std::vector<runtime::NamedTensor> tensors;          // host outputs
  std::vector<runtime::NamedDeviceBuffer> on_device;  // device outputs (run_device)
  // The C view of each string tensor among the host outputs (a map's keys too), by its elements.
  std::map<const std::string*, std::vector<const char*>> string_views;
  std::vector<bool> map_outputs;  // per host output: the model declares a sequence of maps
  cudaEvent_t written = nullptr;  // recorded after the device outputs
  ~OnnxrunValues() {
    if (written != nullptr) cudaEventDestroy(written);
  }
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
  out.gpu.device_id = options->device_id;
  return out;
}

std::unique_ptr<CTensorInfo> ToCInfo(const runtime::TensorInfo& info) {
  auto c = std::make_unique<CTensorInfo>();
  const ir::TensorType& type = info.type;
  const bool tensor = type.is_tensor() && (type.dtype == ir::DType::kString || ir::IsSupportedDType(type.dtype));
  if (type.shape) {
    for (const ir::Dim& dim : *type.shape) {
      c->dims.push_back(dim.known() ? dim.value : -1);
      c->names.push_back(dim.known() ? "" : dim.symbol);
    }
  }
  for (const std::string& name : c->names) c->name_ptrs.push_back(name.c_str());
  c->view = OnnxrunTensorInfo{info.name.c_str(), tensor ? static_cast<int>(type.dtype) : 0,
                              type.shape ? static_cast<int64_t>(type.shape->size()) : -1, c->dims.data(),
                              c->name_ptrs.data()};
  return c;
}

// The dtype and dims of a C tensor, checked; `where` names it in errors. Strings only on the host.
absl::Status CheckCTensor(const OnnxrunTensor& in, const std::string& where, std::vector<int64_t>& dims,
                          bool host = false) {
  if (in.rank > 0 && in.dims == nullptr) return absl::InvalidArgumentError(absl::StrCat(where, ": dims is NULL"));
  const auto dtype = static_cast<ir::DType>(in.dtype);
  if (!(ir::IsSupportedDType(dtype) || (host && dtype == ir::DType::kString))) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": unsupported dtype ", static_cast<int>(in.dtype)));
  }
  dims.assign(in.dims, in.dims + in.rank);
  absl::StatusOr<int64_t> count = ir::CheckedElementCount(dims, dtype);
  if (!count.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", count.status().message()));
  if (*count > 0 && in.data == nullptr) return absl::InvalidArgumentError(absl::StrCat(where, ": data is NULL"));
  return absl::OkStatus();
}

// "input 0 'image'": a C tensor in error messages (`what` is "input" or "output").
std::string TensorWhere(const char* what, const OnnxrunTensor& in, size_t index) {
  return absl::StrCat(what, " ", index, in.name != nullptr ? absl::StrCat(" '", in.name, "'") : "");
}

// The caller's device tensor as a buffer the session reads or writes (not owned).
absl::StatusOr<runtime::NamedDeviceBuffer> ToDeviceBuffer(const OnnxrunTensor& in, const std::string& where) {
  std::vector<int64_t> dims;
  absl::Status checked = CheckCTensor(in, where, dims);
  if (!checked.ok()) return checked;
  return runtime::NamedDeviceBuffer{in.name != nullptr ? in.name : "",
                                    {static_cast<ir::DType>(in.dtype), std::move(dims), const_cast<void*>(in.data)}};
}

absl::StatusOr<std::vector<runtime::NamedDeviceBuffer>> ToDeviceBuffers(const OnnxrunTensor* tensors, size_t count,
                                                                        const char* what) {
  std::vector<runtime::NamedDeviceBuffer> buffers;
  if (count > 0 && tensors == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, " is NULL"));
  for (size_t i = 0; i < count; ++i) {
    const std::string where = TensorWhere(what, tensors[i], i);
    if (std::string_view(what) == "input" && tensors[i].name == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": no name"));
    }
    absl::StatusOr<runtime::NamedDeviceBuffer> b = ToDeviceBuffer(tensors[i], where);
    if (!b.ok()) return b.status();
    buffers.push_back(*std::move(b));
  }
  return buffers;
}

// A C string tensor (data: an array of NUL-terminated strings) copied into an ir::Tensor.
absl::StatusOr<runtime::NamedTensor> ToStringTensor(const OnnxrunTensor& in, const std::string& where,
                                                    std::vector<int64_t> dims) {
  absl::StatusOr<ir::Tensor> tensor = ir::Tensor::Create(ir::DType::kString, std::move(dims));
  if (!tensor.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", tensor.status().message()));
  const char* const* strings = static_cast<const char* const*>(in.data);
  for (int64_t i = 0; i < tensor->num_elements(); ++i) {
    if (strings[i] == nullptr) return absl::InvalidArgumentError(absl::StrCat(where, ": string ", i, " is NULL"));
    tensor->mutable_strings()[i] = strings[i];
  }
  return runtime::NamedTensor{in.name, *std::move(tensor)};
}

// Pointers to the characters of every string tensor among `values`' host outputs and map keys, so
// that their views stay valid as long as the values.
void IndexStrings(OnnxrunValues& values) {
  auto index = [&](const ir::Tensor& t) {
    if (t.strings() == nullptr || values.string_views.count(t.strings())) return;
    std::vector<const char*>& view = values.string_views[t.strings()];
    for (int64_t i = 0; i < t.num_elements(); ++i) view.push_back(t.strings()[i].c_str());
  };
  for (const runtime::NamedTensor& out : values.tensors) {
    index(out.tensor);
    for (const ir::Tensor& element : out.tensor.elements()) index(element.map_keys());  // invalid unless a map
  }
}

// The C view of a dense host tensor (strings through their index).
OnnxrunTensor ToCTensor(const OnnxrunValues& values, const char* name, const ir::Tensor& t) {
  const void* data = t.raw_data();
  if (t.strings() != nullptr) {  // indexed when the values were made (IndexStrings)
    auto it = values.string_views.find(t.strings());
    data = it == values.string_views.end() ? nullptr : it->second.data();
  }
  return OnnxrunTensor{name, static_cast<OnnxrunDType>(t.dtype()), t.shape().data(), t.shape().size(), data};
}

// The caller's host tensor, borrowed for the call (not copied); an error for a null pointer, a bad
// dtype or dims.
absl::StatusOr<runtime::NamedTensor> ToNamedTensor(const OnnxrunTensor& in, size_t index) {
  const std::string where = TensorWhere("input", in, index);
  if (in.name == nullptr) return absl::InvalidArgumentError(absl::StrCat(where, ": no name"));
  std::vector<int64_t> dims;
  absl::Status checked = CheckCTensor(in, where, dims, /*host=*/true);
  if (!checked.ok()) return checked;
  if (in.dtype == ONNXRUN_STRING) return ToStringTensor(in, where, std::move(dims));
  std::shared_ptr<uint8_t[]> borrowed(static_cast<uint8_t*>(const_cast<void*>(in.data)), [](uint8_t*) {});
  absl::StatusOr<ir::Tensor> tensor =
      ir::Tensor::FromBuffer(static_cast<ir::DType>(in.dtype), std::move(dims), std::move(borrowed));
  if (!tensor.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", tensor.status().message()));
  return runtime::NamedTensor{in.name, *std::move(tensor)};
}

// Numeric map values as a float32, float64 or int64 map declares them (others unchanged).
ir::Tensor ToMapValues(const ir::Tensor& values, ir::DType declared) {
  const bool numeric = values.dtype() != ir::DType::kString && values.rank() == 1;
  const bool convertible =
      declared == ir::DType::kFloat32 || declared == ir::DType::kFloat64 || declared == ir::DType::kInt64;
  if (!numeric || !convertible || values.dtype() == declared) return values;
  ir::Tensor out = *ir::Tensor::Create(declared, values.shape());  // same count as a valid tensor
  for (int64_t i = 0; i < values.num_elements(); ++i) {
    if (declared == ir::DType::kFloat32) out.data<float>()[i] = static_cast<float>(values.GetAsDouble(i));
    if (declared == ir::DType::kFloat64) out.data<double>()[i] = values.GetAsDouble(i);
    if (declared == ir::DType::kInt64) out.data<int64_t>()[i] = values.GetAsInt64(i);
  }
  return out;
}

// A C map input, copied into a map value; numeric values converted to the value dtype the model
// declares for that input (when it declares a map).
absl::StatusOr<runtime::NamedTensor> ToNamedMap(const runtime::Session& session, const OnnxrunMap& in, size_t index) {
  const std::string where =
      absl::StrCat("map input ", index, in.name != nullptr ? absl::StrCat(" '", in.name, "'") : "");
  if (in.name == nullptr) return absl::InvalidArgumentError(absl::StrCat(where, ": no name"));
  OnnxrunTensor keys = in.keys, values = in.values;
  keys.name = values.name = in.name;
  absl::StatusOr<runtime::NamedTensor> k = ToNamedTensor(keys, index), v = ToNamedTensor(values, index);
  if (!k.ok() || !v.ok())
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", (k.ok() ? v : k).status().message()));
  ir::Tensor converted = v->tensor.Clone(), key_tensor = k->tensor.Clone();
  for (const runtime::TensorInfo& info : session.inputs()) {
    if (info.name != in.name || info.type.kind != ir::ValueKind::kMap) continue;
    converted = ToMapValues(converted, info.type.dtype);
    // An empty map's keys are of the declared type whatever the caller's empty array is.
    if (key_tensor.num_elements() == 0 && info.type.map_key == ir::DType::kString)
      key_tensor = ir::Tensor::FromStrings({});
    if (key_tensor.num_elements() == 0 && info.type.map_key == ir::DType::kInt64)
      key_tensor = ir::Tensor::FromInt64s({});
  }
  absl::StatusOr<ir::Tensor> map = ir::Tensor::Map(std::move(key_tensor), std::move(converted));
  if (!map.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", map.status().message()));
  return runtime::NamedTensor{in.name, *std::move(map)};
}

// Info i of `infos` ("input"/"output" in the out-of-range error).
OnnxrunStatus* InfoAt(const std::vector<std::unique_ptr<CTensorInfo>>& infos, const char* what, size_t i,
                      OnnxrunTensorInfo* info) {
  if (i >= infos.size()) return ToC(absl::OutOfRangeError(absl::StrCat(what, " ", i, " of ", infos.size())));
  *info = infos[i]->view;
  return nullptr;
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

const char* onnxrun_version(void) { return runtime::kOnnxrunVersion; }

OnnxrunStatus* onnxrun_session_create(const char* model_path, const OnnxrunOptions* options, OnnxrunSession** session) {
  return onnxrun_session_create_with_config(model_path, options, nullptr, nullptr, 0, session);
}

OnnxrunStatus* onnxrun_session_create_with_config(const char* model_path, const OnnxrunOptions* options,
                                                  const char* const* keys, const char* const* values, size_t count,
                                                  OnnxrunSession** session) {
  if (session == nullptr) return ToC(absl::InvalidArgumentError("session is NULL"));
  *session = nullptr;
  if (model_path == nullptr) return ToC(absl::InvalidArgumentError("model_path is NULL"));
  if (count > 0 && (keys == nullptr || values == nullptr))
    return ToC(absl::InvalidArgumentError("keys or values is NULL"));
  absl::StatusOr<runtime::SessionOptions> opts = ToOptions(options);
  if (!opts.ok()) return ToC(opts.status());
  for (size_t i = 0; i < count; ++i) {
    if (keys[i] == nullptr || values[i] == nullptr)
      return ToC(absl::InvalidArgumentError("a config key or value is NULL"));
    absl::Status applied = runtime::ApplySessionConfig(keys[i], values[i], *opts);
    if (!applied.ok()) return ToC(applied);
  }
  absl::StatusOr<std::unique_ptr<runtime::Session>> created = runtime::Session::Create(model_path, *opts);
  if (!created.ok()) return ToC(created.status());
  auto made = std::make_unique<OnnxrunSession>();
  made->session = *std::move(created);
  for (const runtime::TensorInfo& info : made->session->inputs()) made->inputs.push_back(ToCInfo(info));
  for (const runtime::TensorInfo& info : made->session->outputs()) made->outputs.push_back(ToCInfo(info));
  made->explain_json = partitioner::ExplainJson(made->session->plan());
  *session = made.release();
  return nullptr;
}

OnnxrunStatus* onnxrun_session_input_info(const OnnxrunSession* session, size_t i, OnnxrunTensorInfo* info) {
  if (session == nullptr || info == nullptr) return ToC(absl::InvalidArgumentError("session or info is NULL"));
  return InfoAt(session->inputs, "input", i, info);
}

OnnxrunStatus* onnxrun_session_output_info(const OnnxrunSession* session, size_t i, OnnxrunTensorInfo* info) {
  if (session == nullptr || info == nullptr) return ToC(absl::InvalidArgumentError("session or info is NULL"));
  return InfoAt(session->outputs, "output", i, info);
}

const char* onnxrun_session_explain_json(const OnnxrunSession* session) {
  return session == nullptr ? "" : session->explain_json.c_str();
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
  return onnxrun_session_run_with_maps(session, inputs, input_count, nullptr, 0, outputs);
}

OnnxrunStatus* onnxrun_session_run_with_maps(const OnnxrunSession* session, const OnnxrunTensor* inputs,
                                             size_t input_count, const OnnxrunMap* maps, size_t map_count,
                                             OnnxrunValues** outputs) {
  if (outputs == nullptr) return ToC(absl::InvalidArgumentError("outputs is NULL"));
  *outputs = nullptr;
  if (session == nullptr) return ToC(absl::InvalidArgumentError("session is NULL"));
  if (input_count > 0 && inputs == nullptr) return ToC(absl::InvalidArgumentError("inputs is NULL"));
  if (map_count > 0 && maps == nullptr) return ToC(absl::InvalidArgumentError("maps is NULL"));
  std::vector<runtime::NamedTensor> named;
  for (size_t i = 0; i < input_count; ++i) {
    absl::StatusOr<runtime::NamedTensor> t = ToNamedTensor(inputs[i], i);
    if (!t.ok()) return ToC(t.status());
    named.push_back(*std::move(t));
  }
  for (size_t i = 0; i < map_count; ++i) {
    absl::StatusOr<runtime::NamedTensor> m = ToNamedMap(*session->session, maps[i], i);
    if (!m.ok()) return ToC(m.status());
    named.push_back(*std::move(m));
  }
  absl::StatusOr<std::vector<runtime::NamedTensor>> results = session->session->Run(named);
  if (!results.ok()) return ToC(results.status());
  for (runtime::NamedTensor& out : *results) {  // an output that is an input would borrow the caller's memory
    for (const runtime::NamedTensor& in : named) {
      if (out.tensor.is_dense() && in.tensor.byte_size() > 0 && out.tensor.raw_data() == in.tensor.raw_data()) {
        out.tensor = out.tensor.Clone();
        break;
      }
    }
  }
  auto values = std::make_unique<OnnxrunValues>();
  values->tensors = *std::move(results);
  for (const runtime::TensorInfo& info : session->session->outputs()) {
    values->map_outputs.push_back(info.type.map_key != ir::DType::kUndefined);
  }
  IndexStrings(*values);
  *outputs = values.release();
  return nullptr;
}

OnnxrunStatus* onnxrun_session_run_device(const OnnxrunSession* session, const OnnxrunTensor* inputs,
                                          size_t input_count, void* cuda_stream, OnnxrunValues** outputs) {
  if (outputs == nullptr) return ToC(absl::InvalidArgumentError("outputs is NULL"));
  *outputs = nullptr;
  if (session == nullptr) return ToC(absl::InvalidArgumentError("session is NULL"));
  absl::StatusOr<std::vector<runtime::NamedDeviceBuffer>> named = ToDeviceBuffers(inputs, input_count, "input");
  if (!named.ok()) return ToC(named.status());
  auto stream = static_cast<cudaStream_t>(cuda_stream);
  absl::StatusOr<std::vector<runtime::NamedDeviceBuffer>> results = session->session->RunOnDevice(*named, stream);
  if (!results.ok()) return ToC(results.status());
  auto values = std::make_unique<OnnxrunValues>();
  values->on_device = *std::move(results);
  if (cudaEventCreateWithFlags(&values->written, cudaEventDisableTiming) != cudaSuccess ||
      cudaEventRecord(values->written, stream) != cudaSuccess) {
    return ToC(absl::InternalError("cannot record the outputs' CUDA event"));
  }
  *outputs = values.release();
  return nullptr;
}

OnnxrunStatus* onnxrun_session_run_device_into(const OnnxrunSession* session, const OnnxrunTensor* inputs,
                                               size_t input_count, const OnnxrunTensor* outputs, size_t output_count,
                                               void* cuda_stream) {
  if (session == nullptr) return ToC(absl::InvalidArgumentError("session is NULL"));
  absl::StatusOr<std::vector<runtime::NamedDeviceBuffer>> named = ToDeviceBuffers(inputs, input_count, "input");
  if (!named.ok()) return ToC(named.status());
  absl::StatusOr<std::vector<runtime::NamedDeviceBuffer>> into = ToDeviceBuffers(outputs, output_count, "output");
  if (!into.ok()) return ToC(into.status());
  if (into->empty())
    return ToC(absl::InvalidArgumentError("no output buffers given (onnxrun_session_run_device allocates them)"));
  return ToC(session->session->RunOnDevice(*named, static_cast<cudaStream_t>(cuda_stream), *std::move(into)).status());
}

int onnxrun_values_on_device(const OnnxrunValues* values) {
  return values != nullptr && !values->on_device.empty() ? 1 : 0;
}

OnnxrunStatus* onnxrun_values_ready_on(const OnnxrunValues* values, void* cuda_stream) {
  if (values == nullptr) return ToC(absl::InvalidArgumentError("values is NULL"));
  if (values->written == nullptr) return nullptr;  // host values: ready already
  const cudaError_t error = cudaStreamWaitEvent(static_cast<cudaStream_t>(cuda_stream), values->written, 0);
  return error == cudaSuccess ? nullptr : ToC(exec::CudaStatus(error, "cudaStreamWaitEvent"));
}

size_t onnxrun_values_count(const OnnxrunValues* values) {
  return values == nullptr ? 0 : values->tensors.size() + values->on_device.size();
}

OnnxrunStatus* onnxrun_values_get(const OnnxrunValues* values, size_t i, OnnxrunTensor* tensor) {
  if (values == nullptr || tensor == nullptr) return ToC(absl::InvalidArgumentError("values or tensor is NULL"));
  if (i >= onnxrun_values_count(values)) {
    return ToC(absl::OutOfRangeError(absl::StrCat("output ", i, " of ", onnxrun_values_count(values))));
  }
  if (!values->on_device.empty()) {
    const runtime::NamedDeviceBuffer& out = values->on_device[i];
    *tensor = OnnxrunTensor{out.name.c_str(), static_cast<OnnxrunDType>(out.buffer.dtype), out.buffer.dims.data(),
                            out.buffer.dims.size(), out.buffer.data};
    return nullptr;
  }
  const runtime::NamedTensor& out = values->tensors[i];
  if (!out.tensor.is_dense()) {
    return ToC(absl::UnimplementedError(absl::StrCat("output '", out.name, "' is ", out.tensor.Describe(),
                                                     ", not a tensor (onnxrun_values_kind says which)")));
  }
  *tensor = ToCTensor(*values, out.name.c_str(), out.tensor);
  return nullptr;
}

OnnxrunValueKind onnxrun_values_kind(const OnnxrunValues* values, size_t i) {
  if (values == nullptr || i >= onnxrun_values_count(values)) return ONNXRUN_VALUE_OTHER;
  if (!values->on_device.empty()) return ONNXRUN_VALUE_TENSOR;
  const ir::Tensor& t = values->tensors[i].tensor;
  if (t.is_dense()) return ONNXRUN_VALUE_TENSOR;
  const bool declared_maps = i < values->map_outputs.size() && values->map_outputs[i];
  return t.is_map_sequence() || (t.is_sequence() && t.elements().empty() && declared_maps) ? ONNXRUN_VALUE_MAPS
                                                                                           : ONNXRUN_VALUE_OTHER;
}

OnnxrunStatus* onnxrun_values_map_count(const OnnxrunValues* values, size_t i, size_t* count) {
  if (values == nullptr || count == nullptr) return ToC(absl::InvalidArgumentError("values or count is NULL"));
  if (onnxrun_values_kind(values, i) != ONNXRUN_VALUE_MAPS) {
    return ToC(absl::InvalidArgumentError(absl::StrCat("output ", i, " is not a sequence of maps")));
  }
  *count = values->tensors[i].tensor.elements().size();
  return nullptr;
}

OnnxrunStatus* onnxrun_values_get_map(const OnnxrunValues* values, size_t i, size_t j, OnnxrunTensor* keys,
                                      OnnxrunTensor* map_values) {
  size_t count = 0;
  if (keys == nullptr || map_values == nullptr) return ToC(absl::InvalidArgumentError("keys or map_values is NULL"));
  if (OnnxrunStatus* status = onnxrun_values_map_count(values, i, &count)) return status;
  if (j >= count) return ToC(absl::OutOfRangeError(absl::StrCat("map ", j, " of ", count)));
  const runtime::NamedTensor& out = values->tensors[i];
  const ir::Tensor& map = out.tensor.elements()[j];
  *keys = ToCTensor(*values, out.name.c_str(), map.map_keys());
  *map_values = ToCTensor(*values, out.name.c_str(), map.map_values());
  return nullptr;
}

void onnxrun_values_free(OnnxrunValues* values) { delete values; }

}  // extern "C"
