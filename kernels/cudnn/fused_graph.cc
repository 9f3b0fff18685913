// kernels/cudnn/fused_graph.cc: FusedGraphPlan — the staged build (graph → heuristics rungs → first
// plan that finalizes) and execution through a variant pack.
#include "kernels/cudnn/fused_graph.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/half.h"
#include "kernels/cudnn/engine.h"
#include "kernels/cudnn/operation_graph.h"
#include "kernels/cudnn/plan_serialization.h"
#include "kernels/cudnn/status.h"

namespace cudnn {

struct FusedGraphPlan::State {
  OperationGraph graph;
  BackendDescriptor device_props;  // empty when built for the current device
  BackendDescriptor config;        // the chosen engine config
  BackendDescriptor plan;          // empty when build_plan was false or nothing finalized
  int64_t workspace = 0;
  std::vector<EngineCandidate> candidates;
  int chosen = -1;  // index into candidates
  // Further finalized plans (BuildOptions::max_plans > 1), in heuristics order, for autotuning.
  struct Alternative {
    BackendDescriptor config, plan;
    int64_t workspace = 0;
    int chosen = -1;
  };
  std::vector<Alternative> alternatives;
  int max_plans = 1;
  bool precompiled_alternatives_only = false;
  std::string rejections;
  std::vector<int64_t> io_uids;
  // By-value scalars: the variant pack takes a host pointer to these (stable: State is on the
  // heap).
  std::vector<int64_t> by_value_uids;
  std::vector<float> by_value_float;
  std::vector<uint16_t> by_value_half;
  std::vector<bool> by_value_is_half;
};

namespace {

bool IsStrictFp32(const FusedGraphSpec& spec) {
  if (spec.allow_tf32) return false;
  for (const TensorDesc* t : {&spec.x, &spec.w, &spec.y}) {
    if (t->type != IoType::kFloat) return false;
  }
  for (const TensorDesc& t : spec.extra) {
    if (!t.is_virtual && t.type != IoType::kFloat) return false;
  }
  return true;
}

std::string Key(const EngineCandidate& c) {
  std::string key = absl::StrCat(c.engine_id, "|");
  for (const auto& [type, value] : c.knobs) absl::StrAppend(&key, type, "=", value, ",");
  return key;
}

// Tries each config of one rung; returns true once a plan finalized (or, without build_plan, once
// the candidates are recorded).
absl::StatusOr<bool> TryRung(int rung, std::vector<BackendDescriptor> configs, bool strict_fp32, bool matmul,
                             bool build_plan, std::set<std::string>& seen, FusedGraphPlan::State& state) {
  for (BackendDescriptor& config : configs) {
    absl::StatusOr<EngineCandidate> candidate = DescribeConfig(config, rung);
    if (!candidate.ok()) {
      absl::StrAppend(&state.rejections, RungName(rung), ": unreadable config: ", candidate.status().message(), "\n");
      continue;
    }
    if (!seen.insert(Key(*candidate)).second) continue;  // offered by an earlier rung already
    state.candidates.push_back(*candidate);
    const int plans = (state.plan.get() != nullptr ? 1 : 0) + static_cast<int>(state.alternatives.size());
    if (!build_plan || plans >= state.max_plans) continue;
    // Strict fp32 matmuls: engine 0 (offered by heuristics mode A and by the fallback list) computes
    // in TF32 without a numerical note saying so (an fp32 [4,16] x [16,8] matmul came out 2e-3 off on
    // the H200, exact with NVIDIA_TF32_OVERRIDE=0), so it is not used for them.
    std::string strict = strict_fp32 ? StrictFp32Rejection(*candidate) : "";
    if (strict.empty() && strict_fp32 && matmul && (candidate->engine_id == 0 || rung == 2)) {
      strict = "strict fp32: matmul engine 0 and the fallback list compute in TF32 without saying so";
    }
    if (!strict.empty()) {
      absl::StrAppend(&state.rejections, candidate->ToString(), ": skipped (", strict, ")\n");
      continue;
    }
    if (state.plan.get() != nullptr && state.precompiled_alternatives_only && candidate->runtime_compiled()) {
      absl::StrAppend(&state.rejections, candidate->ToString(), ": not timed (runtime-compiled alternative)\n");
      continue;
    }
    if (state.plan.get() != nullptr) {
      if (std::string worse = NumericsWorseThan(*candidate, state.candidates[state.chosen]); !worse.empty()) {
        absl::StrAppend(&state.rejections, candidate->ToString(), ": not timed (", worse, ")\n");
        continue;
      }
    }
    absl::StatusOr<BackendDescriptor> plan = FinalizePlan(config, state.device_props);
    if (!plan.ok()) {
      absl::StrAppend(&state.rejections, candidate->ToString(), ": ", plan.status().message(), "\n");
      continue;
    }
    CUDNN_ASSIGN_OR_RETURN(int64_t workspace, plan->Get<int64_t>(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE));
    const int chosen = static_cast<int>(state.candidates.size()) - 1;
    if (state.plan.get() == nullptr) {
      state.workspace = workspace;
      state.plan = std::move(*plan);
      state.config = std::move(config);
      state.chosen = chosen;
    } else {
      state.alternatives.push_back({std::move(config), std::move(*plan), workspace, chosen});
    }
  }
  return state.plan.get() != nullptr && 1 + static_cast<int>(state.alternatives.size()) >= state.max_plans;
}

void AddByValue(const TensorDesc& t, FusedGraphPlan::State& state) {
  state.by_value_uids.push_back(t.uid);
  state.by_value_float.push_back(static_cast<float>(t.value));
  const float value = static_cast<float>(t.value);
  state.by_value_half.push_back(t.type == IoType::kBFloat16 ? ir::FloatToBFloat16Bits(value)
                                                            : ir::FloatToHalfBits(value));
  state.by_value_is_half.push_back(Is16Bit(t.type));
}

void CollectTensorUses(const FusedGraphSpec& spec, FusedGraphPlan::State& state) {
  std::vector<const TensorDesc*> all = {&spec.x, &spec.w, &spec.y};
  for (const TensorDesc& t : spec.extra) all.push_back(&t);
  for (const TensorDesc* t : all) {
    if (t->by_value) {
      AddByValue(*t, state);
    } else if (!t->is_virtual) {
      state.io_uids.push_back(t->uid);
    }
  }
}

}  // namespace

absl::StatusOr<FusedGraphPlan> FusedGraphPlan::Build(cudnnHandle_t handle, const FusedGraphSpec& spec,
                                                     const BuildOptions& options) {
  auto state = std::make_unique<State>();
  state->max_plans = std::max(1, options.max_plans);
  state->precompiled_alternatives_only = options.precompiled_alternatives_only;
  CUDNN_ASSIGN_OR_RETURN(state->graph, BuildOperationGraph(spec));
  CollectTensorUses(spec, *state);
  if (options.device_properties_json_path.has_value()) {
    CUDNN_ASSIGN_OR_RETURN(state->device_props, LoadDeviceProperties(*options.device_properties_json_path));
  } else if (handle == nullptr) {
    absl::StrAppend(&state->rejections, "no handle and no device properties: heuristics query the current device\n");
  } else {
    CUDNN_ASSIGN_OR_RETURN(state->device_props, DevicePropertiesFromHandle(handle));
  }
  const bool strict = IsStrictFp32(spec);
  std::set<std::string> seen;
  absl::Status last_heuristics_error = absl::OkStatus();
  for (int rung = 0; rung < 3; ++rung) {
    absl::StatusOr<std::vector<BackendDescriptor>> configs =
        QueryHeuristics(state->graph.graph, kHeuristicRungs[rung], state->device_props);
    if (!configs.ok()) {
      last_heuristics_error = configs.status();
      absl::StrAppend(&state->rejections, RungName(rung), ": ", configs.status().message(), "\n");
      continue;
    }
    if (configs->empty()) absl::StrAppend(&state->rejections, RungName(rung), ": 0 configs\n");
    CUDNN_ASSIGN_OR_RETURN(bool done, TryRung(rung, std::move(*configs), strict, spec.anchor == FusedGraphSpec::kMatMul,
                                              options.build_plan, seen, *state));
    if (done && options.build_plan) break;  // (with max_plans > 1: once that many finalized)
  }
  if (state->candidates.empty()) {
    const std::string missing = MissingRuntimeLibraries();
    if (!missing.empty()) {
      absl::StrAppend(&state->rejections, "cannot load ", missing,
                      " (runtime-compiled engines need libcuda + NVRTC; matmul needs cuBLASLt)\n");
    }
  }
  if (state->candidates.empty() && !last_heuristics_error.ok()) {
    return absl::Status(last_heuristics_error.code(), absl::StrCat("no heuristics result: ", state->rejections));
  }
  if (options.build_plan && state->plan.get() == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no engine config finalized", strict ? " (strict fp32)" : "", ":\n", state->rejections));
  }
  return FusedGraphPlan(std::move(state));
}

absl::StatusOr<FusedGraphPlan> FusedGraphPlan::FromSerialized(cudnnHandle_t handle, const FusedGraphSpec& spec,
                                                              std::string_view blob, const BuildOptions& options) {
  CUDNN_RETURN_IF_NOT_OK(ValidateSpec(spec));
  CUDNN_ASSIGN_OR_RETURN(LoadedPlan loaded, LoadPlanBlob(handle, blob, options));
  auto state = std::make_unique<State>();
  CollectTensorUses(spec, *state);
  state->device_props = std::move(loaded.device_props);
  state->config = std::move(loaded.config);
  state->plan = std::move(loaded.plan);
  state->workspace = loaded.workspace;
  state->candidates.push_back(std::move(loaded.candidate));
  state->chosen = 0;
  return FusedGraphPlan(std::move(state));
}

absl::StatusOr<std::string> FusedGraphPlan::SerializedPlan() const {
  if (!has_plan()) return absl::FailedPreconditionError("FusedGraphPlan has no execution plan");
  CUDNN_ASSIGN_OR_RETURN(std::string text, SerializeExecutionPlan(state_->plan));
  const EngineCandidate& chosen = state_->candidates[state_->chosen];
  return EncodePlanBlob({static_cast<int64_t>(cudnnGetVersion()), chosen.rung, chosen.engine_id, std::move(text)});
}

FusedGraphPlan::FusedGraphPlan(std::unique_ptr<State> state) : state_(std::move(state)) {}
FusedGraphPlan::FusedGraphPlan(FusedGraphPlan&&) noexcept = default;
FusedGraphPlan& FusedGraphPlan::operator=(FusedGraphPlan&&) noexcept = default;
FusedGraphPlan::~FusedGraphPlan() = default;

absl::Status FusedGraphPlan::Execute(cudnnHandle_t handle, const std::map<int64_t, void*>& device_ptrs,
                                     void* workspace) const {
  if (!has_plan()) return absl::FailedPreconditionError("FusedGraphPlan has no execution plan");
  if (state_->workspace > 0 && workspace == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("plan needs ", state_->workspace, " bytes of workspace, got null"));
  }
  std::vector<int64_t> uids;
  std::vector<void*> ptrs;
  for (int64_t uid : state_->io_uids) {
    auto it = device_ptrs.find(uid);
    if (it == device_ptrs.end() || it->second == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("no device pointer for tensor uid ", uid));
    }
    uids.push_back(uid);
    ptrs.push_back(it->second);
  }
  for (size_t i = 0; i < state_->by_value_uids.size(); ++i) {
    uids.push_back(state_->by_value_uids[i]);
    ptrs.push_back(state_->by_value_is_half[i] ? static_cast<void*>(&state_->by_value_half[i])
                                               : static_cast<void*>(&state_->by_value_float[i]));
  }
  return ExecutePlan(handle, state_->plan, uids, ptrs, workspace);
}

