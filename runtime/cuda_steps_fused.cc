// FusedGraph steps: one cuDNN operation graph per step (plans built by plan_builder.cc, bound to the
// step's values here), the split fallback rung when no graph finalized, and the own 1x1/stem-conv kernel
// or cuBLASLt's matmul + the own epilogue kernel when the measured choice picked them.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kernels/cuda/matmul_epilogue.h"
#include "kernels/cudnn/status.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_run_util.h"
#include "runtime/cuda_step_rules.h"
#include "runtime/device_runner.h"
#include "runtime/pointwise_conv_form.h"

namespace exec {

absl::StatusOr<DeviceTensor> CudaExecutor::Bound(const UidBinding& binding, const std::vector<DeviceTensor>& values) {
  const ir::ValueId id = binding.value;
  if (plan_.graph.value(id).constant && constants_.Serves(id)) {
    return binding.channels_last ? constants_.ChannelsLast(id, Capturing(), stream_)
                                 : constants_.Logical(id, Capturing(), stream_);
  }
  absl::StatusOr<DeviceTensor> t = Input(id, values);
  if (!t.ok()) return t.status();
  return ToLayout(*t, binding.channels_last && t->dims.size() == 4, stream_);
}

namespace {

// ", workspace 12.0 MiB" for a workspace of 1 MiB or more (what a step adds to peak memory).
std::string WorkspaceNote(size_t bytes) {
  if (bytes < (size_t{1} << 20)) return "";
  return absl::StrFormat(", workspace %.1f MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

void CudaExecutor::InstallFused(BuiltFusedStep built) {
  FusedEntry& entry = fused_[built.step][built.dims_key];
  entry.status = built.status;
  entry.lowered = std::move(built.lowered);
  entry.plan = std::move(built.plan);
  if (!built.cache_warning.empty()) cache_warnings_.push_back(built.cache_warning);
  notes_[built.step] =
      entry.plan
          ? absl::StrCat("cuDNN operation graph: ", entry.plan->engine_description(),
                         WorkspaceNote(entry.plan->workspace_bytes()), built.from_cache ? " (plan from the cache)" : "",
                         built.autotune_note.empty() ? "" : absl::StrCat(" (", built.autotune_note, ")"))
          : absl::StrCat("host reference kernels (cuDNN graph not built: ", entry.status.message(), ")");
}

absl::Status CudaExecutor::RunFused(size_t index, std::vector<DeviceTensor>& values) {
  if (auto held = held_gates_.find(index); held != held_gates_.end()) {
    const HeldGate gate = std::move(held->second);
    held_gates_.erase(held);
    return RunScaledConv(index, gate, values);
  }
  const Step& step = plan_.steps[index];
  std::map<ir::ValueId, std::vector<int64_t>> dims;
  for (ir::ValueId in : step.inputs) {
    if (plan_.graph.value(in).constant) continue;
    if (!values[in].valid()) return absl::InternalError("fused step input not on the device");
    dims[in] = values[in].dims;
  }
  const std::string key = *FusedDimsKey(plan_, step, [&](ir::ValueId id) { return &dims.at(id); });
  if (!fused_[index].count(key)) {
    InstallFused(BuildFusedStep(cudnn_, plan_, index, dims, cache_ ? &*cache_ : nullptr, gpu_signature_));
  }
  FusedEntry& entry = fused_[index].at(key);
  // A float32 matmul cuDNN offers no exact engine for (strict fp32): cuBLASLt in float32.
  if (!entry.status.ok() && plan_.precision == "fp32" && PrepareMatmulEpilogue(index, entry, values, true)) {
    entry.choice = FusedChoice::kMatmulEpilogue;
    entry.note = absl::StrCat(MatmulEpilogueNote(entry.lt_matmul->shape(), *entry.epilogue),
                              " in float32 (no cuDNN engine computes it in exact float32)");
    entry.status = absl::OkStatus();
  }
  if (!entry.status.ok()) return RunSplit(index, entry.status, values);
  if (entry.choice == FusedChoice::kUnmeasured) {
    absl::Status chosen = ChooseGraphOrSplit(index, entry, values);
    if (!chosen.ok()) return chosen;
  }
  if (!entry.note.empty()) notes_[index] = entry.note;
  if (entry.choice == FusedChoice::kOwnKernel) return RunOwnPointwiseConv(index, entry, values);
  if (entry.choice == FusedChoice::kMatmulEpilogue) return RunMatmulEpilogue(index, entry, values);
  if (entry.choice != FusedChoice::kSplit) return ExecuteFused(index, entry, values);
  absl::Status split = RunSplit(index, absl::OkStatus(), values);
  notes_[index] = entry.note;
  return split;
}

absl::StatusOr<DeviceTensor> CudaExecutor::ExecutePlan(const LoweredStep& lowered, const cudnn::FusedGraphPlan& plan,
                                                       const std::vector<DeviceTensor>& values) {
  std::map<int64_t, void*> ptrs;
  std::vector<DeviceTensor> keep_alive;
  DeviceTensor output;
  for (const auto& [uid, binding] : lowered.bindings) {
    if (uid == lowered.output_uid) {
      absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(plan_.graph.value(binding.value).type.dtype,
                                                                binding.dims, binding.channels_last, stream_);
      if (!out.ok()) return out.status();
      output = *out;
      ptrs[uid] = output.data();
      continue;
    }
    absl::StatusOr<DeviceTensor> t = Bound(binding, values);
    if (!t.ok()) return t.status();
    ptrs[uid] = t->data();
    keep_alive.push_back(*std::move(t));
  }
  DeviceTensor workspace;
  if (plan.workspace_bytes() > 0) {
    absl::StatusOr<DeviceTensor> ws =
        DeviceTensor::Allocate(ir::DType::kUint8, {static_cast<int64_t>(plan.workspace_bytes())}, false, stream_);
    if (!ws.ok()) return ws.status();
    workspace = *std::move(ws);
  }
  CUDNN_RETURN_IF_NOT_OK(plan.Execute(cudnn_, ptrs, workspace.data()));
  return output;
}

absl::Status CudaExecutor::ExecuteFused(size_t index, const FusedEntry& entry, std::vector<DeviceTensor>& values) {
  // A float32 matmul cuBLASLt took over for want of an exact cuDNN engine has no plan to fall back to.
  if (entry.plan == nullptr) return RunSplit(index, absl::UnavailableError("no exact float32 cuDNN engine"), values);
  const Step& step = plan_.steps[index];
  absl::StatusOr<DeviceTensor> output = ExecutePlan(entry.lowered, *entry.plan, values);
  if (!output.ok()) return output.status();
  absl::StatusOr<DeviceTensor> stored = ToLayout(*output, WantsNhwc(step.outputs[0]), stream_);
  if (!stored.ok()) return stored.status();
  values[step.outputs[0]] = *std::move(stored);
  return absl::OkStatus();
}

namespace {

using Activation = kernels::cuda::MatmulEpilogueParams::Activation;
using LtActivation = kernels::cublas::LtMatmulShape::Activation;

// What cuBLASLt's epilogue applies of a step's activation: ReLU and the tanh GELU exactly, the erf
// GELU as the tanh form when `fast_gelu` (16-bit plans only reach here); else nothing.
LtActivation LtActivationFor(Activation activation, bool fast_gelu) {
  switch (activation) {
    case Activation::kRelu: return LtActivation::kRelu;
    case Activation::kGeluTanh: return LtActivation::kGeluTanh;
    case Activation::kGelu: return fast_gelu ? LtActivation::kGeluTanh : LtActivation::kNone;
    default: return LtActivation::kNone;
  }
}

}  // namespace

std::string MatmulEpilogueNote(const kernels::cublas::LtMatmulShape& lt, const MatmulEpilogueForm& form) {
  const bool activation = lt.activation != LtActivation::kNone;
  std::vector<std::string> in_lt, left;
  if (lt.bias != nullptr) in_lt.push_back("bias");
  if (activation) in_lt.push_back(lt.activation == LtActivation::kRelu ? "ReLU" : "GELU (tanh form)");
  if (lt.residual) in_lt.push_back("residual (beta = 1)");
  std::string note = "cuBLASLt matmul";
  if (!in_lt.empty()) absl::StrAppend(&note, " with its ", absl::StrJoin(in_lt, " + "), " epilogue");
  if (activation && form.activation == Activation::kGelu) {
    absl::StrAppend(&note,
                    " in place of the model's erf GELU (fast GELU: at most 4.73e-4 apart, under half a float16 ulp "
                    "of the value there; --exact-gelu keeps erf)");
  }
  if (form.bias != ir::kNoValue && lt.bias == nullptr) left.push_back("bias");
  if (form.activation != Activation::kNone && !activation) left.push_back("activation");
  if (form.residual != ir::kNoValue && !lt.residual) left.push_back("residual");
  if (!left.empty()) {
    absl::StrAppend(&note, ", then the own epilogue kernel for the ", absl::StrJoin(left, ", "),
                    " (kernels/cuda/matmul_epilogue)");
  }
  return note;
}

bool CudaExecutor::PrepareMatmulEpilogue(size_t index, FusedEntry& entry, const std::vector<DeviceTensor>& values,
                                         bool exact_fp32) {
  if (entry.lt_matmul) return true;
  absl::StatusOr<MatmulEpilogueForm> form = MatchMatmulEpilogue(plan_.graph, plan_.steps[index], exact_fp32);
  if (!form.ok() || !values[form->x].valid()) return false;
  const DeviceTensor& x = values[form->x];
  const ir::Tensor& w = *plan_.graph.value(form->weights).constant;
  // 16-bit types (the own epilogue kernel's); float32 only where cuBLASLt applies the whole epilogue.
  const std::optional<cudaDataType_t> type = LtDataType(x.dtype);
  if (!type || w.dtype() != x.dtype || x.dims.empty() || x.dims.back() != w.shape()[0] || w.shape()[0] <= 0 ||
      w.shape()[1] <= 0) {
    return false;
  }
  kernels::cublas::LtMatmulShape shape;
  shape.k = w.shape()[0];
  shape.n = w.shape()[1];
  shape.m = x.num_elements() / shape.k;
  shape.type = *type;
  if (form->bias != ir::kNoValue) {
    absl::StatusOr<DeviceTensor> bias = Input(form->bias, values);
    if (bias.ok() && bias->dtype == x.dtype) shape.bias = bias->data();  // else the own kernel adds it
  }
  shape.residual = form->residual != ir::kNoValue && form->activation == kernels::cuda::MatmulEpilogueParams::kNone;
  // cuBLASLt applies the activation after its bias, so only when it adds the bias (or there is none).
  if (shape.bias != nullptr || form->bias == ir::kNoValue) {
    shape.activation = LtActivationFor(form->activation, options_.fast_gelu);
  }
  if (*type == CUDA_R_32F) {
    const bool all_in_lt =
        (form->bias == ir::kNoValue || shape.bias != nullptr) &&
        (form->activation == kernels::cuda::MatmulEpilogueParams::kNone || shape.activation != LtActivation::kNone) &&
        (form->residual == ir::kNoValue || shape.residual);
    if (!all_in_lt) return false;
    shape.tf32 = plan_.precision == "tf32";  // fp32: CUBLAS_COMPUTE_32F, no TF32
  }
  absl::StatusOr<kernels::cublas::LtMatmul> lt = kernels::cublas::LtMatmul::Create(shape);
  if (!lt.ok()) return false;
  entry.epilogue = *std::move(form);
  entry.lt_matmul = std::make_shared<const kernels::cublas::LtMatmul>(FastestAlgorithm(*lt, *entry.epilogue, values));
  return true;
}

kernels::cublas::LtMatmul CudaExecutor::FastestAlgorithm(const kernels::cublas::LtMatmul& lt,
                                                         const MatmulEpilogueForm& form,
                                                         const std::vector<DeviceTensor>& values) {
  const kernels::cublas::LtMatmulShape& s = lt.shape();
  absl::StatusOr<DeviceTensor> x = Input(form.x, values), w = Input(form.weights, values);
  absl::StatusOr<DeviceTensor> residual = Input(s.residual ? form.residual : form.x, values);
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(x.ok() ? x->dtype : ir::DType::kFloat16, {s.m, s.n},
                                                            /*nhwc=*/false, stream_);
  if (lt.algorithm_count() < 2 || !x.ok() || x->nhwc || !w.ok() || !residual.ok() || !out.ok()) return lt;
  int best = 0;
  double best_ms = -1;
  for (int i = 0; i < lt.algorithm_count(); ++i) {
    const kernels::cublas::LtMatmul candidate = lt.WithAlgorithm(i);
    absl::StatusOr<DeviceTensor> workspace = DeviceTensor::Allocate(
        ir::DType::kUint8, {std::max<int64_t>(1, static_cast<int64_t>(candidate.workspace_bytes()))}, false, stream_);
    if (!workspace.ok()) continue;
    absl::StatusOr<double> ms = TimeGpuMs(
        [&] {
          return candidate.Run(x->data(), w->data(), s.residual ? residual->data() : nullptr, out->data(),
                               workspace->data(), stream_);
        },
        stream_, 3);
    if (ms.ok() && (best_ms < 0 || *ms < best_ms)) best = i, best_ms = *ms;
  }
  return lt.WithAlgorithm(best);
}

absl::Status CudaExecutor::RunMatmulEpilogue(size_t index, const FusedEntry& entry, std::vector<DeviceTensor>& values) {
  const Step& step = plan_.steps[index];
  const MatmulEpilogueForm& form = *entry.epilogue;
  const kernels::cublas::LtMatmul& lt = *entry.lt_matmul;
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor x_in, Input(form.x, values));
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor x, ToLayout(x_in, /*nhwc=*/false, stream_));
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor w, Input(form.weights, values));
  if (x.num_elements() != lt.shape().m * lt.shape().k) {
    return absl::InternalError("a matmul epilogue step ran with other dims than it was prepared for");
  }
  std::vector<int64_t> dims = x.dims;
  dims.back() = lt.shape().n;
  DeviceTensor residual, bias, workspace;
  if (form.residual != ir::kNoValue) {
    CUDNN_ASSIGN_OR_RETURN(DeviceTensor r, Input(form.residual, values));
    CUDNN_ASSIGN_OR_RETURN(residual, ToLayout(r, /*nhwc=*/false, stream_));
    if (residual.dims != dims || residual.dtype != x.dtype) {
      return absl::InternalError("the residual of a matmul epilogue does not match the matmul's output");
    }
  }
  if (!Aligned16(x.data()) || (residual.valid() && !Aligned16(residual.data()))) {
    return ExecuteFused(index, entry, values);
  }
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Allocate(x.dtype, dims, /*nhwc=*/false, stream_));
  if (!Aligned16(out.data())) return ExecuteFused(index, entry, values);
  if (lt.workspace_bytes() > 0) {
    CUDNN_ASSIGN_OR_RETURN(
        workspace,
        DeviceTensor::Allocate(ir::DType::kUint8, {static_cast<int64_t>(lt.workspace_bytes())}, false, stream_));
  }
  CUDNN_RETURN_IF_NOT_OK(lt.Run(x.data(), w.data(), lt.shape().residual ? residual.data() : nullptr, out.data(),
                                workspace.data(), stream_));
  kernels::cuda::MatmulEpilogueParams p;
  p.n = lt.shape().n;
  p.rows = lt.shape().m;
  p.type = ToFloatType(out.dtype);
  p.activation = lt.shape().activation == LtActivation::kNone ? form.activation : Activation::kNone;
  if (form.bias != ir::kNoValue && lt.shape().bias == nullptr) {
    CUDNN_ASSIGN_OR_RETURN(bias, Input(form.bias, values));
    p.bias = bias.data();
    p.bias_type = ToFloatType(bias.dtype);
  }
  if (!lt.shape().residual && residual.valid()) p.residual = residual.data();
  if (p.bias != nullptr || p.residual != nullptr || p.activation != Activation::kNone) {
    ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::MatmulEpilogue(p, out.data(), stream_));
  }
  CUDNN_ASSIGN_OR_RETURN(values[step.outputs[0]], ToLayout(out, WantsNhwc(step.outputs[0]), stream_));
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunOwnPointwiseConv(size_t index, const FusedEntry& entry,
                                               std::vector<DeviceTensor>& values) {
  const Step& step = plan_.steps[index];
  const ir::Node& conv = plan_.graph.node(step.nodes[0]);
  absl::StatusOr<DeviceTensor> x = Input(conv.inputs[0], values);
  if (!x.ok()) return x.status();
  absl::StatusOr<PointwiseConvForm> form = MatchPointwiseConv(plan_.graph, step, x->dims, plan_.precision == "tf32");
  // A decision read from the plan cache was made for a step with the same cuDNN graph, which may
  // differ in what the kernel needs (a bias node instead of an input, computed weights): the graph.
  if (!form.ok() || !kernels::cuda::PointwiseConvSupported(form->params)) return ExecuteFused(index, entry, values);
  absl::StatusOr<DeviceTensor> in = ToLayout(*x, /*nhwc=*/true, stream_);
  if (!in.ok()) return in.status();
  absl::StatusOr<DeviceTensor> w = Input(form->weights, values);  // [Cout, Cin, 1, 1] as given
  if (!w.ok()) return w.status();
  DeviceTensor bias;
  if (form->bias != ir::kNoValue) {
    absl::StatusOr<DeviceTensor> b = Input(form->bias, values);
    if (!b.ok()) return b.status();
    bias = *std::move(b);
  }
  absl::StatusOr<DeviceTensor> out = DeviceTensor::Allocate(in->dtype, form->out_dims, /*nhwc=*/true, stream_);
  if (!out.ok()) return out.status();
  if (!kernels::cuda::PointwiseConvAligned(in->data(), out->data())) return ExecuteFused(index, entry, values);
  ONNXRUN_CUDA_RETURN_IF_ERROR(
      kernels::cuda::PointwiseConvNhwc(form->params, in->data(), w->data(), bias.data(), out->data(), stream_));
  absl::StatusOr<DeviceTensor> stored = ToLayout(*out, WantsNhwc(step.outputs[0]), stream_);
  if (!stored.ok()) return stored.status();
  values[step.outputs[0]] = *std::move(stored);
  return absl::OkStatus();
}

