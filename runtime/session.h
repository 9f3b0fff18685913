// onnxrun's library API: load a model once, run it many times.
//
//   absl::StatusOr<std::unique_ptr<runtime::Session>> session =
//       runtime::Session::Create("model.onnx", runtime::SessionOptions{});
//   if (!session.ok()) { /* session.status().message() says what is wrong */ }
//   std::vector<runtime::NamedTensor> inputs = {{"x", *ir::Tensor::Create(ir::DType::kFloat32, {1, 3})}};
//   absl::StatusOr<std::vector<runtime::NamedTensor>> outputs = (*session)->Run(inputs);
//
// Contracts: Create imports (ops/CANONICAL.md), type-checks and plans the model; every failure is a
// Status (never a crash or exit). Run checks the inputs against the model (count, names, dtypes,
// shapes, consistent symbolic dims) before running; NaN/Inf in inputs are data, not errors. A
// Session is immutable after Create: Run may be called from several threads at once, and on the
// GPU those runs overlap (each holds an execution context: cuda_executor.h).
#ifndef ONNXRUN_RUNTIME_SESSION_H_
#define ONNXRUN_RUNTIME_SESSION_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/plan.h"
#include "importer/importer.h"
#include "ir/shape.h"
#include "ir/tensor.h"
#include "runtime/cpu_executor.h"
#include "runtime/cuda_executor.h"
#include "runtime/input_shapes.h"

namespace runtime {

enum class Device { kAuto, kCpu, kCuda };
const char* DeviceName(Device device);

struct TensorInfo {
  std::string name;
  ir::TensorType type;  // dims may be symbolic ("N") or unknown
};

// Whether `tensor` fits the model input `info` as Run checks each input (dtype, kind, rank, known
// dims); the error says why not.
absl::Status CheckInput(const TensorInfo& info, const ir::Tensor& tensor);

struct SessionOptions {
  Device device = Device::kAuto;   // kAuto: the GPU when one is usable, else the CPU
  std::string precision = "fp32";  // fp32 (strict) | tf32 | fp16 | bf16 (16-bit tensors, fp32 accumulation)
  bool fuse = true;                // false: no passes, one Kernel step per node (the reference plan)
  // fp16 / bf16: float32 inputs the plan reads as 16-bit values are taken as float16 / bfloat16
  // tensors (inputs() says so; Run then refuses float32 ones): no Cast on the device, half the
  // input bytes copied and held (trtexec's --inputIOFormats=fp16). Outputs stay float32.
  bool half_inputs = false;
  // GPU: CUDA graphs, the plan cache and its folder, plan-building threads, plan sharing,
  // autotuning, build progress (exec::CudaExecutorOptions in runtime/cuda_executor.h).
  exec::CudaExecutorOptions gpu;
  importer::ImportLimits limits;
  // Input dims fixed at Create (input name -> dims; runtime/input_shapes.h), as ONNX Runtime's
  // free-dimension overrides: the plan is made for exactly those dims (shape computations fold,
  // more nodes fuse, GPU plans are built at Create) and Run accepts only inputs with those dims.
  InputShapes input_shapes;
  // Called once after import with the model's inputs; the dims it returns are fixed as above
  // (the CLI fixes the dims of the inputs it is about to run). Unset: none.
  std::function<absl::StatusOr<InputShapes>(const std::vector<TensorInfo>&)> input_shapes_for;
};

// Where Create's time went (seconds). plans_* are set when the model's input dims are static (the
// GPU plans are then built at Create); otherwise the first Run builds them (see CudaExecutor).
struct StartupTimes {
  double import_seconds = 0;    // parse + check + canonicalise
  double passes_seconds = 0;    // partitioner passes + cover
  double gpu_init_seconds = 0;  // CUDA context, cuDNN handle, constants uploaded
  double plans_seconds = 0;     // cuDNN plans: heuristics + compile, or loads from the plan cache
  exec::PlanBuildSummary plans;
};

struct NamedTensor {
  std::string name;
  ir::Tensor tensor;
};

// A dense, row-major tensor in GPU memory with its input or output name (RunOnDevice).
struct NamedDeviceBuffer {
  std::string name;
  exec::DeviceBuffer buffer;
};

class Session {
 public:
  static absl::StatusOr<std::unique_ptr<Session>> Create(const std::string& model_path, const SessionOptions& options);
  // From serialized ModelProto bytes; external data is refused (no folder to resolve it in).
  static absl::StatusOr<std::unique_ptr<Session>> CreateFromBytes(std::string_view model_bytes,
                                                                  const SessionOptions& options);

