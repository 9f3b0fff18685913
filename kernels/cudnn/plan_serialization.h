// kernels/cudnn/plan_serialization.h: a finalized execution plan ↔ bytes, through cuDNN's own plan
// serialization, and the small envelope ("plan blob") that FusedGraphPlan::SerializedPlan /
// FromSerialized exchange with a persistent plan cache.
//
// cuDNN side (9.19, checked on the H100 and on a CPU-only machine):
//  - Save: CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION of a finalized plan, CUDNN_TYPE_CHAR (a
//    count query, then the text). The JSON holds cudnnVersion, schemaVersion, the whole operation
//    graph (tensors named by UID, nodes), the GPUProfile it was made for (device properties incl.
//    SM count, deviceVer, driverVer, name) and the engine (id, smVersion, knob choices). For a
//    runtime-compiled engine it also holds engine.payload.kernels[]: kernel name, launch params and
//    the compiled cubin (base64 ELF), so ~50 KB instead of ~3 KB.
//  - Load: a fresh plan descriptor, the text set on that attribute, the target device set with
//    CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP (the handle attribute is deprecated), finalize. No
//    operation graph, no heuristics, no NVRTC: the cubin is loaded as is (H100: ~7-35 ms, against
//    ~90-140 ms for heuristics + compile of a small conv+bias+ReLU6, N=2 32→64 12x12). The loaded
//    config may list knobs heuristics left out (SPLIT_K_SLC = -1 on the runtime-compiled engine 4).
//  - cuDNN refuses (ARCH_MISMATCH) a plan whose GPUProfile differs from the target device in any
//    field tried (SM count, compute capability, driver version). Precompiled plans load without a
//    GPU; a runtime-compiled one needs libcuda (RUNTIME_PREREQUISITE_MISSING otherwise). Without
//    device properties (and no GPU) cuDNN 9.19 crashes in finalize, so a device is required here.
//  - The text is not checked against a spec: the variant pack's UIDs and by-value scalars come
//    from the caller's spec, and the cache key must pin the spec (ops, shapes, strides, dtypes).
//
// Plan blob: one header line, then cuDNN's text verbatim:
//   "onnxrun-cudnn-plan 1 cudnn=<cudnnGetVersion()> rung=<r> engine=<global engine index>\n<json>"
// The header lets a loader reject a blob of another cuDNN version before cuDNN parses it, and
// check that the loaded plan runs the engine the blob claims.
#ifndef ONNXRUN_KERNELS_CUDNN_PLAN_SERIALIZATION_H_
#define ONNXRUN_KERNELS_CUDNN_PLAN_SERIALIZATION_H_

#include <cudnn.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "kernels/cudnn/descriptor.h"
#include "kernels/cudnn/fused_graph.h"

namespace cudnn {

// cuDNN's serialization of a finalized plan. FailedPrecondition for an empty or unfinalized
// descriptor; cuDNN's error (with its text) when the plan's engine cannot be serialized.
absl::StatusOr<std::string> SerializeExecutionPlan(const BackendDescriptor& plan);

// A finalized plan rebuilt from SerializeExecutionPlan's text, for the device `device_props`
// describes. InvalidArgument for empty text or empty device properties; cuDNN's error for text it
// refuses (malformed: BAD_PARAM; another device: ARCH_MISMATCH; ...).
absl::StatusOr<BackendDescriptor> DeserializeExecutionPlan(std::string_view text,
                                                           const BackendDescriptor& device_props);

// The engine config a finalized plan runs (CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG).
absl::StatusOr<BackendDescriptor> PlanEngineConfig(const BackendDescriptor& plan);

// The envelope, decoded.
struct PlanBlob {
  int64_t cudnn_version = 0;  // cudnnGetVersion() of the process that serialized the plan
  int rung = 0;               // EngineCandidate::rung of the chosen config
  int64_t engine_id = -1;     // its global engine index
  std::string cudnn_text;     // SerializeExecutionPlan's output
};
inline constexpr int kPlanBlobFormatVersion = 1;

std::string EncodePlanBlob(const PlanBlob& blob);
// InvalidArgument for anything that is not a well-formed blob of kPlanBlobFormatVersion (never
// crashes on garbage). The cuDNN version is returned, not checked: see CheckPlanBlobVersion.
absl::StatusOr<PlanBlob> DecodePlanBlob(std::string_view bytes);
// FailedPrecondition when `blob` was serialized by a cuDNN other than this process's.
absl::Status CheckPlanBlobVersion(const PlanBlob& blob);

// What FusedGraphPlan::FromSerialized needs from a blob: the loaded plan, its config described
// (the blob's rung; engine id checked against the blob), its workspace size, and the device
// properties it was loaded for (kept alive with the plan). Device: options'
// device_properties_json_path if set, else the handle's GPU, else InvalidArgument.
struct LoadedPlan {
  BackendDescriptor device_props;
  BackendDescriptor plan;
  BackendDescriptor config;
  EngineCandidate candidate;
  int64_t workspace = 0;
};
absl::StatusOr<LoadedPlan> LoadPlanBlob(cudnnHandle_t handle, std::string_view bytes, const BuildOptions& options);

}  // namespace cudnn

#endif  // ONNXRUN_KERNELS_CUDNN_PLAN_SERIALIZATION_H_
