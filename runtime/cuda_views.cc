// Data-movement steps as views on the GPU (see runtime/strided_view.h): a Transpose, Reshape,
// Squeeze/Unsqueeze, Gather of one index, Split or Slice whose every reader is an attention step's
// Q/K/V (or another such step) moves no data: its output is recorded as a strided view of the
// tensor it reads, and attention reads the heads through those strides (cuDNN's SDPA and the own
// kernel both take them). A view that a step cannot read is copied to a dense tensor first, so
// every step still sees what the plan says.
#include <algorithm>

#include "kernels/cudnn/status.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_step_rules.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

bool IsViewOp(const Step& step, const ir::Node& node) {
  if (step.kind == StepKind::kAlias) return true;
  if (step.kind != StepKind::kKernel || step.nodes.size() != 1) return false;
  static const char* const kOps[] = {"Transpose", "Gather", "Split", "Slice"};
  return std::any_of(std::begin(kOps), std::end(kOps), [&](const char* op) { return node.op_type == op; });
}

int64_t ScalarInt(const ir::Tensor& t) { return t.num_elements() == 1 ? t.GetAsInt64(0) : -1; }

// The address of the view's first element in its base's buffer.
const void* ViewStart(const ValueView& v) {
  return static_cast<const char*>(v.base.data()) + v.view.offset() * ElementBytes(v.base.dtype);
}

}  // namespace

void CudaExecutor::PlanViews() {
  const ir::Graph& g = plan_.graph;
  view_steps_.assign(plan_.steps.size(), false);
  const std::vector<std::vector<size_t>> readers = StepReaders(plan_);
  // Readers come after their producer: decide from the last step back.
  for (size_t s = plan_.steps.size(); s-- > 0;) {
    const Step& step = plan_.steps[s];
    if (!IsViewOp(step, g.node(step.nodes[0]))) continue;
    bool all_accept = !step.outputs.empty();
    for (ir::ValueId out : step.outputs) {
      if (g.IsGraphOutput(out)) all_accept = false;
      for (size_t r : readers[out]) {
        const ir::Node& reader = g.node(plan_.steps[r].nodes[0]);
        const std::vector<ir::ValueId> in_place = ViewReadInputs(plan_.steps[r]);
        const bool read_in_place = std::find(in_place.begin(), in_place.end(), out) != in_place.end();
        const bool viewed_again = view_steps_[r] && reader.inputs[0] == out &&
                                  std::count(reader.inputs.begin(), reader.inputs.end(), out) == 1;
        all_accept = all_accept && (read_in_place || viewed_again);
      }
    }
    view_steps_[s] = all_accept;
  }
  PlanOutputTransposes(readers);
}

void CudaExecutor::PlanOutputTransposes(const std::vector<std::vector<size_t>>& readers) {
  const ir::Graph& g = plan_.graph;
  output_transpose_.assign(plan_.steps.size(), std::nullopt);
  written_by_attention_.assign(plan_.steps.size(), false);
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const Step& step = plan_.steps[s];
    const ir::Node& node = g.node(step.nodes[0]);
    if (step.kind != StepKind::kKernel || node.op_type != "Attention" || node.outputs.empty()) continue;
    const ir::ValueId y = node.outputs[0];
    if (y == ir::kNoValue || g.IsGraphOutput(y) || WantsNhwc(y) || readers[y].size() != 1) continue;
    const Step& reader = plan_.steps[readers[y][0]];
    const ir::Node& transpose = g.node(reader.nodes[0]);
    if (reader.kind != StepKind::kKernel || transpose.op_type != "Transpose" || transpose.inputs[0] != y) continue;
    if (transpose.attrs.GetInts("perm", {}).empty() || WantsNhwc(transpose.outputs[0])) continue;
    output_transpose_[s] = readers[y][0];
    written_by_attention_[readers[y][0]] = true;
  }
}

