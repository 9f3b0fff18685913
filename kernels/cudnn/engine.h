// kernels/cudnn/engine.h: engine selection for a finalized operation graph — device properties from
// JSON, heuristics per mode, a readable summary of each engine config, and execution-plan
// finalization. Internal to kernels/cudnn (used by fused_graph).
#ifndef ONNXRUN_KERNELS_CUDNN_ENGINE_H_
#define ONNXRUN_KERNELS_CUDNN_ENGINE_H_

#include <cudnn.h>

#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cudnn/descriptor.h"
#include "kernels/cudnn/fused_graph.h"

namespace cudnn {

// The heuristics modes in rung order: A, B, fallback.
inline constexpr cudnnBackendHeurMode_t kHeuristicRungs[] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_B,
                                                             CUDNN_HEUR_MODE_FALLBACK};
const char* RungName(int rung);

// The engine configs heuristics offer for `graph` in `mode` (best first). `device_props` may be an
// empty descriptor (then cuDNN queries the current device).
// Device properties of the handle's GPU (CUDNN_ATTR_DEVICEPROP_HANDLE): given to heuristics and
// plans so they are made for the GPU that executes them (without them, plans may be built for
// another architecture and fail at execute with ARCH_MISMATCH).
absl::StatusOr<BackendDescriptor> DevicePropertiesFromHandle(cudnnHandle_t handle);

absl::StatusOr<std::vector<BackendDescriptor>> QueryHeuristics(const BackendDescriptor& graph,
                                                               cudnnBackendHeurMode_t mode,
                                                               const BackendDescriptor& device_props);

// Engine id, notes and knob choices of a finalized engine config.
absl::StatusOr<EngineCandidate> DescribeConfig(const BackendDescriptor& config, int rung);

// Why a config must be skipped for strict fp32 ("" when it may be used): the notes that imply
// TF32 / reduced precision (TENSOR_CORE, DOWN_CONVERT_INPUTS, REDUCED_PRECISION_REDUCTION).
std::string StrictFp32Rejection(const EngineCandidate& candidate);

// Why `alternative` computes less exactly or less reproducibly than `first` (a numerical note the
// first lacks: reduced-precision reduction, down-converted inputs, FFT, Winograd, nondeterminism),
// or "": autotuning never trades those for speed.
std::string NumericsWorseThan(const EngineCandidate& alternative, const EngineCandidate& first);

// Which runtime prerequisites of cuDNN's engines cannot be loaded here ("" when all can):
// libcuda + NVRTC for runtime-compiled engines, cuBLASLt for the plain matmul engine. cuDNN reports
// a missing one only as "0 configs" (CUDNN_FACTS lesson 9).
std::string MissingRuntimeLibraries();

// Finalizes an execution plan for `config`; attaches `device_props` when it is non-empty.
absl::StatusOr<BackendDescriptor> FinalizePlan(const BackendDescriptor& config, const BackendDescriptor& device_props);

// Runs `plan` on the handle's stream with a variant pack of the tensors `uids` at `ptrs` (device
// pointers, or host pointers for by-value scalars) and `workspace`.
absl::Status ExecutePlan(cudnnHandle_t handle, const BackendDescriptor& plan, const std::vector<int64_t>& uids,
                         const std::vector<void*>& ptrs, void* workspace);

}  // namespace cudnn

#endif  // ONNXRUN_KERNELS_CUDNN_ENGINE_H_
