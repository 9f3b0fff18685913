// Squeeze-excite gates folded into the next 1x1 conv on the GPU (runtime/scaled_conv_form.h): the
// gate's Mul step holds its operands instead of writing x * s, and the conv step either scales a
// copy of its weights per sample (kernels/cuda/scaled_weights.h) and runs one cuBLASLt batched
// matmul with the bias (and the residual), or writes the product after all and runs as usual:
// whichever measured faster at the first run for the input dims; both steps' notes say which and
// the times. Only where the weights' copy is no larger than the map (Cout <= H * W: the early,
// large maps, where the product's pass costs most), so the run's peak memory does not grow.
#include <algorithm>
#include <functional>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kernels/cuda/scaled_weights.h"
#include "kernels/cudnn/status.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_run_util.h"
#include "runtime/device_runner.h"

namespace exec {
namespace {

constexpr int kTimedRuns = 3;
constexpr double kMargin = 0.95;  // the folded form must take under 95% of the Mul + conv time

// Whether the held operands suit the folded form: a dense NHWC map [N, C, H, W] and its gate
// [N, C, 1, 1] of one float type, channel counts whose rows stay 16-byte aligned, Cout <= H * W.
bool FoldedFormFits(const ScaledConvForm& form, const DeviceTensor& x, const DeviceTensor& gate) {
  if (x.host_value != nullptr || gate.host_value != nullptr || !x.nhwc || x.dims.size() != 4) return false;
  if (!LtDataType(x.dtype) || gate.dtype != x.dtype || x.dims[1] != form.channels) return false;
  if (gate.dims != std::vector<int64_t>{x.dims[0], form.channels, 1, 1}) return false;
  const int64_t per_pack = 16 / static_cast<int64_t>(ElementBytes(x.dtype));
  if (form.channels % per_pack != 0 || form.out_channels % per_pack != 0) return false;
  return form.out_channels <= x.dims[2] * x.dims[3] && x.num_elements() > 0 && Aligned16(x.data());
}

}  // namespace

void CudaExecutor::PlanScaledConvs() {
  scaled_conv_ = MatchScaledConvs(plan_);
  gate_reader_.assign(plan_.steps.size(), std::nullopt);
  for (size_t s = 0; s < scaled_conv_.size(); ++s) {
    if (scaled_conv_[s]) gate_reader_[scaled_conv_[s]->mul_step] = s;
  }
}

absl::StatusOr<bool> CudaExecutor::HoldGate(size_t index, const std::vector<DeviceTensor>& values) {
  if (!views_on_ || !gate_reader_[index]) return false;
  const size_t conv_step = *gate_reader_[index];
  const ScaledConvForm& form = *scaled_conv_[conv_step];
  if (views_.count(form.x) || views_.count(form.gate) || !values[form.x].valid() || !values[form.gate].valid()) {
    return false;
  }
  if (!FoldedFormFits(form, values[form.x], values[form.gate])) return false;
  held_gates_[conv_step] = HeldGate{values[form.x], values[form.gate]};
  return true;
}

absl::Status CudaExecutor::RunScaledConv(size_t index, const HeldGate& held, std::vector<DeviceTensor>& values) {
  const size_t mul_step = scaled_conv_[index]->mul_step;
  ScaledConvEntry& entry = scaled_entries_[{index, absl::StrJoin(held.x.dims, "x")}];
  if (!entry.decided && !Capturing()) CUDNN_RETURN_IF_NOT_OK(DecideScaledConv(index, held, entry, values));
  if (!entry.decided || !entry.lt) {
    CUDNN_RETURN_IF_NOT_OK(RunGateThenConv(index, held, values));
    notes_[mul_step] = absl::StrCat("own CUDA kernel, run by step #", index, entry.note.empty() ? "" : " (", entry.note,
                                    entry.note.empty() ? "" : ")");
    return absl::OkStatus();
  }
  notes_[mul_step] = absl::StrCat("no work: the gate is folded into the weights of step #", index);
  notes_[index] = entry.note;
  return RunFoldedGate(index, held, *entry.lt, values);
}

absl::Status CudaExecutor::DecideScaledConv(size_t index, const HeldGate& held, ScaledConvEntry& entry,
                                            std::vector<DeviceTensor>& values) {
  const ScaledConvForm& form = *scaled_conv_[index];
  const std::vector<int64_t>& d = held.x.dims;
  kernels::cublas::LtMatmulShape shape;
  shape.m = d[2] * d[3];
  shape.n = form.out_channels;
  shape.k = form.channels;
  shape.batch = d[0];
  shape.w_batch_stride = shape.k * shape.n;
  shape.type = *LtDataType(held.x.dtype);
  shape.tf32 = plan_.precision == "tf32";
  shape.residual = form.residual != ir::kNoValue;
  if (form.bias != ir::kNoValue) {
    CUDNN_ASSIGN_OR_RETURN(DeviceTensor bias, Input(form.bias, values));
    if (bias.dtype != held.x.dtype) return absl::OkStatus();  // undecided: the Mul + conv
    shape.bias = bias.data();
  }
  entry.decided = true;
  absl::StatusOr<kernels::cublas::LtMatmul> lt = kernels::cublas::LtMatmul::Create(shape);
  if (!lt.ok()) {
    entry.note = absl::StrCat("the gate not folded into the conv's weights: ", lt.status().message());
    return absl::OkStatus();
  }
  const std::vector<ir::ValueId>& outputs = plan_.steps[index].outputs;
  auto time_form = [&](const std::function<absl::Status()>& run) {
    return TimeStepFormGpuMs(run, outputs, values, stream_, kTimedRuns);
  };
  CUDNN_ASSIGN_OR_RETURN(double unfolded_ms, time_form([&] { return RunGateThenConv(index, held, values); }));
  double best_ms = -1;
  int best = 0;
  for (int i = 0; i < lt->algorithm_count(); ++i) {
    const kernels::cublas::LtMatmul candidate = lt->WithAlgorithm(i);
    absl::StatusOr<double> ms = time_form([&] { return RunFoldedGate(index, held, candidate, values); });
    if (ms.ok() && (best_ms < 0 || *ms < best_ms)) best = i, best_ms = *ms;
  }
  for (ir::ValueId out : outputs) values[out] = DeviceTensor();  // the chosen form runs next
  const bool fold = best_ms >= 0 && best_ms < kMargin * unfolded_ms;
  if (fold) entry.lt = std::make_shared<const kernels::cublas::LtMatmul>(lt->WithAlgorithm(best));
  entry.note = absl::StrFormat(
      "%sthe squeeze-excite gate of step #%d folded into per-sample weights (own kernel) + one cuBLASLt batched "
      "matmul with the bias%s (measured at the first run for these dims: gate Mul + conv %.3f ms, folded %s -> %s)",
      fold ? "" : "not chosen: ", scaled_conv_[index]->mul_step, shape.residual ? " and the residual" : "", unfolded_ms,
      best_ms < 0 ? "failed" : absl::StrFormat("%.3f ms", best_ms), fold ? "folded" : "Mul + conv");
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunGateThenConv(size_t index, const HeldGate& held, std::vector<DeviceTensor>& values) {
  const ScaledConvForm& form = *scaled_conv_[index];
  const DeviceTensor saved_x = values[form.x], saved_gate = values[form.gate];
  values[form.x] = held.x;
  values[form.gate] = held.gate;
  absl::Status status = RunPointwise(plan_.steps[form.mul_step], values);
  values[form.x] = saved_x;
  values[form.gate] = saved_gate;
  if (!status.ok()) return status;
  return RunFused(index, values);
}

absl::Status CudaExecutor::RunFoldedGate(size_t index, const HeldGate& held, const kernels::cublas::LtMatmul& lt,
                                         std::vector<DeviceTensor>& values) {
  const ScaledConvForm& form = *scaled_conv_[index];
  const std::vector<int64_t>& d = held.x.dims;
  const std::vector<int64_t> out_dims = {d[0], form.out_channels, d[2], d[3]};
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor w, Input(form.weights, values));  // [Cout, C, 1, 1]: the same bytes in NHWC
  CUDNN_ASSIGN_OR_RETURN(
      DeviceTensor scaled,
      DeviceTensor::Allocate(held.x.dtype, {d[0], form.channels, form.out_channels}, false, stream_));
  kernels::cuda::ScaledWeightsParams p;
  p.samples = d[0];
  p.cin = form.channels;
  p.cout = form.out_channels;
  p.type = ToFloatType(held.x.dtype);
  if (w.dtype != held.x.dtype) return absl::InternalError("the folded conv's weights are of another type");
  ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::ScaledWeights(p, w.data(), held.gate.data(), scaled.data(), stream_));
  DeviceTensor residual, workspace;
  if (form.residual != ir::kNoValue) {
    CUDNN_ASSIGN_OR_RETURN(DeviceTensor r, Input(form.residual, values));
    CUDNN_ASSIGN_OR_RETURN(residual, ToLayout(r, /*nhwc=*/true, stream_));
    if (residual.dims != out_dims || residual.dtype != held.x.dtype || !Aligned16(residual.data())) {
      return absl::InternalError("the residual of a folded conv does not match its output");
    }
  }
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Allocate(held.x.dtype, out_dims, /*nhwc=*/true, stream_));
  if (lt.workspace_bytes() > 0) {
    CUDNN_ASSIGN_OR_RETURN(
        workspace,
        DeviceTensor::Allocate(ir::DType::kUint8, {static_cast<int64_t>(lt.workspace_bytes())}, false, stream_));
  }
  CUDNN_RETURN_IF_NOT_OK(lt.Run(held.x.data(), scaled.data(), residual.valid() ? residual.data() : nullptr, out.data(),
                                workspace.data(), stream_));
  const ir::ValueId y = plan_.steps[index].outputs[0];
  CUDNN_ASSIGN_OR_RETURN(values[y], ToLayout(out, WantsNhwc(y), stream_));
  return absl::OkStatus();
}

}  // namespace exec