std::optional<std::vector<int64_t>> CudaExecutor::OutputTransposePerm(size_t attention_step) const {
  if (!output_transpose_[attention_step]) return std::nullopt;
  const Step& step = plan_.steps[*output_transpose_[attention_step]];
  return plan_.graph.node(step.nodes[0]).attrs.GetInts("perm", {});
}

std::vector<ir::ValueId> CudaExecutor::ViewReadInputs(const Step& step) const {
  const ir::Graph& g = plan_.graph;
  const ir::Node& node = g.node(step.nodes[0]);
  if (step.kind != StepKind::kKernel || step.nodes.size() != 1) return {};
  std::vector<ir::ValueId> in_place;
  if (node.op_type == "Attention") {
    // An attention the host runs (a KV cache, a window, ...) reads dense tensors: no views.
    if (!AttentionDeviceRejection(g, node).empty()) return {};
    for (size_t i = 0; i < 3 && i < node.inputs.size(); ++i) in_place.push_back(node.inputs[i]);
    // A value also read as the mask (or beyond) is not read in place.
    for (size_t i = 3; i < node.inputs.size(); ++i) {
      in_place.erase(std::remove(in_place.begin(), in_place.end(), node.inputs[i]), in_place.end());
    }
    return in_place;
  }
  const bool binary = node.inputs.size() == 2 && node.op_type != "Clip" && node.op_type != "Cast";
  if (binary && RunsOnDevicePointwise(g, node)) return {node.inputs[0], node.inputs[1]};
  return {};
}

absl::StatusOr<std::optional<HeadsInput>> CudaExecutor::InPlaceView(ir::ValueId id, std::vector<DeviceTensor>& values,
                                                                    bool contiguous_rows) {
  auto view = views_.find(id);
  if (view == views_.end()) return std::nullopt;
  const ValueView& v = view->second;
  std::optional<std::vector<int64_t>> strides = v.view.Strides();
  if (strides && (!contiguous_rows || (!strides->empty() && strides->back() == 1))) {
    HeadsInput operand{v.base, *strides};
    operand.tensor.dims = v.view.dims();
    // Points where the view starts and shares (keeps alive) the base's buffer.
    operand.tensor.buffer = std::shared_ptr<void>(v.base.buffer, const_cast<void*>(ViewStart(v)));
    return operand;
  }
  CUDNN_ASSIGN_OR_RETURN(values[id], Materialise(v));
  views_.erase(view);
  return std::nullopt;
}

absl::StatusOr<HeadsInput> CudaExecutor::PointwiseOperand(ir::ValueId id, std::vector<DeviceTensor>& values) {
  CUDNN_ASSIGN_OR_RETURN(std::optional<HeadsInput> view, InPlaceView(id, values, /*contiguous_rows=*/false));
  if (view) return *std::move(view);
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor t, Input(id, values));
  return HeadsInput{std::move(t), {}};
}

std::vector<int64_t> OperandStrides(const HeadsInput& operand, const std::vector<int64_t>& out_dims) {
  if (operand.strides.empty()) return operand.tensor.BroadcastStrides(out_dims);
  const std::vector<int64_t>& dims = operand.tensor.dims;
  std::vector<int64_t> strides(out_dims.size(), 0);
  const size_t lead = out_dims.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) strides[lead + i] = dims[i] == 1 ? 0 : operand.strides[i];
  return strides;
}

std::optional<ValueView> CudaExecutor::ViewOf(ir::ValueId id, const std::vector<DeviceTensor>& values) const {
  auto it = views_.find(id);
  if (it != views_.end()) return it->second;
  const DeviceTensor& t = values[id];
  if (!t.valid() || t.host_value != nullptr || t.nhwc || t.buffer == nullptr) return std::nullopt;
  return ValueView{t, StridedView::Dense(t.dims)};
}

absl::StatusOr<DeviceTensor> CudaExecutor::Materialise(const ValueView& v) {
  const std::vector<ViewAtom> atoms = v.view.Atoms();
  std::vector<int64_t> dims, strides;
  for (const ViewAtom& a : atoms) dims.push_back(a.size), strides.push_back(a.stride);
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Allocate(v.base.dtype, v.view.dims(), false, stream_));
  CUDNN_RETURN_IF_NOT_OK(CopyView(ViewStart(v), dims, strides, out, stream_));
  return out;
}

