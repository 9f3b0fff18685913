// Squeeze-excite gates joined to the Mul that reads them (kernels/cuda/squeeze_excite.h's scale_map):
// in 16-bit plans at batches up to kMaxJoinedBatch the MLP step writes nothing and leaves its
// parameters, and the Mul step (map * gate) runs one kernel that computes the gate and multiplies
// the map by it: one kernel fewer per squeeze-excite block, where at batch 1 a kernel's launch and
// tail cost about as much as its work. Measured on the H200 (efficientnet_b0, `--benchmark 1000`,
// A/B in one call): fp16 batch 1 0.451 / 0.448 -> 0.435 / 0.435 ms (104 -> 87 graph nodes), batch 2
// 0.477 -> 0.463, batch 8 0.678 -> 0.670; tf32 plans stay as they were (joined: batch 1 0.450 ->
// 0.459, batch 8 0.744 -> 0.760; there the folded gate, cuda_steps_scaled_conv.cc, wins more blocks).
// Where the Mul cannot take it (the map not a dense NHWC tensor of the gate's type and channels),
// the Mul step first writes the gate as the MLP step would have. Not while an observer reads every
// step's output (--check's step-by-step phase: the gate is a step output).
#include <set>

#include "absl/strings/str_cat.h"
#include "kernels/cudnn/status.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_run_util.h"

namespace exec {
namespace {

constexpr int64_t kMaxJoinedBatch = 8;

}  // namespace

void CudaExecutor::PlanJoinedGates() {
  const ir::Graph& g = plan_.graph;
  joined_gates_.mul_of.assign(plan_.steps.size(), std::nullopt);
  joined_gates_.mlp_of.assign(plan_.steps.size(), std::nullopt);
  const std::vector<std::vector<size_t>> readers = StepReaders(plan_);
  std::set<ir::ValueId> gates;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    if (squeeze_excite_[s]) gates.insert(squeeze_excite_[s]->output);
  }
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    if (!squeeze_excite_[s]) continue;
    const ir::ValueId gate = squeeze_excite_[s]->output;
    const std::vector<size_t>& by = readers[gate];
    if (by.size() != 1 || g.IsGraphOutput(gate)) continue;
    const Step& mul_step = plan_.steps[by[0]];
    const ir::Node& mul = g.node(mul_step.nodes[0]);
    // x * gate, x no gate itself (gate * gate has no map to scale).
    const bool two_inputs = mul.inputs.size() == 2;
    const bool both_gates = two_inputs && gates.count(mul.inputs[0]) && gates.count(mul.inputs[1]);
    const bool map_times_gate = mul_step.kind == StepKind::kKernel && mul_step.nodes.size() == 1 &&
                                mul.op_type == "Mul" && two_inputs && !both_gates &&
                                g.value(mul.outputs[0]).type.rank() == 4;
    if (!map_times_gate) continue;
    joined_gates_.mul_of[s] = by[0];
    joined_gates_.mlp_of[by[0]] = s;
  }
}

bool CudaExecutor::DeferGate(size_t index, const JoinedGates::Deferred& gate) {
  const kernels::cuda::SqueezeExciteParams& p = gate.params;
  if (!joined_gates_.mul_of[index] || !views_on_ || p.batch < 1 || p.batch > kMaxJoinedBatch) return false;
  if (p.type == kernels::cuda::FloatType::kFloat32) return false;             // tf32 / fp32 plans: measured slower
  if (!kernels::cuda::SqueezeExciteFits(p, /*with_map=*/true)) return false;  // the Mul could not run it joined
  joined_gates_.deferred[squeeze_excite_[index]->output] = gate;
  const std::string note = absl::StrCat(", in 16-bit plans at batches up to ", kMaxJoinedBatch, " computed by step #",
                                        *joined_gates_.mul_of[index], "'s kernel with the Mul that reads the gate");
  if (notes_[index].find(note) == std::string::npos) absl::StrAppend(&notes_[index], note);
  return true;
}

absl::StatusOr<DeviceTensor> CudaExecutor::WriteGate(const JoinedGates::Deferred& gate) {
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor out,
                         DeviceTensor::Allocate(gate.gate.dtype, gate.gate.dims, gate.gate.nhwc, stream_));
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::SqueezeExcite(gate.params, gate.x, out.data(), stream_));
  return out;
}

absl::StatusOr<bool> CudaExecutor::RunJoinedGate(size_t index, std::vector<DeviceTensor>& values) {
  const ir::Node& mul = plan_.graph.node(plan_.steps[index].nodes[0]);
  const int gate_at = joined_gates_.deferred.count(mul.inputs[0]) ? 0 : 1;
  auto it = joined_gates_.deferred.find(mul.inputs[gate_at]);
  if (it == joined_gates_.deferred.end()) return false;  // the MLP step wrote the gate
  const ir::ValueId gate_id = it->first, map_id = mul.inputs[1 - gate_at];
  JoinedGates::Deferred gate = std::move(it->second);
  joined_gates_.deferred.erase(it);
  kernels::cuda::SqueezeExciteParams p = gate.params;
  // The map as a dense tensor of this run (not a view, a constant or missing), else the gate first.
  const bool dense = !views_.count(map_id) && values[map_id].valid();
  const DeviceTensor map = dense ? values[map_id] : DeviceTensor();
  const bool fits = dense && map.host_value == nullptr && map.nhwc && map.dims.size() == 4 &&
                    map.dtype == gate.gate.dtype && map.dims[0] == p.batch && map.dims[1] == p.channels &&
                    map.num_elements() > 0 && WantsNhwc(mul.outputs[0]);
  if (!fits) {  // the gate as the MLP step would have written it; the Mul then runs as usual
    CUDNN_ASSIGN_OR_RETURN(values[gate_id], WriteGate(gate));
    return false;
  }
  p.scale_map = map.data();
  p.map_pixels = map.dims[2] * map.dims[3];
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Allocate(map.dtype, map.dims, /*nhwc=*/true, stream_));
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::SqueezeExcite(p, gate.x, out.data(), stream_));
  values[mul.outputs[0]] = std::move(out);
  notes_[index] = absl::StrCat("own CUDA kernel (16-bit, batches up to ", kMaxJoinedBatch, ": step #", gate.mlp_step,
                               "'s squeeze-excite MLP and this Mul in one pass, the gate in shared memory)");
  return true;
}

}  // namespace exec
