// kernels/cudnn/engine.cc: heuristics queries, engine-config summaries, plan finalization and
// device properties loaded from JSON.
#include "kernels/cudnn/engine.h"

#include <dlfcn.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cudnn/status.h"

namespace cudnn {
namespace {

// cuDNN's mode-B heuristics are not thread-safe (cudnn-frontend serialises them too).
std::mutex& HeuristicsModeBMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}

const char* NumericalNoteName(cudnnBackendNumericalNote_t note) {
  switch (note) {
    case CUDNN_NUMERICAL_NOTE_TENSOR_CORE: return "tensor_core";
    case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: return "down_convert_inputs";
    case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION: return "reduced_precision_reduction";
    case CUDNN_NUMERICAL_NOTE_FFT: return "fft";
    case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC: return "nondeterministic";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD: return "winograd";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4: return "winograd_4x4";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6: return "winograd_6x6";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13: return "winograd_13x13";
    case CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP: return "strict_nan_prop";
    default: return "unknown";
  }
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> KnobChoices(const BackendDescriptor& config) {
  CUDNN_ASSIGN_OR_RETURN(std::vector<BackendDescriptor> choices,
                         BackendDescriptor::CreateMany(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS));
  CUDNN_ASSIGN_OR_RETURN(int64_t filled, config.GetDescriptors(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, choices));
  std::vector<std::pair<int64_t, int64_t>> knobs;
  for (int64_t i = 0; i < filled; ++i) {
    CUDNN_ASSIGN_OR_RETURN(cudnnBackendKnobType_t type,
                           choices[i].Get<cudnnBackendKnobType_t>(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE));
    CUDNN_ASSIGN_OR_RETURN(int64_t value, choices[i].Get<int64_t>(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE));
    knobs.emplace_back(static_cast<int64_t>(type), value);
  }
  std::sort(knobs.begin(), knobs.end());
  return knobs;
}

}  // namespace

const char* RungName(int rung) {
  switch (rung) {
    case 0: return "heuristics mode A";
    case 1: return "heuristics mode B";
    case 2: return "fallback list";
    default: return "none";
  }
}

bool EngineCandidate::runtime_compiled() const {
  return std::find(behavior_notes.begin(), behavior_notes.end(), CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) !=
         behavior_notes.end();
}

bool EngineCandidate::has_numerical_note(cudnnBackendNumericalNote_t note) const {
  return std::find(numerical_notes.begin(), numerical_notes.end(), note) != numerical_notes.end();
}

std::string EngineCandidate::ToString() const {
  std::vector<std::string> knob_text, note_text;
  for (const auto& [type, value] : knobs) knob_text.push_back(absl::StrCat(type, ":", value));
  for (cudnnBackendNumericalNote_t note : numerical_notes) {
    note_text.push_back(NumericalNoteName(note));
  }
  return absl::StrCat("engine ", engine_id, runtime_compiled() ? " (runtime-compiled)" : "", " knobs {",
                      absl::StrJoin(knob_text, ", "), "}",
                      note_text.empty() ? "" : absl::StrCat(" notes {", absl::StrJoin(note_text, ", "), "}"), ", ",
                      RungName(rung));
}

absl::StatusOr<BackendDescriptor> LoadDeviceProperties(const std::string& json_path) {
  std::ifstream in(json_path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read device properties ", json_path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string json = buffer.str();
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor props, BackendDescriptor::Create(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(props.SetRaw(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
                                      static_cast<int64_t>(json.size()), json.data()));
  CUDNN_RETURN_IF_NOT_OK(props.Finalize());
  return props;
}

absl::StatusOr<BackendDescriptor> DevicePropertiesFromHandle(cudnnHandle_t handle) {
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor props, BackendDescriptor::Create(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(props.SetRaw(CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle));
  CUDNN_RETURN_IF_NOT_OK(props.Finalize());
  return props;
}

absl::StatusOr<std::vector<BackendDescriptor>> QueryHeuristics(const BackendDescriptor& graph,
                                                               cudnnBackendHeurMode_t mode,
                                                               const BackendDescriptor& device_props) {
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor heur, BackendDescriptor::Create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(heur.SetDescriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph));
  CUDNN_RETURN_IF_NOT_OK(heur.Set(CUDNN_ATTR_ENGINEHEUR_MODE, mode));
  if (device_props.get() != nullptr) {
    CUDNN_RETURN_IF_NOT_OK(heur.SetDescriptor(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, device_props));
  }
  if (mode == CUDNN_HEUR_MODE_B) {
    std::lock_guard<std::mutex> lock(HeuristicsModeBMutex());
    CUDNN_RETURN_IF_NOT_OK(heur.Finalize());
  } else {
    CUDNN_RETURN_IF_NOT_OK(heur.Finalize());
  }
  CUDNN_ASSIGN_OR_RETURN(int64_t count, heur.Count(CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR));
  CUDNN_ASSIGN_OR_RETURN(std::vector<BackendDescriptor> configs,
                         BackendDescriptor::CreateMany(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, count));
  CUDNN_ASSIGN_OR_RETURN(int64_t filled, heur.GetDescriptors(CUDNN_ATTR_ENGINEHEUR_RESULTS, configs));
  configs.resize(static_cast<size_t>(filled));
  return configs;
}

absl::StatusOr<EngineCandidate> DescribeConfig(const BackendDescriptor& config, int rung) {
  EngineCandidate out;
  out.rung = rung;
  CUDNN_ASSIGN_OR_RETURN(std::vector<BackendDescriptor> engine,
                         BackendDescriptor::CreateMany(CUDNN_BACKEND_ENGINE_DESCRIPTOR, 1));
  CUDNN_RETURN_IF_NOT_OK(config.GetDescriptors(CUDNN_ATTR_ENGINECFG_ENGINE, engine).status());
  CUDNN_ASSIGN_OR_RETURN(out.engine_id, engine[0].Get<int64_t>(CUDNN_ATTR_ENGINE_GLOBAL_INDEX));
  CUDNN_ASSIGN_OR_RETURN(out.numerical_notes, engine[0].GetArray<cudnnBackendNumericalNote_t>(
                                                  CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT));
  CUDNN_ASSIGN_OR_RETURN(out.behavior_notes, engine[0].GetArray<cudnnBackendBehaviorNote_t>(
                                                 CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT));
  CUDNN_ASSIGN_OR_RETURN(out.knobs, KnobChoices(config));
  return out;
}

std::string StrictFp32Rejection(const EngineCandidate& candidate) {
  for (cudnnBackendNumericalNote_t note : {CUDNN_NUMERICAL_NOTE_TENSOR_CORE, CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS,
                                           CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION}) {
    if (candidate.has_numerical_note(note)) {
      return absl::StrCat("strict fp32: numerical note ", NumericalNoteName(note));
    }
  }
  return "";
}

// Why an alternative config computes less exactly or less reproducibly than the first one chosen
// (a numerical note the first lacks: reduced-precision reduction, down-converted inputs, FFT,
// Winograd, nondeterminism), or "": autotuning never trades those for speed.
std::string NumericsWorseThan(const EngineCandidate& alternative, const EngineCandidate& first) {
  for (cudnnBackendNumericalNote_t note :
       {CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION, CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS,
        CUDNN_NUMERICAL_NOTE_FFT, CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC, CUDNN_NUMERICAL_NOTE_WINOGRAD,
        CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4, CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6,
        CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13}) {
    if (alternative.has_numerical_note(note) && !first.has_numerical_note(note)) {
      return absl::StrCat("numerical note ", NumericalNoteName(note), " that the first config lacks");
    }
  }
  return "";
}

std::string MissingRuntimeLibraries() {
  std::vector<std::string> missing;
  for (const char* lib : {"libcuda.so.1", "libnvrtc.so.13", "libcublasLt.so.13"}) {
    void* handle = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) {
      missing.push_back(lib);
    } else {
      dlclose(handle);
    }
  }
  return absl::StrJoin(missing, ", ");
}

absl::StatusOr<BackendDescriptor> FinalizePlan(const BackendDescriptor& config, const BackendDescriptor& device_props) {
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor plan, BackendDescriptor::Create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(plan.SetDescriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config));
  if (device_props.get() != nullptr) {
    CUDNN_RETURN_IF_NOT_OK(plan.SetDescriptor(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, device_props));
  }
  CUDNN_RETURN_IF_NOT_OK(plan.Finalize());
  return plan;
}

absl::Status ExecutePlan(cudnnHandle_t handle, const BackendDescriptor& plan, const std::vector<int64_t>& uids,
                         const std::vector<void*>& ptrs, void* workspace) {
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor pack, BackendDescriptor::Create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(pack.Set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, uids));
  CUDNN_RETURN_IF_NOT_OK(pack.SetPointers(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, ptrs));
  void* ws[] = {workspace};
  CUDNN_RETURN_IF_NOT_OK(pack.SetPointers(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, ws));
  CUDNN_RETURN_IF_NOT_OK(pack.Finalize());
  CUDNN_RETURN_IF_ERROR(cudnnBackendExecute(handle, plan.get(), pack.get()));
  return absl::OkStatus();
}

}  // namespace cudnn