absl::Status CudaExecutor::MaterialiseViews(const Step& step, std::vector<DeviceTensor>& values,
                                            const std::vector<ir::ValueId>& keep) {
  for (ir::ValueId in : step.inputs) {
    auto it = views_.find(in);
    if (it == views_.end() || std::find(keep.begin(), keep.end(), in) != keep.end()) continue;
    CUDNN_ASSIGN_OR_RETURN(values[in], Materialise(it->second));
    views_.erase(it);
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> CudaExecutor::RunAsView(const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Node& node = plan_.graph.node(step.nodes[0]);
  std::optional<ValueView> in = ViewOf(node.inputs[0], values);
  if (!in) return false;
  std::optional<std::vector<ops::ConcreteOutput>> types = InferOutputs(node, in->base.dtype, in->view.dims());
  if (!types) return false;
  std::vector<ValueView> outs;
  int64_t split_start = 0;
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    if (o >= types->size() || !(*types)[o].dims) return false;
    const std::vector<int64_t>& dims = *(*types)[o].dims;
    ValueView out = *in;
    bool ok = true;
    if (node.op_type == "Transpose") {
      std::vector<int64_t> perm = node.attrs.GetInts("perm", {});
      if (perm.empty()) {
        for (size_t d = dims.size(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
      }
      ok = out.view.Transpose(perm);
    } else if (node.op_type == "Gather") {
      const ir::Tensor* index = KnownValue(node.inputs[1]);
      const int64_t axis = node.attrs.GetInt("axis", 0);
      ok = index->shape().empty() ? out.view.Select(axis, ScalarInt(*index))
                                  : out.view.Narrow(axis, ScalarInt(*index), 1) && out.view.Reshape(dims);
      if (index->num_elements() != 1) ok = false;
    } else if (node.op_type == "Split") {
      int64_t axis = node.attrs.GetInt("axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(dims.size());
      ok = axis >= 0 && axis < static_cast<int64_t>(dims.size()) && out.view.Narrow(axis, split_start, dims[axis]);
      if (ok) split_start += dims[axis];
    } else if (node.op_type == "Slice") {
      ok = SliceView(node, in->view.dims(), dims, out.view);
    } else {
      ok = out.view.Reshape(dims);
    }
    // The copy kernel takes 8 dims: a view needing more is copied here instead.
    if (!ok || out.view.dims() != dims || out.view.Atoms().size() > 8) return false;
    outs.push_back(std::move(out));
  }
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    if (node.outputs[o] != ir::kNoValue) views_[node.outputs[o]] = std::move(outs[o]);
  }
  return true;
}

bool CudaExecutor::SliceView(const ir::Node& node, const std::vector<int64_t>& in_dims,
                             const std::vector<int64_t>& out_dims, StridedView& view) const {
  auto known = [&](size_t i) {
    return i < node.inputs.size() && node.inputs[i] != ir::kNoValue ? KnownValue(node.inputs[i]) : nullptr;
  };
  const ir::Tensor* starts = known(1);
  const ir::Tensor* axes = known(3);
  const ir::Tensor* steps = known(4);
  if (starts == nullptr) return false;
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  for (int64_t i = 0; i < starts->num_elements(); ++i) {
    int64_t axis = axes != nullptr ? axes->GetAsInt64(i) : i;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return false;
    if (steps != nullptr && steps->GetAsInt64(i) != 1) return false;
    int64_t start = starts->GetAsInt64(i);
    if (start < 0) start += in_dims[axis];
    start = std::clamp<int64_t>(start, 0, in_dims[axis]);
    if (out_dims[axis] == in_dims[axis]) continue;
    if (!view.Narrow(axis, start, out_dims[axis])) return false;
  }
  return true;
}

}  // namespace exec
