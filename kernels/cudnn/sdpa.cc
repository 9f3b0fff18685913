// kernels/cudnn/sdpa.cc: the fused-attention operation graph (see sdpa.h), its plan and execution.
#include "kernels/cudnn/sdpa.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/cudnn/engine.h"
#include "kernels/cudnn/operation_graph.h"
#include "kernels/cudnn/status.h"

namespace cudnn {

// One finalized engine config of the graph.
struct SdpaAlternative {
  BackendDescriptor config, plan;
  int64_t workspace = 0;  // the engine's own
  std::string engine;
};

struct SdpaPlan::State {
  OperationGraph graph;
  BackendDescriptor device_props;
  std::vector<SdpaAlternative> plans;  // finalized configs in heuristics order; plans[active] runs
  size_t active = 0;
  std::string form;  // "SDPA_FWD operation" or "composite graph"
  bool has_bias = false;
  int64_t stats_bytes = 0;  // composite graph: softmax statistics after the engine's workspace
  float scale = 1;          // by value: the variant pack points at it
  std::string tune_note;    // what Autotune measured

  // Where the statistics start in the workspace of plans[i], and its whole workspace.
  int64_t StatsOffset(size_t i) const {
    return (plans[i].workspace + kStatsAlignment - 1) / kStatsAlignment * kStatsAlignment;
  }
  int64_t Workspace(size_t i) const { return stats_bytes > 0 ? StatsOffset(i) + stats_bytes : plans[i].workspace; }
  static constexpr int64_t kStatsAlignment = 256;
};

namespace {

// Tensor UIDs of the graph.
enum Uid : int64_t {
  kQ = 1,
  kKt,
  kV,
  kO,
  kBias,
  kScale,
  kScores,
  kScaled,
  kBiased,
  kMax,
  kCentred,
  kExp,
  kSum,
  kProbs,
  kLogSum,
  kStats
};

// The softmax statistics (max + log of the sum, float [B,H,S,1]) the composite graph writes: cuDNN
// 9.19 tags the graph as attention only with them (measured: without, "Dropout set of ops not
// configured correctly"); they live at the end of the workspace.

constexpr int64_t kMaxHeadSize = 256;

TensorDesc Real(int64_t uid, const Strided4& t, IoType type) {
  return {uid, {t.dims.begin(), t.dims.end()}, {t.strides.begin(), t.strides.end()}, type};
}

// A virtual row-major [d0, d1, d2, d3] intermediate.
TensorDesc Virtual(int64_t uid, std::array<int64_t, 4> d, IoType type = IoType::kFloat) {
  return {uid, {d.begin(), d.end()}, {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}, type, /*is_virtual=*/true};
}

// Every tensor of the graph, in UID order of use.
std::vector<TensorDesc> GraphTensors(const SdpaSpec& spec) {
  const auto& q = spec.q.dims;
  const int64_t l = spec.k.dims[2];
  const std::array<int64_t, 4> scores = {q[0], q[1], q[2], l}, rows = {q[0], q[1], q[2], 1};
  Strided4 kt = spec.k;  // K^T: K's dims and strides with the last two swapped
  std::swap(kt.dims[2], kt.dims[3]);
  std::swap(kt.strides[2], kt.strides[3]);
  std::vector<TensorDesc> t = {Real(kQ, spec.q, spec.type), Real(kKt, kt, spec.type), Real(kV, spec.v, spec.type),
                               Real(kO, spec.o, spec.type)};
  if (spec.bias) t.push_back(Real(kBias, *spec.bias, spec.type));
  TensorDesc scale{kScale, {1, 1, 1, 1}, {1, 1, 1, 1}, IoType::kFloat};
  scale.by_value = true;
  scale.value = spec.scale;
  t.push_back(scale);
  for (int64_t uid : {kScores, kScaled, kBiased, kCentred, kExp}) t.push_back(Virtual(uid, scores));
  for (int64_t uid : {kMax, kSum, kLogSum}) t.push_back(Virtual(uid, rows));
  TensorDesc stats = Virtual(kStats, rows);
  stats.is_virtual = false;
  t.push_back(stats);
  t.push_back(Virtual(kProbs, scores, spec.type));  // the second matmul reads P in the I/O type
  return t;
}

absl::StatusOr<BackendDescriptor> MakeReduction(cudnnReduceTensorOp_t mode, const BackendDescriptor& x,
                                                const BackendDescriptor& y, std::vector<BackendDescriptor>& parts) {
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor reduce, BackendDescriptor::Create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(reduce.SetRaw(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode));
  CUDNN_RETURN_IF_NOT_OK(reduce.Set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT));
  CUDNN_RETURN_IF_NOT_OK(reduce.Finalize());
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor op, BackendDescriptor::Create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y));
  CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(CUDNN_ATTR_OPERATION_REDUCTION_DESC, reduce));
  CUDNN_RETURN_IF_NOT_OK(op.Finalize());
  parts.push_back(std::move(reduce));
  return op;
}

