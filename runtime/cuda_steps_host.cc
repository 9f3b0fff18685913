// Steps that need no kernel of their own on the GPU: Alias steps (the same device bytes with new
// dims; on the host for values kept there) and the host fallback (inputs copied to the host, the
// reference kernels, outputs back).
#include <map>

#include "absl/strings/str_cat.h"
#include "ops/infer_concrete.h"
#include "runtime/cpu_executor.h"
#include "runtime/cuda_executor.h"

namespace exec {

absl::Status CudaExecutor::RunOnHost(const Step& step, std::vector<DeviceTensor>& values) {
  ran_on_host_ = true;
  if (Capturing()) return absl::FailedPreconditionError("a host step cannot run inside a CUDA graph");
  const ir::Graph& g = plan_.graph;
  std::map<ir::ValueId, ir::Tensor> host;
  for (ir::ValueId in : step.inputs) {
    if (const ir::Tensor* known = KnownValue(in)) {
      host[in] = *known;
      continue;
    }
    absl::StatusOr<DeviceTensor> d = Input(in, values);
    if (!d.ok()) return d.status();
    absl::StatusOr<ir::Tensor> t = Download(*d, stream_);
    if (!t.ok()) return t.status();
    host[in] = *std::move(t);
  }
  for (ir::NodeId id : step.nodes) {
    const ir::Node& node = g.node(id);
    std::vector<const ir::Tensor*> inputs;
    for (ir::ValueId in : node.inputs) inputs.push_back(in == ir::kNoValue ? nullptr : &host.at(in));
    absl::StatusOr<std::vector<ir::Tensor>> outputs = RunNodeOnCpu(node, inputs);
    if (!outputs.ok()) return outputs.status();
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] != ir::kNoValue) host[node.outputs[i]] = std::move((*outputs)[i]);
    }
  }
  for (ir::ValueId out : step.outputs) {
    absl::StatusOr<DeviceTensor> d = Upload(host.at(out), WantsNhwc(out), stream_);
    if (!d.ok()) return d.status();
    values[out] = *std::move(d);
  }
  return absl::OkStatus();
}

std::optional<std::vector<ops::ConcreteOutput>> CudaExecutor::InferOutputs(const ir::Node& node, ir::DType dtype,
                                                                           const std::vector<int64_t>& dims) const {
  std::vector<ops::ConcreteInput> concrete;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::ValueId id = node.inputs[i];
    const ir::Tensor* known = id == ir::kNoValue ? nullptr : KnownValue(id);
    if (id == ir::kNoValue) {
      concrete.push_back(ops::ConcreteInput::Absent());
    } else if (i == 0) {
      concrete.push_back(ops::ConcreteInput::Of(dtype, dims, known));
    } else if (known != nullptr) {
      concrete.push_back(ops::ConcreteInput::OfTensor(known));
    } else {
      return std::nullopt;  // a shape, index or axis computed at run time
    }
  }
  absl::StatusOr<std::vector<ops::ConcreteOutput>> types = ops::InferConcrete(node, concrete);
  if (!types.ok()) return std::nullopt;
  return *std::move(types);
}

absl::Status CudaExecutor::RunAlias(const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  absl::StatusOr<DeviceTensor> in = Input(node.inputs[0], values);
  if (!in.ok()) return in.status();
  // A value kept on the host (a string tensor, a sequence) has no device bytes to alias.
  if (in->host_value != nullptr) return RunOnHost(step, values);
  // The output's dims come from the op's inference on the concrete input (shape
  // inputs are constants after folding; otherwise the step runs on the host).
  std::optional<std::vector<ops::ConcreteOutput>> out_types = InferOutputs(node, in->dtype, in->dims);
  if (!out_types || !(*out_types)[0].dims) return RunOnHost(step, values);
  const std::vector<int64_t> dims = *(*out_types)[0].dims;
  const bool same_dims = dims == in->dims;
  absl::StatusOr<DeviceTensor> src = ToLayout(*in, same_dims && in->nhwc, stream_);
  if (!src.ok()) return src.status();
  DeviceTensor out = *src;
  out.dims = dims;
  out.nhwc = src->nhwc && same_dims;
  absl::StatusOr<DeviceTensor> stored = ToLayout(out, WantsNhwc(node.outputs[0]), stream_);
  if (!stored.ok()) return stored.status();
  values[node.outputs[0]] = *std::move(stored);
  return absl::OkStatus();
}

}  // namespace exec