  // Inputs by name, in any order; outputs in the model's output order.
  absl::StatusOr<std::vector<NamedTensor>> Run(const std::vector<NamedTensor>& inputs) const;
  // Runs on a given backend (kCpu always works; kCuda when the session has a GPU), calling
  // `observer` with every step output (for --check). kAuto means the session's device. On the CPU,
  // `observer_reads_values` false hands it the values as stored (CpuExecutor::Run; for timing).
  absl::StatusOr<std::vector<NamedTensor>> RunOn(Device device, const std::vector<NamedTensor>& inputs,
                                                 const exec::ValueObserver& observer,
                                                 bool observer_reads_values = true) const;
  // GPU sessions: inputs in device memory (validated as Run's), the work ordered on the caller's
  // `stream` (nullptr: the legacy default stream). Returns once it is enqueued: the caller
  // synchronises `stream` (or orders work after it) before reading the outputs. The first run for
  // a set of input dims (and each execution context's first) synchronises. `outputs`: buffers to
  // write in place, one per model output (in the model's order or by name), with the dims this run
  // produces; when empty, device buffers are allocated (owner set) and returned.
  absl::StatusOr<std::vector<NamedDeviceBuffer>> RunOnDevice(const std::vector<NamedDeviceBuffer>& inputs,
                                                             cudaStream_t stream,
                                                             std::vector<NamedDeviceBuffer> outputs = {}) const;
  // A zero-filled host tensor for Run's inputs: page-locked on a GPU session (copied to the device
  // without staging, so copies overlap other requests' compute), ordinary memory on the CPU.
  absl::StatusOr<ir::Tensor> AllocateHostTensor(ir::DType dtype, std::vector<int64_t> dims) const;
  // Peak device memory in use by the GPU backend in bytes (CudaExecutor::peak_device_bytes); -1 on
  // the CPU.
  int64_t peak_device_bytes() const { return cuda_ ? cuda_->peak_device_bytes() : -1; }
  // How each plan step runs on the GPU (empty on the CPU).
  std::vector<std::string> gpu_step_notes() const;
  // The GPU backend itself (null on the CPU): per-step profiling, CUDA-graph status, compute time.
  exec::CudaExecutor* gpu() const { return cuda_.get(); }

  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  // The device the session runs on, and why it was chosen (for kAuto).
  Device device() const { return device_; }
  const std::string& device_reason() const { return device_reason_; }
  const exec::Plan& plan() const { return plan_; }
  const StartupTimes& startup() const { return startup_; }

 private:
  Session() = default;
  static absl::StatusOr<std::unique_ptr<Session>> FromGraph(ir::Graph graph, const SessionOptions& options);
  // Orders `inputs` as the graph's inputs and checks names, dtypes and shapes.
  absl::StatusOr<std::vector<ir::Tensor>> OrderAndCheckInputs(const std::vector<NamedTensor>& inputs) const;
  absl::StatusOr<std::vector<exec::DeviceBuffer>> OrderAndCheckDeviceInputs(
      const std::vector<NamedDeviceBuffer>& inputs) const;
  // `outputs` in the model's output order (by name when named), or empty.
  absl::StatusOr<std::vector<exec::DeviceBuffer>> OrderDeviceOutputs(std::vector<NamedDeviceBuffer> outputs) const;

  exec::Plan plan_;
  int64_t max_tensor_bytes_ = ir::kMaxTensorBytes;  // limits.max_tensor_bytes, applied to run-time outputs
  std::unique_ptr<exec::CpuExecutor> cpu_;          // runs the plan on the CPU (keeps repacked weights)
  std::unique_ptr<exec::CudaExecutor> cuda_;        // set when device_ is kCuda
  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;
  Device device_ = Device::kCpu;
  std::string device_reason_;
  StartupTimes startup_;
};

}  // namespace runtime

#endif  // ONNXRUN_RUNTIME_SESSION_H_