bool FusedGraphPlan::has_plan() const { return state_ && state_->plan.get() != nullptr; }
size_t FusedGraphPlan::plan_count() const { return has_plan() ? 1 + state_->alternatives.size() : 0; }

absl::Status FusedGraphPlan::SelectPlan(size_t index) {
  if (index == 0) return absl::OkStatus();
  if (index >= plan_count()) return absl::OutOfRangeError(absl::StrCat("plan ", index, " of ", plan_count()));
  State::Alternative& alt = state_->alternatives[index - 1];
  std::swap(state_->config, alt.config);
  std::swap(state_->plan, alt.plan);
  std::swap(state_->workspace, alt.workspace);
  std::swap(state_->chosen, alt.chosen);
  return absl::OkStatus();
}

void FusedGraphPlan::DropAlternatives() {
  if (state_) state_->alternatives.clear();
}
size_t FusedGraphPlan::workspace_bytes() const { return has_plan() ? static_cast<size_t>(state_->workspace) : 0; }
std::string FusedGraphPlan::engine_description() const {
  return has_plan() ? state_->candidates[state_->chosen].ToString() : "";
}
int FusedGraphPlan::rung() const { return has_plan() ? state_->candidates[state_->chosen].rung : -1; }
std::string FusedGraphPlan::rejection_log() const { return state_ ? state_->rejections : ""; }
const std::vector<EngineCandidate>& FusedGraphPlan::candidates() const { return state_->candidates; }
std::vector<int64_t> FusedGraphPlan::io_uids() const { return state_->io_uids; }

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

std::vector<int64_t> ChannelsLastStrides(const std::vector<int64_t>& dims) {
  if (dims.size() < 3) return RowMajorStrides(dims);
  std::vector<int64_t> strides(dims.size(), 1);
  int64_t running = dims[1];  // C innermost
  for (int i = static_cast<int>(dims.size()) - 1; i >= 2; --i) {
    strides[i] = running;
    running *= dims[i];
  }
  strides[0] = running;
  return strides;
}

}  // namespace cudnn
