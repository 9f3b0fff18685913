// Session: import -> partition (passes + cover) -> executor, and the input checks Run does before executing.
#include "runtime/session.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "partitioner/partition.h"
#include "runtime/cpu_executor.h"

namespace runtime {
namespace {

absl::Status CheckDims(const TensorInfo& info, const std::vector<int64_t>& dims,
                       std::map<std::string, int64_t>& symbols) {
  if (!info.type.shape) return absl::OkStatus();
  const ir::Shape& want = *info.type.shape;
  auto mismatch = [&] {
    return absl::InvalidArgumentError(absl::StrCat("input '", info.name, "' has shape ", ir::ShapeToString(dims),
                                                   ", the model expects ", ir::ShapeToString(want)));
  };
  if (dims.size() != want.size()) return mismatch();
  for (size_t i = 0; i < want.size(); ++i) {
    const int64_t got = dims[i];
    if (got < 0) return mismatch();
    if (want[i].known() && want[i].value != got) return mismatch();
    if (!want[i].known() && !want[i].symbol.empty()) {
      auto [it, inserted] = symbols.emplace(want[i].symbol, got);
      if (!inserted && it->second != got) {
        return absl::InvalidArgumentError(absl::StrCat("input '", info.name, "' dim ", i, " ('", want[i].symbol,
                                                       "') is ", got, ", but an earlier dim named '", want[i].symbol,
                                                       "' is ", it->second, " (dims of one name must be equal)"));
      }
    }
  }
  return absl::OkStatus();
}

// The plan's input dtypes where a pass changed them (half_inputs: float32 -> 16-bit).
void TakeInputDTypesFromPlan(const ir::Graph& plan_graph, std::vector<TensorInfo>& inputs) {
  for (ir::ValueId id : plan_graph.inputs()) {
    for (TensorInfo& info : inputs) {
      if (info.name == plan_graph.value(id).name) info.type.dtype = plan_graph.value(id).type.dtype;
    }
  }
}

absl::Status CheckDType(const TensorInfo& info, ir::DType dtype) {
  if (dtype == info.type.dtype) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("input '", info.name, "' has dtype ", ir::DTypeName(dtype),
                                                 ", the model expects ", ir::DTypeName(info.type.dtype)));
}

// Whether `value` is of the declared kind: a sequence (of maps for seq(map), an empty one either
// way), a map with the declared key type, an empty optional, or a tensor.
bool KindFits(const ir::TensorType& declared, const ir::Tensor& value) {
  if (value.is_none()) return declared.optional;
  if (value.is_map()) return declared.kind == ir::ValueKind::kMap && value.map_keys().dtype() == declared.map_key;
  if (!value.is_sequence()) return declared.kind == ir::ValueKind::kTensor;
  const bool maps_declared = declared.map_key != ir::DType::kUndefined;
  return declared.kind == ir::ValueKind::kSequence &&
         (value.elements().empty() || value.is_map_sequence() == maps_declared);
}

absl::Status CheckShape(const TensorInfo& info, const ir::Tensor& tensor, std::map<std::string, int64_t>& symbols) {
  absl::Status dtype = CheckDType(info, tensor.dtype());
  if (!dtype.ok()) return dtype;
  if (!KindFits(info.type, tensor)) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", info.name, "' is ", tensor.Describe(), ", the model expects ", info.type.ToString()));
  }
  return CheckDims(info, tensor.shape(), symbols);
}

// `given` (items with a name) in the order of `infos`, each checked by `check(info, value, symbols)`
// (symbols: the values of named dims so far); `check_given(item)` runs on every given item first.
// Errors for an input given twice, missing, or unknown to the model.
template <typename Value, typename Item, typename ValueOf, typename CheckGiven, typename Check>
absl::StatusOr<std::vector<Value>> OrderByInputName(const std::vector<Item>& given,
                                                    const std::vector<TensorInfo>& infos, ValueOf value_of,
                                                    CheckGiven check_given, Check check) {
  std::map<std::string, const Value*> by_name;
  for (const Item& in : given) {
    if (absl::Status s = check_given(in); !s.ok()) return s;
    if (!by_name.emplace(in.name, value_of(in)).second) {
      return absl::InvalidArgumentError(absl::StrCat("input '", in.name, "' is given twice"));
    }
  }
  std::vector<Value> ordered;
  std::map<std::string, int64_t> symbols;
  for (const TensorInfo& info : infos) {
    auto it = by_name.find(info.name);
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat("missing input '", info.name, "' (", info.type.ToString(), ")"));
    }
    if (absl::Status s = check(info, *it->second, symbols); !s.ok()) return s;
    ordered.push_back(*it->second);
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown input '", by_name.begin()->first, "': the model has no input of that name"));
  }
  return ordered;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The inputs' dims when all are static, else nullopt.
