// Own-CUDA-kernel steps (see cuda_kernel_steps.h): the registry of device runners (one table per
// family, device_runners_<family>.cc) and the checks around every call. Output dims always come from
// the op's own inference.
#include "runtime/cuda_kernel_steps.h"

#include <map>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "ops/infer_concrete.h"
#include "ops/op_def.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

using kernels::cuda::kMaxRank;

// The node's outputs from ops::FindOpDef(op)->infer on the concrete dims of `inputs` (constant
// inputs with their values). Inference errors become Unimplemented: the host then reports them.
absl::StatusOr<std::vector<OutputSpec>> InferOutputs(const ir::Graph& graph, const ir::Node& node,
                                                     const std::vector<DeviceTensor>& inputs) {
  std::vector<ops::ConcreteInput> concrete;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == ir::kNoValue) {
      concrete.push_back(ops::ConcreteInput::Absent());
    } else {
      concrete.push_back(ops::ConcreteInput::Of(inputs[i].dtype, inputs[i].dims, ConstantInput(graph, node, i)));
    }
  }
  absl::StatusOr<std::vector<ops::ConcreteOutput>> inferred = ops::InferConcrete(node, concrete);
  if (!inferred.ok()) return NotCovered(node, absl::StrCat("inference: ", inferred.status().message()));
  std::vector<OutputSpec> outputs(node.outputs.size());
  for (size_t o = 0; o < node.outputs.size() && o < inferred->size(); ++o) {
    if (node.outputs[o] == ir::kNoValue) continue;
    std::optional<std::vector<int64_t>>& dims = (*inferred)[o].dims;
    if (!dims) return NotCovered(node, absl::StrCat("output ", o, " has no concrete dims"));
    if (dims->size() > static_cast<size_t>(kMaxRank)) return NotCovered(node, "output rank above the kernels' limit");
    outputs[o] = OutputSpec{true, (*inferred)[o].dtype, *std::move(dims)};
  }
  return outputs;
}

const std::map<std::string_view, DeviceRunnerDef>& Runners() {
  static const auto* table = [] {
    auto* map = new std::map<std::string_view, DeviceRunnerDef>();
    for (auto family : {MovementRunners, MathRunners, ResizeRunners, LogicRunners, PoolRunners, IndexRunners,
                        ScatterRunners, QuantRunners, IndicatorRunners}) {
      for (const DeviceRunnerDef& def : family()) (*map)[def.op_type] = def;
    }
    return map;
  }();
  return *table;
}

}  // namespace

bool HasDeviceRunner(std::string_view op_type) { return Runners().count(op_type) > 0; }

bool CudaKernelSupports(const ir::Graph& graph, const ir::Node& node) {
  auto it = Runners().find(node.op_type);
  if (it == Runners().end() || ops::FindOpDef(node.op_type) == nullptr) return false;  // ops without inference
  if (node.inputs.empty() || node.inputs[0] == ir::kNoValue || node.outputs.empty() ||
      node.outputs[0] == ir::kNoValue) {
    return false;
  }
  for (ir::ValueId id : node.inputs) {
    if (id != ir::kNoValue && graph.value(id).type.rank() > kMaxRank) return false;
  }
  for (ir::ValueId id : node.outputs) {
    if (id != ir::kNoValue && graph.value(id).type.rank() > kMaxRank) return false;
  }
  return it->second.supports(graph, node);
}

absl::StatusOr<std::vector<DeviceTensor>> RunCudaKernel(const ir::Graph& graph, const ir::Node& node,
                                                        const std::vector<DeviceTensor>& inputs, cudaStream_t stream,
                                                        const DeviceTensor* residual) {
  if (!CudaKernelSupports(graph, node)) return NotCovered(node, "form not covered by kernels/cuda");
  if (residual != nullptr && node.op_type != "LayerNormalization") {
    return absl::InvalidArgumentError(absl::StrCat(node.op_type, " takes no residual"));
  }
  auto it = Runners().find(node.op_type);
  if (inputs.size() != node.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(node.op_type, ": ", inputs.size(), " device inputs for ", node.inputs.size(), " node inputs"));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (node.inputs[i] == ir::kNoValue) continue;
    if (!inputs[i].valid())
      return absl::InternalError(absl::StrCat(node.op_type, ": input ", i, " is not on the device"));
    if (inputs[i].dims.size() > static_cast<size_t>(kMaxRank)) return NotCovered(node, "rank above the kernels' limit");
  }
  absl::StatusOr<std::vector<OutputSpec>> outputs = InferOutputs(graph, node, inputs);
  if (!outputs.ok()) return outputs.status();
  return it->second.run(Call{graph, node, inputs, stream, *std::move(outputs), residual});
}

}  // namespace exec
