// The device-runner interface of onnxrun's own-kernel steps: what a runner receives (Call), its
// registration row (DeviceRunnerDef: op type, support rule, runner) and the helpers runners share.
// Internal to runtime/; families of runners live in device_runners_<family>.cc, and
// cuda_kernel_steps.cc concatenates their tables.
#ifndef ONNXRUN_RUNTIME_DEVICE_RUNNER_H_
#define ONNXRUN_RUNTIME_DEVICE_RUNNER_H_

#include <cuda_runtime_api.h>

#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/indexing.h"
#include "kernels/cuda/pool.h"
#include "runtime/device_tensor.h"

namespace exec {

// Unimplemented "<op> on the device: why": the caller runs the node on the host instead.
absl::Status NotCovered(const ir::Node& node, absl::string_view why);

// The float dtypes the own kernels and legacy calls compute in.
inline bool IsFloat(ir::DType d) {
  return d == ir::DType::kFloat32 || d == ir::DType::kFloat16 || d == ir::DType::kBFloat16;
}
inline kernels::cuda::FloatType ToFloatType(ir::DType d) {
  if (d == ir::DType::kBFloat16) return kernels::cuda::FloatType::kBFloat16;
  return d == ir::DType::kFloat16 ? kernels::cuda::FloatType::kFloat16 : kernels::cuda::FloatType::kFloat32;
}
// The integer and bool dtypes the device Cast to a float reads (kernels::cuda::IntegerToFloat).
inline std::optional<kernels::cuda::IntegerType> IntegerSource(ir::DType d) {
  switch (d) {
    case ir::DType::kBool: return kernels::cuda::IntegerType::kBool;
    case ir::DType::kUint8: return kernels::cuda::IntegerType::kUint8;
    case ir::DType::kInt8: return kernels::cuda::IntegerType::kInt8;
    case ir::DType::kInt32: return kernels::cuda::IntegerType::kInt32;
    case ir::DType::kInt64: return kernels::cuda::IntegerType::kInt64;
    default: return std::nullopt;
  }
}
// Dtypes the byte-moving kernels copy (every element of 1, 2, 4 or 8 bytes).
bool Movable(ir::DType d);
inline int ElementBytes(ir::DType d) { return static_cast<int>(ir::DTypeSize(d)); }
std::vector<int64_t> DenseStrides(const std::vector<int64_t>& dims);
int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end);
// Input i's dtype (kUndefined when absent) and constant value (nullptr when absent or computed).
ir::DType InputDType(const ir::Graph& g, const ir::Node& n, size_t i);
const ir::Tensor* ConstantInput(const ir::Graph& g, const ir::Node& n, size_t i);
bool ConstantOrAbsent(const ir::Graph& g, const ir::Node& n, size_t i);

// One output as the op's inference gives it for the concrete inputs.
struct OutputSpec {
  bool present = false;
  ir::DType dtype = ir::DType::kUndefined;
  std::vector<int64_t> dims;
};

// Everything a runner needs; `outputs` come from the op's inference on the concrete input dims.
struct Call {
  const ir::Graph& graph;
  const ir::Node& node;
  const std::vector<DeviceTensor>& inputs;
  cudaStream_t stream;
  std::vector<OutputSpec> outputs;
  // LayerNormalization only: added to input 0 first (a residual Add joined to the norm).
  const DeviceTensor* residual = nullptr;

  bool has(size_t i) const { return node.input(i) != ir::kNoValue; }
  const DeviceTensor& in(size_t i) const { return inputs[i]; }
  const ir::Tensor* constant(size_t i) const { return ConstantInput(graph, node, i); }
  // Output i allocated (row-major); an invalid DeviceTensor when the node does not produce it.
  absl::StatusOr<DeviceTensor> Allocate(size_t i) const {
    if (!outputs[i].present) return DeviceTensor();
    return DeviceTensor::Allocate(outputs[i].dtype, outputs[i].dims, false, stream);
  }
  absl::Status Unsupported(absl::string_view why) const { return NotCovered(node, why); }
};

using Outputs = absl::StatusOr<std::vector<DeviceTensor>>;

// Copies `src` (viewed through `src_strides` over `dims`) into the dense `dst`.
absl::Status CopyView(const void* src, const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                      DeviceTensor& dst, cudaStream_t stream);

// One op's device runner: `supports` decides at plan time from the graph (attributes, dtypes,
// constant inputs); `run` gets the concrete inputs and returns the outputs in logical layout, or
// Unimplemented for a run-time form it does not cover.
struct DeviceRunnerDef {
  std::string_view op_type;
  bool (*supports)(const ir::Graph&, const ir::Node&);
  Outputs (*run)(const Call&);
};

// Per-family tables (one .cc each); cuda_kernel_steps.cc concatenates them.
std::vector<DeviceRunnerDef> MovementRunners();  // Transpose, Slice, Split, Gather, Expand, Tile, Where
std::vector<DeviceRunnerDef> MathRunners();      // reductions, Softmax/LogSoftmax, norms, CumSum, CumProd
std::vector<DeviceRunnerDef> ResizeRunners();    // Resize, GridSample
std::vector<DeviceRunnerDef> LogicRunners();     // comparisons, And/Or/Xor/Not, IsNaN, IsInf, Mod
std::vector<DeviceRunnerDef> PoolRunners();      // MaxPool (no Indices), AveragePool
std::vector<DeviceRunnerDef> IndexRunners();  // ArgMax/ArgMin, GatherElements, TopK, Trilu, DepthToSpace, SpaceToDepth
std::vector<DeviceRunnerDef> ScatterRunners();    // GatherND, ScatterND, ScatterElements
std::vector<DeviceRunnerDef> QuantRunners();      // QuantizeLinear, DequantizeLinear (per tensor or per axis)
std::vector<DeviceRunnerDef> IndicatorRunners();  // OneHot, EyeLike

// GatherElements' / ScatterElements' view of `data` and `indices` (the node's axis, the tensors'
// stored strides); Unimplemented for a form the host reports (ranks differ, an indices dim off the
// axis exceeds data's, a constant index out of range). device_runners_index.cc.
absl::StatusOr<kernels::cuda::GatherElementsShape> ElementsShapeOf(const Call& c, const DeviceTensor& data,
                                                                   const DeviceTensor& indices);

// The own pooling kernel's parameters for a MaxPool (no Indices) or AveragePool node over input
// dims `x_dims` ([n, c, spatial...]), its storage channels last (2 spatial dims only) or first;
// Unimplemented for another op or form.
absl::StatusOr<kernels::cuda::PoolParams> OwnPoolParams(const ir::Node& node, const std::vector<int64_t>& x_dims,
                                                        bool channels_last);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_DEVICE_RUNNER_H_