std::optional<std::vector<std::vector<int64_t>>> StaticInputDims(const std::vector<TensorInfo>& inputs) {
  std::vector<std::vector<int64_t>> dims;
  for (const TensorInfo& info : inputs) {
    if (!info.type.shape) return std::nullopt;
    std::optional<std::vector<int64_t>> d = ir::ShapeToInts(*info.type.shape);
    if (!d) return std::nullopt;
    dims.push_back(*std::move(d));
  }
  return dims;
}

// options.input_shapes and what options.input_shapes_for returns, fixed in `graph`.
absl::Status ApplyInputShapes(ir::Graph& graph, const SessionOptions& options) {
  InputShapes shapes = options.input_shapes;
  if (options.input_shapes_for) {
    std::vector<TensorInfo> inputs;
    for (ir::ValueId id : graph.inputs()) inputs.push_back({graph.value(id).name, graph.value(id).type});
    absl::StatusOr<InputShapes> more = options.input_shapes_for(inputs);
    if (!more.ok()) return more.status();
    shapes.insert(more->begin(), more->end());
  }
  return FixInputShapes(graph, shapes);
}

}  // namespace

absl::Status CheckInput(const TensorInfo& info, const ir::Tensor& tensor) {
  std::map<std::string, int64_t> symbols;
  return CheckShape(info, tensor, symbols);
}