// The graph of cuDNN's single SDPA_FWD operation (cuDNN >= 9.13; on 9.19 without a bias): K is
// given untransposed.
absl::StatusOr<OperationGraph> BuildUnifiedGraph(cudnnHandle_t handle, const SdpaSpec& spec) {
  OperationGraph out;
  TensorDesc scale{kScale, {1, 1, 1, 1}, {1, 1, 1, 1}, IoType::kFloat};
  scale.by_value = true;
  const std::vector<TensorDesc> all = {Real(kQ, spec.q, spec.type), Real(kKt, spec.k, spec.type),
                                       Real(kV, spec.v, spec.type), Real(kO, spec.o, spec.type), scale};
  out.parts.reserve(all.size() + 1);
  for (const TensorDesc& t : all) {
    CUDNN_ASSIGN_OR_RETURN(BackendDescriptor d, MakeTensor(t));
    out.parts.push_back(std::move(d));
  }
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor op, BackendDescriptor::Create(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR));
  const cudnnBackendAttributeName_t ports[] = {CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
                                               CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC,
                                               CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC};
  for (size_t i = 0; i < all.size(); ++i) CUDNN_RETURN_IF_NOT_OK(op.SetDescriptor(ports[i], out.parts[i]));
  CUDNN_RETURN_IF_NOT_OK(op.Finalize());
  CUDNN_ASSIGN_OR_RETURN(out.graph, BackendDescriptor::Create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
  const BackendDescriptor* ops[] = {&op};
  CUDNN_RETURN_IF_NOT_OK(out.graph.SetDescriptors(CUDNN_ATTR_OPERATIONGRAPH_OPS, ops));
  if (handle != nullptr) CUDNN_RETURN_IF_NOT_OK(out.graph.Set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, handle));
  CUDNN_RETURN_IF_NOT_OK(out.graph.Finalize());
  out.parts.push_back(std::move(op));
  return out;
}

// The composite graph (see sdpa.h).
absl::StatusOr<OperationGraph> BuildCompositeGraph(cudnnHandle_t handle, const SdpaSpec& spec) {
  OperationGraph out;
  const std::vector<TensorDesc> all = GraphTensors(spec);
  out.parts.reserve(all.size() * 2 + 16);  // no reallocation: `tensors` points into it
  std::map<int64_t, BackendDescriptor*> tensors;
  for (const TensorDesc& t : all) {
    CUDNN_ASSIGN_OR_RETURN(BackendDescriptor d, MakeTensor(t));
    out.parts.push_back(std::move(d));
    tensors[t.uid] = &out.parts.back();
  }
  const int64_t softmax_in = spec.bias ? kBiased : kScaled;
  std::vector<BackendDescriptor> ops;
  auto add = [&](absl::StatusOr<BackendDescriptor> op) -> absl::Status {
    if (!op.ok()) return op.status();
    ops.push_back(*std::move(op));
    return absl::OkStatus();
  };
  auto pointwise = [&](const char* mode, int64_t in0, int64_t in1, int64_t y) {
    return add(MakePointwiseOp(PointwiseOp{mode, in0, in1, y}, tensors, out.parts));
  };
  CUDNN_RETURN_IF_NOT_OK(add(MakeMatMulOperation(*tensors[kQ], *tensors[kKt], *tensors[kScores], out.parts)));
  CUDNN_RETURN_IF_NOT_OK(pointwise("MUL", kScores, kScale, kScaled));
  if (spec.bias) CUDNN_RETURN_IF_NOT_OK(pointwise("ADD", kScaled, kBias, kBiased));
  CUDNN_RETURN_IF_NOT_OK(add(MakeReduction(CUDNN_REDUCE_TENSOR_MAX, *tensors[softmax_in], *tensors[kMax], out.parts)));
  CUDNN_RETURN_IF_NOT_OK(pointwise("SUB", softmax_in, kMax, kCentred));
  CUDNN_RETURN_IF_NOT_OK(pointwise("EXP", kCentred, -1, kExp));
  CUDNN_RETURN_IF_NOT_OK(add(MakeReduction(CUDNN_REDUCE_TENSOR_ADD, *tensors[kExp], *tensors[kSum], out.parts)));
  CUDNN_RETURN_IF_NOT_OK(pointwise("DIV", kExp, kSum, kProbs));
  CUDNN_RETURN_IF_NOT_OK(pointwise("LOG", kSum, -1, kLogSum));
  CUDNN_RETURN_IF_NOT_OK(pointwise("ADD", kMax, kLogSum, kStats));
  CUDNN_RETURN_IF_NOT_OK(add(MakeMatMulOperation(*tensors[kProbs], *tensors[kV], *tensors[kO], out.parts)));
  std::vector<const BackendDescriptor*> op_ptrs;
  for (const BackendDescriptor& op : ops) op_ptrs.push_back(&op);
  CUDNN_ASSIGN_OR_RETURN(out.graph, BackendDescriptor::Create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(out.graph.SetDescriptors(CUDNN_ATTR_OPERATIONGRAPH_OPS, op_ptrs));
  if (handle != nullptr) CUDNN_RETURN_IF_NOT_OK(out.graph.Set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, handle));
  CUDNN_RETURN_IF_NOT_OK(out.graph.Finalize());
  for (BackendDescriptor& op : ops) out.parts.push_back(std::move(op));
  return out;
}

