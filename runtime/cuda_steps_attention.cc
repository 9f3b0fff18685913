// Attention steps on the GPU (see cuda_steps_attention.h): per input dims, cuDNN's fused attention
// plan or the own kernel's arguments, made at the first run and reused by captures.
#include "runtime/cuda_steps_attention.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cudnn/status.h"
#include "ops/attention.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_run_util.h"
#include "runtime/device_runner.h"
#include "runtime/fused_lowering.h"

namespace exec {
namespace {

using kernels::cuda::AttentionArgs;
using kernels::cuda::AttentionMask;

// (batch, head, position, element) strides of a 4-D [B, H, S, E] or 3-D [B, S, H*E] tensor whose
// logical dims have element strides `strides`.
void HeadStrides(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t heads, int64_t* out) {
  if (dims.size() == 4) {
    std::copy(strides.begin(), strides.end(), out);
    return;
  }
  const int64_t e = dims[2] / heads;
  const int64_t s[4] = {strides[0], e * strides[2], strides[1], strides[2]};
  std::copy(s, s + 4, out);
}

std::vector<int64_t> Permuted(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  for (int64_t p : perm) out.push_back(dims[p]);
  return out;
}

// cuDNN reads Q, K, V and the mask from 16-byte aligned addresses.
bool SixteenByteAligned(const std::vector<HeadsInput>& in) {
  for (const HeadsInput& t : in) {
    if (reinterpret_cast<uintptr_t>(t.tensor.data()) % 16 != 0) return false;
  }
  return true;
}

cudnn::Strided4 ToStrided(int64_t b, int64_t h, int64_t s, int64_t e, const int64_t* strides) {
  cudnn::Strided4 t;
  t.dims = {b, h, s, e};
  std::copy(strides, strides + 4, t.strides.begin());
  return t;
}

// The kernel arguments for these inputs (pointers left null), or why they run on the host.
absl::StatusOr<AttentionArgs> ArgsFor(const ir::Node& node, const HeadsInput& qi, const HeadsInput& ki,
                                      const HeadsInput& vi, const DeviceTensor* mask, std::vector<int64_t>& y_dims) {
  const DeviceTensor &q = qi.tensor, &k = ki.tensor, &v = vi.tensor;
  CUDNN_ASSIGN_OR_RETURN(ops::AttentionAttrs attrs, ops::ParseAttentionAttrs(node));
  CUDNN_ASSIGN_OR_RETURN(ops::AttentionDims d, ops::AttentionDimsOf(attrs, q.dims, k.dims, v.dims, {}));
  AttentionArgs a;
  a.batch = d.batch, a.q_heads = d.q_heads, a.kv_heads = d.kv_heads, a.q_seq = d.q_seq, a.kv_seq = d.kv_seq;
  a.head_size = d.head_size, a.v_head_size = d.v_head_size;
  a.scale = static_cast<float>(attrs.scale.value_or(1.0 / std::sqrt(static_cast<double>(d.head_size))));
  a.causal = attrs.is_causal;
  if (q.dims.size() != qi.strides.size() || k.dims.size() != ki.strides.size() || v.dims.size() != vi.strides.size()) {
    return absl::InvalidArgumentError("Q, K and V must be 3-D or 4-D");
  }
  HeadStrides(q.dims, qi.strides, d.q_heads, a.q_strides);
  HeadStrides(k.dims, ki.strides, d.kv_heads, a.k_strides);
  HeadStrides(v.dims, vi.strides, d.kv_heads, a.v_strides);
  y_dims = d.three_d ? std::vector<int64_t>{d.batch, d.q_seq, d.q_heads * d.v_head_size}
                     : std::vector<int64_t>{d.batch, d.q_heads, d.q_seq, d.v_head_size};
  HeadStrides(y_dims, DenseStrides(y_dims), d.q_heads, a.y_strides);
  if (std::max(d.head_size, d.v_head_size) > kernels::cuda::MaxAttentionHeadSize()) {
    return absl::UnimplementedError("a head larger than the own kernel takes");
  }
  if (mask == nullptr) return a;
  if (mask->dims.empty() || mask->dims.size() > 4 || mask->dims.back() != d.kv_seq) {
    return absl::UnimplementedError("a mask that is not [..., keys]");
  }
  const std::vector<int64_t> scores = {d.batch, d.q_heads, d.q_seq, d.kv_seq};
  for (size_t i = 0; i < mask->dims.size(); ++i) {
    const int64_t want = scores[4 - mask->dims.size() + i];
    if (mask->dims[i] != 1 && mask->dims[i] != want) return absl::UnimplementedError("a mask that does not broadcast");
  }
  const std::vector<int64_t> strides = mask->BroadcastStrides(scores);
  std::copy(strides.begin(), strides.end(), a.mask_strides);
  a.mask_kind = mask->dtype == ir::DType::kBool ? AttentionMask::kBoolean : AttentionMask::kAdditive;
  return a;
}

std::string SpecKey(const cudnn::SdpaSpec& spec) {
  std::string key = absl::StrCat(static_cast<int>(spec.type), " ", spec.scale);
  for (const cudnn::Strided4* t : {&spec.q, &spec.k, &spec.v, &spec.o}) {
    absl::StrAppend(&key, ";", absl::StrJoin(t->dims, ","), "/", absl::StrJoin(t->strides, ","));
  }
  if (spec.bias) absl::StrAppend(&key, ";bias ", absl::StrJoin(spec.bias->dims, ","));
  return key;
}

// cuDNN's fused attention for these arguments (shared with the steps of the same spec: the layers
// of one model build and tune one plan), or why not.
absl::StatusOr<std::shared_ptr<cudnn::SdpaPlan>> SdpaFor(
    cudnnHandle_t handle, ir::DType dtype, const AttentionArgs& a, AttentionShape& shape,
    std::map<std::string, std::shared_ptr<cudnn::SdpaPlan>>& shared) {
  if (dtype != ir::DType::kFloat16 && dtype != ir::DType::kBFloat16) {
    return absl::UnimplementedError("cuDNN fused attention needs fp16 or bf16 precision");
  }
  if (a.causal) return absl::UnimplementedError("is_causal is not lowered to cuDNN yet");
  if (a.mask_kind == AttentionMask::kBoolean) return absl::UnimplementedError("boolean masks are not lowered to cuDNN");
  cudnn::SdpaSpec spec;
  spec.q = ToStrided(a.batch, a.q_heads, a.q_seq, a.head_size, a.q_strides);
  spec.k = ToStrided(a.batch, a.kv_heads, a.kv_seq, a.head_size, a.k_strides);
  spec.v = ToStrided(a.batch, a.kv_heads, a.kv_seq, a.v_head_size, a.v_strides);
  spec.o = ToStrided(a.batch, a.q_heads, a.q_seq, a.v_head_size, a.y_strides);
  spec.scale = a.scale;
  CUDNN_ASSIGN_OR_RETURN(spec.type, IoTypeOf(dtype));
  if (a.mask_kind == AttentionMask::kAdditive) {
    // cuDNN reads the bias as [B|1, H|1, S, L], rows dense: a mask broadcast along the queries (or
    // strided otherwise) is expanded into that shape at each run.
    const int64_t b = a.mask_strides[0] == 0 ? 1 : a.batch, h = a.mask_strides[1] == 0 ? 1 : a.q_heads;
    shape.bias_dims = {b, h, a.q_seq, a.kv_seq};
    const int64_t dense[4] = {h * a.q_seq * a.kv_seq, a.q_seq * a.kv_seq, a.kv_seq, 1};
    shape.expand_bias = false;
    for (int i = 0; i < 4; ++i) {
      if (shape.bias_dims[i] > 1 && a.mask_strides[i] != dense[i]) shape.expand_bias = true;
    }
    spec.bias = ToStrided(b, h, a.q_seq, a.kv_seq, dense);
  }
  if (std::string why = cudnn::SdpaRejection(spec); !why.empty()) return absl::UnimplementedError(why);
  std::shared_ptr<cudnn::SdpaPlan>& plan = shared[SpecKey(spec)];
  if (plan == nullptr) {
    // Heuristics order attention engines poorly too: four are timed at the first run (RunAttention).
    CUDNN_ASSIGN_OR_RETURN(cudnn::SdpaPlan built, cudnn::SdpaPlan::Build(handle, spec, /*max_plans=*/4));
    plan = std::make_shared<cudnn::SdpaPlan>(std::move(built));
  }
  return plan;
}

// Dims, dtypes, strides and (for cuDNN's 16-byte alignment) where views start.
std::string ShapeKey(const std::vector<HeadsInput>& in) {
  std::string key;
  for (const HeadsInput& t : in) {
    absl::StrAppend(&key, ir::ShapeToString(t.tensor.dims), ir::DTypeName(t.tensor.dtype), ir::ShapeToString(t.strides),
                    "@", reinterpret_cast<uintptr_t>(t.tensor.data()) % 16, ";");
  }
  return key;
}

}  // namespace

std::string AttentionDeviceRejection(const ir::Graph& graph, const ir::Node& node) {
  for (size_t i = 4; i < node.inputs.size(); ++i) {
    if (node.inputs[i] != ir::kNoValue) return "past keys/values or nonpad_kv_seqlen";
  }
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != ir::kNoValue) return "present keys/values or the QK output are read";
  }
  absl::StatusOr<ops::AttentionAttrs> attrs = ops::ParseAttentionAttrs(node);
  if (!attrs.ok()) return std::string(attrs.status().message());
  if (attrs->softcap != 0) return "softcap";
  if (attrs->windowed()) return "a sliding window (left_window_size / right_window_size)";
  const ir::DType dtype = graph.value(node.inputs[0]).type.dtype;
  if (!IsFloat(dtype)) return "dtype is not float32/float16/bfloat16";
  return "";
}