const char* DeviceName(Device device) {
  switch (device) {
    case Device::kAuto: return "auto";
    case Device::kCpu: return "cpu";
    case Device::kCuda: return "cuda";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<Session>> Session::Create(const std::string& model_path, const SessionOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // The CUDA context (~0.1-0.2 s) is created while the model is read.
  std::thread cuda_init;
  if (options.device != Device::kCpu) {
    cuda_init = std::thread([id = options.gpu.device_id] {
      if (cudaSetDevice(id) == cudaSuccess) cudaFree(nullptr);
    });
  }
  absl::StatusOr<ir::Graph> graph = importer::ImportModelFile(model_path, options.limits);
  if (cuda_init.joinable()) cuda_init.join();
  if (!graph.ok()) return graph.status();
  const double import_seconds = SecondsSince(start);
  absl::StatusOr<std::unique_ptr<Session>> session = FromGraph(*std::move(graph), options);
  if (session.ok()) (*session)->startup_.import_seconds = import_seconds;
  return session;
}

absl::StatusOr<std::unique_ptr<Session>> Session::CreateFromBytes(std::string_view model_bytes,
                                                                  const SessionOptions& options) {
  absl::StatusOr<ir::Graph> graph = importer::ImportModelBytes(model_bytes, "", options.limits);
  if (!graph.ok()) return graph.status();
  return FromGraph(*std::move(graph), options);
}

absl::StatusOr<std::unique_ptr<Session>> Session::FromGraph(ir::Graph graph, const SessionOptions& options) {
  std::unique_ptr<Session> session(new Session());
  const std::string gpu_unavailable = options.device == Device::kCpu ? std::string() : exec::CudaUnavailableReason();
  if (options.device == Device::kCuda && !gpu_unavailable.empty()) {
    return absl::UnavailableError(absl::StrCat("--device cuda: ", gpu_unavailable));
  }
  session->max_tensor_bytes_ = options.limits.max_tensor_bytes;
  session->device_ = options.device == Device::kCpu || !gpu_unavailable.empty() ? Device::kCpu : Device::kCuda;
  session->device_reason_ = options.device != Device::kAuto ? "requested"
                            : gpu_unavailable.empty()       ? "auto: a GPU is usable"
                                                            : absl::StrCat("auto: ", gpu_unavailable);
  if (absl::Status s = ApplyInputShapes(graph, options); !s.ok()) return s;
  for (ir::ValueId id : graph.inputs()) session->inputs_.push_back({graph.value(id).name, graph.value(id).type});
  for (ir::ValueId id : graph.outputs()) {
    session->outputs_.push_back({graph.value(id).name, graph.value(id).type});
  }
  auto start = std::chrono::steady_clock::now();
  partitioner::PartitionOptions partition_options;
  partition_options.precision = options.precision;
  partition_options.fuse = options.fuse;
  partition_options.half_inputs = options.half_inputs;
  absl::StatusOr<exec::Plan> plan = partitioner::Partition(std::move(graph), partition_options);
  if (!plan.ok()) return plan.status();
  session->plan_ = *std::move(plan);
  TakeInputDTypesFromPlan(session->plan_.graph, session->inputs_);
  session->cpu_ = std::make_unique<exec::CpuExecutor>(session->plan_, session->max_tensor_bytes_);
  session->startup_.passes_seconds = SecondsSince(start);
  if (session->device_ == Device::kCuda) {
    start = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<exec::CudaExecutor>> cuda = exec::CudaExecutor::Create(session->plan_, options.gpu);
    if (!cuda.ok()) return cuda.status();
    session->cuda_ = *std::move(cuda);
    session->device_reason_ += absl::StrCat(", ", session->cuda_->device_name());
    session->startup_.gpu_init_seconds = SecondsSince(start);
    if (std::optional<std::vector<std::vector<int64_t>>> dims = StaticInputDims(session->inputs_)) {
      start = std::chrono::steady_clock::now();
      absl::StatusOr<exec::PlanBuildSummary> built = session->cuda_->Prepare(*dims);
      if (!built.ok()) return built.status();
      session->startup_.plans = *built;
      session->startup_.plans_seconds = SecondsSince(start);
    }
  }
  return session;
}

std::vector<std::string> Session::gpu_step_notes() const {
  return cuda_ ? cuda_->step_notes() : std::vector<std::string>();
}

absl::StatusOr<std::vector<ir::Tensor>> Session::OrderAndCheckInputs(const std::vector<NamedTensor>& inputs) const {
  return OrderByInputName<ir::Tensor>(
      inputs, inputs_, [](const NamedTensor& in) { return &in.tensor; },
      [](const NamedTensor& in) {
        return in.tensor.valid() ? absl::OkStatus()
                                 : absl::InvalidArgumentError(absl::StrCat("input '", in.name, "' is an empty tensor"));
      },
      [](const TensorInfo& info, const ir::Tensor& tensor, std::map<std::string, int64_t>& symbols) {
        return CheckShape(info, tensor, symbols);
      });
}

absl::StatusOr<std::vector<exec::DeviceBuffer>> Session::OrderAndCheckDeviceInputs(
    const std::vector<NamedDeviceBuffer>& inputs) const {
  const int device_id = cuda_->device_id();
  return OrderByInputName<exec::DeviceBuffer>(
      inputs, inputs_, [](const NamedDeviceBuffer& in) { return &in.buffer; },
      [](const NamedDeviceBuffer&) { return absl::OkStatus(); },
      [device_id](const TensorInfo& info, const exec::DeviceBuffer& buffer, std::map<std::string, int64_t>& symbols) {
        if (info.type.kind != ir::ValueKind::kTensor || info.type.dtype == ir::DType::kString) {
          return absl::UnimplementedError(absl::StrCat("input '", info.name, "' is ", info.type.ToString(),
                                                       ": device buffers hold dense numeric tensors only (use Run)"));
        }
        absl::Status status = CheckDType(info, buffer.dtype);
        if (status.ok()) status = CheckDims(info, buffer.dims, symbols);
        if (status.ok() && buffer.bytes() > 0) {
          status = exec::CheckDevicePointer(buffer.data, device_id, absl::StrCat("input '", info.name, "'"));
        }
        return status;
      });
}

absl::StatusOr<std::vector<exec::DeviceBuffer>> Session::OrderDeviceOutputs(
    std::vector<NamedDeviceBuffer> outputs) const {
  std::vector<exec::DeviceBuffer> ordered;
  if (outputs.empty()) return ordered;
  if (outputs.size() != outputs_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(outputs.size(), " output buffers given, the model has ", outputs_.size(), " outputs"));
  }
  for (size_t o = 0; o < outputs_.size(); ++o) {
    auto named = std::find_if(outputs.begin(), outputs.end(),
                              [&](const NamedDeviceBuffer& b) { return b.name == outputs_[o].name; });
    const NamedDeviceBuffer& chosen = named != outputs.end() ? *named : outputs[o];
    if (!chosen.name.empty() && chosen.name != outputs_[o].name) {
      return absl::InvalidArgumentError(
          absl::StrCat("output buffer '", chosen.name, "': the model has no output of that name"));
    }
    if (chosen.buffer.bytes() > 0) {
      absl::Status status = exec::CheckDevicePointer(chosen.buffer.data, cuda_->device_id(),
                                                     absl::StrCat("output buffer '", outputs_[o].name, "'"));
      if (!status.ok()) return status;
    }
    ordered.push_back(chosen.buffer);
  }
  return ordered;
}

absl::StatusOr<std::vector<NamedDeviceBuffer>> Session::RunOnDevice(const std::vector<NamedDeviceBuffer>& inputs,
                                                                    cudaStream_t stream,
                                                                    std::vector<NamedDeviceBuffer> outputs) const {
  if (cuda_ == nullptr) {
    return absl::FailedPreconditionError("RunOnDevice needs a GPU session (this one runs on the CPU)");
  }
  for (const TensorInfo& out : outputs_) {
    if (out.type.kind != ir::ValueKind::kTensor || out.type.optional || out.type.dtype == ir::DType::kString) {
      return absl::UnimplementedError(absl::StrCat("output '", out.name, "' is ", out.type.ToString(),
                                                   ": device buffers hold dense numeric tensors only (use Run)"));
    }
  }
  absl::StatusOr<std::vector<exec::DeviceBuffer>> ordered = OrderAndCheckDeviceInputs(inputs);
  if (!ordered.ok()) return ordered.status();
  absl::StatusOr<std::vector<exec::DeviceBuffer>> written = OrderDeviceOutputs(std::move(outputs));
  if (!written.ok()) return written.status();
  absl::Status ran = cuda_->RunDevice(*ordered, stream, *written);
  if (!ran.ok()) return ran;
  std::vector<NamedDeviceBuffer> named;
  for (size_t o = 0; o < written->size(); ++o) named.push_back({outputs_[o].name, (*written)[o]});
  return named;
}

absl::StatusOr<ir::Tensor> Session::AllocateHostTensor(ir::DType dtype, std::vector<int64_t> dims) const {
  if (cuda_ != nullptr) return cuda_->AllocateHost(dtype, std::move(dims));
  return ir::Tensor::Create(dtype, std::move(dims));
}

absl::StatusOr<std::vector<NamedTensor>> Session::Run(const std::vector<NamedTensor>& inputs) const {
  return RunOn(Device::kAuto, inputs, nullptr);
}

absl::StatusOr<std::vector<NamedTensor>> Session::RunOn(Device device, const std::vector<NamedTensor>& inputs,
                                                        const exec::ValueObserver& observer,
                                                        bool observer_reads_values) const {
  if (device == Device::kAuto) device = device_;
  if (device == Device::kCuda && cuda_ == nullptr) {
    return absl::FailedPreconditionError("this session has no GPU backend");
  }
  absl::StatusOr<std::vector<ir::Tensor>> ordered = OrderAndCheckInputs(inputs);
  if (!ordered.ok()) return ordered.status();
  absl::StatusOr<std::vector<ir::Tensor>> results =
      device == Device::kCuda ? cuda_->Run(*std::move(ordered), observer)
                              : cpu_->Run(*std::move(ordered), nullptr, observer, observer_reads_values);
  if (!results.ok()) return results.status();
  std::vector<NamedTensor> outputs;
  for (size_t i = 0; i < results->size(); ++i) outputs.push_back({outputs_[i].name, (*results)[i]});
  return outputs;
}

}  // namespace runtime