// Tries the configs of heuristics mode A, then the fallback list; keeps the first `max_plans` that
// finalize. Rejections are appended to `rejections`.
absl::Status ChooseEngines(SdpaPlan::State& state, int max_plans, std::string& rejections) {
  for (int rung : {0, 2}) {
    absl::StatusOr<std::vector<BackendDescriptor>> configs =
        QueryHeuristics(state.graph.graph, kHeuristicRungs[rung], state.device_props);
    if (!configs.ok()) {
      absl::StrAppend(&rejections, RungName(rung), ": ", configs.status().message(), "\n");
      continue;
    }
    for (BackendDescriptor& config : *configs) {
      if (static_cast<int>(state.plans.size()) >= max_plans) return absl::OkStatus();
      absl::StatusOr<EngineCandidate> candidate = DescribeConfig(config, rung);
      absl::StatusOr<BackendDescriptor> plan = FinalizePlan(config, state.device_props);
      if (!candidate.ok() || !plan.ok()) {
        absl::StrAppend(&rejections, candidate.ok() ? candidate->ToString() : "config", ": ",
                        (plan.ok() ? candidate.status() : plan.status()).message(), "\n");
        continue;
      }
      SdpaAlternative alternative;
      CUDNN_ASSIGN_OR_RETURN(alternative.workspace, plan->Get<int64_t>(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE));
      // An alternative needing more workspace than the first would raise peak memory to be timed.
      if (!state.plans.empty() && alternative.workspace > state.plans[0].workspace) continue;
      alternative.engine = candidate->ToString();
      alternative.plan = *std::move(plan);
      alternative.config = std::move(config);
      state.plans.push_back(std::move(alternative));
    }
  }
  if (!state.plans.empty()) return absl::OkStatus();
  if (rejections.empty()) rejections = "heuristics offered none";
  return absl::NotFoundError(rejections);
}

bool ElementStrideOne(const Strided4& t) { return t.strides[3] == 1; }

}  // namespace

std::string SdpaRejection(const SdpaSpec& spec) {
  if (!Is16Bit(spec.type)) return "fused attention needs float16 or bfloat16 (fp16 or bf16 precision)";
  const int64_t d = spec.q.dims[3], dv = spec.v.dims[3];
  if (d % 8 != 0 || dv % 8 != 0 || d > kMaxHeadSize || dv > kMaxHeadSize) {
    return absl::StrCat("head sizes ", d, "/", dv, ": multiples of 8 up to ", kMaxHeadSize, " only");
  }
  if (!ElementStrideOne(spec.q) || !ElementStrideOne(spec.k) || !ElementStrideOne(spec.v) ||
      !ElementStrideOne(spec.o)) {
    return "head elements not contiguous";
  }
  if (spec.k.dims[1] == 0 || spec.q.dims[1] % spec.k.dims[1] != 0) return "key heads do not divide query heads";
  if (spec.q.dims[2] == 1 && spec.k.dims[2] == 1) return "one query and one key (a known cuDNN issue)";
  if (spec.bias && spec.bias->strides[3] != 1) return "bias rows not contiguous";
  return "";
}

SdpaPlan::SdpaPlan(std::unique_ptr<State> state) : state_(std::move(state)) {}
SdpaPlan::SdpaPlan(SdpaPlan&&) noexcept = default;
SdpaPlan& SdpaPlan::operator=(SdpaPlan&&) noexcept = default;
SdpaPlan::~SdpaPlan() = default;