absl::Status CudaExecutor::RunSplit(size_t index, const absl::Status& why_not_whole,
                                    std::vector<DeviceTensor>& values) {
  const Step& fused = plan_.steps[index];
  const ir::Graph& g = plan_.graph;
  const std::string why(why_not_whole.message());
  const bool ran_on_host_before = ran_on_host_;
  ran_on_host_ = false;
  // Intermediates (outputs of the step's nodes that are not the step's outputs) are dropped after
  // their last reader in the step, and a unary op may overwrite a dying input: the split form holds
  // no more than the step's input and two tensors of its size.
  std::map<ir::ValueId, size_t> last_reader;  // intermediate -> index of its last reading node
  std::set<ir::ValueId> intermediates;
  for (size_t k = 0; k < fused.nodes.size(); ++k) {
    const ir::Node& node = g.node(fused.nodes[k]);
    for (ir::ValueId in : node.inputs) {
      if (intermediates.count(in)) last_reader[in] = k;
    }
    for (ir::ValueId out : node.outputs) {
      if (std::find(fused.outputs.begin(), fused.outputs.end(), out) == fused.outputs.end()) intermediates.insert(out);
    }
  }
  auto dies_at = [&](ir::ValueId v, size_t k) {
    auto it = last_reader.find(v);
    return it != last_reader.end() && it->second == k;
  };
  for (size_t k = 0; k < fused.nodes.size(); ++k) {
    const ir::NodeId id = fused.nodes[k];
    const ir::Node& node = g.node(id);
    Step single;
    single.kind = StepKind::kKernel;
    single.nodes = {id};
    for (ir::ValueId in : node.inputs) {
      if (in != ir::kNoValue) single.inputs.push_back(in);
    }
    single.outputs = node.outputs;
    absl::Status status;
    if (id == fused.nodes[0]) {
      status = RunLegacy(index, single, values);
    } else if (RunsOnDevicePointwise(g, node)) {
      status = RunPointwise(single, values, node.inputs.size() == 1 && dies_at(node.inputs[0], k));
    } else {
      status = RunOnHost(single, values);
    }
    if (!status.ok()) return status;
    for (ir::ValueId in : node.inputs) {
      if (dies_at(in, k)) values[in] = DeviceTensor();
    }
  }
  for (ir::ValueId v : intermediates) values[v] = DeviceTensor();  // also those no node of the step read
  const bool all_on_device = !ran_on_host_;
  ran_on_host_ = ran_on_host_ || ran_on_host_before;
  notes_[index] =
      absl::StrCat(all_on_device ? "split into single nodes: the conv/matmul on legacy cuDNN, each following "
                                   "op on an own kernel"
                                 : "split into single nodes, some on the host reference kernels",
                   " (as one step: ", why.substr(0, why.find('\n')), ")");
  return absl::OkStatus();
}

}  // namespace exec