absl::StatusOr<HeadsInput> CudaExecutor::HeadsOperand(ir::ValueId id, std::vector<DeviceTensor>& values) {
  // cuDNN and the own kernel read head elements contiguously.
  CUDNN_ASSIGN_OR_RETURN(std::optional<HeadsInput> view, InPlaceView(id, values, /*contiguous_rows=*/true));
  if (view) return *std::move(view);
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor given, Input(id, values));
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor logical, ToLayout(given, false, stream_));
  HeadsInput heads{logical, DenseStrides(logical.dims)};
  return heads;
}

absl::Status CudaExecutor::RunAttention(size_t index, const Step& step, std::vector<DeviceTensor>& values) {
  const ir::Node& node = plan_.graph.node(step.nodes[0]);
  if (!AttentionDeviceRejection(plan_.graph, node).empty()) return RunOnHost(step, values);
  std::vector<HeadsInput> in;
  for (size_t i = 0; i < 4 && i < node.inputs.size(); ++i) {
    if (node.inputs[i] == ir::kNoValue) continue;
    CUDNN_ASSIGN_OR_RETURN(HeadsInput heads, HeadsOperand(node.inputs[i], values));
    in.push_back(std::move(heads));
  }
  // Written straight in the layout of the Transpose that reads it (runtime/cuda_views.cc).
  const std::optional<std::vector<int64_t>> perm = views_on_ ? OutputTransposePerm(index) : std::nullopt;
  const std::string key = absl::StrCat(ShapeKey(in), perm ? ir::ShapeToString(*perm) : "");
  auto [it, inserted] = attention_[index].try_emplace(key);
  AttentionShape& shape = it->second;
  if (inserted) {
    if (Capturing()) return absl::FailedPreconditionError("attention step prepared inside a CUDA graph");
    const DeviceTensor* mask = in.size() > 3 ? &in[3].tensor : nullptr;
    absl::StatusOr<AttentionArgs> args = ArgsFor(node, in[0], in[1], in[2], mask, shape.y_dims);
    shape.status = args.status();
    if (args.ok()) {
      if (perm) {
        const std::vector<int64_t> z_dims = Permuted(shape.y_dims, *perm);
        const std::vector<int64_t> z_strides = DenseStrides(z_dims);
        std::vector<int64_t> y_strides(perm->size());
        for (size_t j = 0; j < perm->size(); ++j) y_strides[(*perm)[j]] = z_strides[j];
        HeadStrides(shape.y_dims, y_strides, args->q_heads, args->y_strides);
      }
      shape.args = *args;
      absl::StatusOr<std::shared_ptr<cudnn::SdpaPlan>> sdpa =
          SdpaFor(cudnn_, in[0].tensor.dtype, *args, shape, shared_sdpa_);
      if (sdpa.ok() && !SixteenByteAligned(in)) sdpa = absl::UnimplementedError("a head view not 16-byte aligned");
      if (sdpa.ok()) shape.sdpa = *std::move(sdpa);
      shape.note =
          sdpa.ok() ? absl::StrCat("cuDNN fused attention (one SDPA graph): ", shape.sdpa->engine_description())
                    : absl::StrCat(
                          "own CUDA attention kernel (cuDNN fused attention not used: ", sdpa.status().message(), ")");
    } else {
      shape.note = absl::StrCat("host reference kernel (", args.status().message(), ")");
    }
    notes_[index] = shape.note;
  }
  if (!shape.status.ok()) {
    CUDNN_RETURN_IF_NOT_OK(MaterialiseViews(step, values));
    return RunOnHost(step, values);
  }
  const std::vector<int64_t> y_dims = perm ? Permuted(shape.y_dims, *perm) : shape.y_dims;
  CUDNN_ASSIGN_OR_RETURN(DeviceTensor y, DeviceTensor::Allocate(in[0].tensor.dtype, y_dims, false, stream_));
  AttentionArgs a = shape.args;
  a.q = in[0].tensor.data(), a.k = in[1].tensor.data(), a.v = in[2].tensor.data(), a.y = y.data();
  a.mask = in.size() > 3 ? in[3].tensor.data() : nullptr;
  if (shape.sdpa) {
    DeviceTensor bias, workspace;
    if (shape.expand_bias) {
      // Every layer of an encoder reads the same mask: it is expanded once per run.
      DeviceTensor& expanded = expanded_masks_[node.inputs[3]];
      if (expanded.dims != shape.bias_dims) {
        CUDNN_ASSIGN_OR_RETURN(expanded, DeviceTensor::Allocate(in[3].tensor.dtype, shape.bias_dims, false, stream_));
        const std::vector<int64_t> from(a.mask_strides, a.mask_strides + 4);
        CUDNN_RETURN_IF_NOT_OK(CopyView(a.mask, shape.bias_dims, from, expanded, stream_));
      }
      a.mask = expanded.data();
    }
    if (shape.sdpa->workspace_bytes() > 0) {
      CUDNN_ASSIGN_OR_RETURN(
          workspace, DeviceTensor::Allocate(ir::DType::kUint8, {static_cast<int64_t>(shape.sdpa->workspace_bytes())},
                                            false, stream_));
    }
    if (!shape.tuned) {  // the first run for these dims, never inside a capture
      const auto time_ms = [&](const std::function<absl::Status()>& run) { return TimeGpuMs(run, stream_, 5); };
      CUDNN_ASSIGN_OR_RETURN(std::string tuned,
                             shape.sdpa->Autotune(time_ms, cudnn_, a.q, a.k, a.v, a.mask, a.y, workspace.data()));
      shape.tuned = true;
      shape.note = absl::StrCat("cuDNN fused attention (one SDPA graph): ", shape.sdpa->engine_description(),
                                tuned.empty() ? "" : absl::StrCat(" (", tuned, ")"));
      notes_[index] = shape.note;
    }
    CUDNN_RETURN_IF_NOT_OK(shape.sdpa->Execute(cudnn_, a.q, a.k, a.v, a.mask, a.y, workspace.data()));
  } else {
    ONNXRUN_CUDA_RETURN_IF_ERROR(kernels::cuda::Attention(ToFloatType(in[0].tensor.dtype), a, stream_));
  }
  if (perm) {
    const Step& transpose = plan_.steps[*output_transpose_[index]];
    values[plan_.graph.node(transpose.nodes[0]).outputs[0]] = std::move(y);
    return absl::OkStatus();
  }
  const ir::ValueId out = node.outputs[0];
  CUDNN_ASSIGN_OR_RETURN(values[out], ToLayout(y, WantsNhwc(out), stream_));
  return absl::OkStatus();
}

}  // namespace exec