absl::StatusOr<SdpaPlan> SdpaPlan::Build(cudnnHandle_t handle, const SdpaSpec& spec, int max_plans) {
  if (std::string why = SdpaRejection(spec); !why.empty()) return absl::InvalidArgumentError(why);
  auto state = std::make_unique<State>();
  state->has_bias = spec.bias.has_value();
  state->scale = spec.scale;
  if (handle != nullptr) {
    CUDNN_ASSIGN_OR_RETURN(state->device_props, DevicePropertiesFromHandle(handle));
  }
  // The single SDPA operation first (no bias on cuDNN 9.19), then the composite graph.
  std::string log;
  for (bool unified : {true, false}) {
    if (unified && spec.bias) continue;
    const char* form = unified ? "SDPA_FWD operation" : "composite graph";
    absl::StatusOr<OperationGraph> graph =
        unified ? BuildUnifiedGraph(handle, spec) : BuildCompositeGraph(handle, spec);
    if (!graph.ok()) {
      absl::StrAppend(&log, form, ": ", graph.status().message(), "; ");
      continue;
    }
    state->graph = *std::move(graph);
    std::string rejections;
    if (ChooseEngines(*state, std::max(1, max_plans), rejections).ok()) {
      state->form = form;
      if (!unified) state->stats_bytes = spec.q.dims[0] * spec.q.dims[1] * spec.q.dims[2] * 4;
      return SdpaPlan(std::move(state));
    }
    absl::StrAppend(&log, form, ": ", rejections, "; ");
  }
  return absl::NotFoundError(absl::StrCat("no fused-attention engine finalized: ", log));
}

absl::Status SdpaPlan::ExecuteAlternative(cudnnHandle_t handle, size_t i, const void* q, const void* k, const void* v,
                                          const void* bias, void* o, void* workspace) const {
  std::vector<int64_t> uids = {kQ, kKt, kV, kO, kScale};
  std::vector<void*> ptrs = {const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), o, &state_->scale};
  if (state_->has_bias) {
    uids.push_back(kBias);
    ptrs.push_back(const_cast<void*>(bias));
  }
  if (state_->stats_bytes > 0) {
    if (workspace == nullptr) return absl::InvalidArgumentError("the attention plan needs its workspace");
    uids.push_back(kStats);
    ptrs.push_back(static_cast<char*>(workspace) + state_->StatsOffset(i));
  }
  return cudnn::ExecutePlan(handle, state_->plans[i].plan, uids, ptrs, workspace);
}

absl::Status SdpaPlan::Execute(cudnnHandle_t handle, const void* q, const void* k, const void* v, const void* bias,
                               void* o, void* workspace) const {
  return ExecuteAlternative(handle, state_->active, q, k, v, bias, o, workspace);
}

absl::StatusOr<std::string> SdpaPlan::Autotune(const TimeFn& time_ms, cudnnHandle_t handle, const void* q,
                                               const void* k, const void* v, const void* bias, void* o,
                                               void* workspace) {
  const size_t count = state_->plans.size();
  if (count < 2) return state_->tune_note;  // tuned already (a plan shared by several steps), or one
  std::vector<double> ms(count, -1);
  for (size_t i = 0; i < count; ++i) {
    absl::StatusOr<double> t = time_ms([&] { return ExecuteAlternative(handle, i, q, k, v, bias, o, workspace); });
    if (t.ok()) ms[i] = *t;
  }
  size_t best = 0;
  for (size_t i = 0; i < count; ++i) {
    if (ms[i] >= 0 && (ms[best] < 0 || ms[i] < ms[best])) best = i;
  }
  if (ms[best] < 0) return absl::InternalError("no attention plan ran");
  SdpaAlternative chosen = std::move(state_->plans[best]);
  state_->plans.clear();
  state_->plans.push_back(std::move(chosen));
  state_->active = 0;
  state_->tune_note =
      absl::StrFormat("autotuned over %zu plans: %.3f ms, heuristics' first %.3f ms", count, ms[best], ms[0]);
  return state_->tune_note;
}

size_t SdpaPlan::workspace_bytes() const {
  int64_t most = 0;
  for (size_t i = 0; i < state_->plans.size(); ++i) most = std::max(most, state_->Workspace(i));
  return static_cast<size_t>(most);
}

std::string SdpaPlan::engine_description() const {
  return absl::StrCat(state_->form, ", ", state_->plans[state_->active].engine);
}

}  // namespace cudnn
