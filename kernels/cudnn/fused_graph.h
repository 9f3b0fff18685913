// kernels/cudnn/fused_graph.h: one cuDNN fused operation graph — a conv (or matmul) anchor with a
// pointwise epilogue — as plain data (FusedGraphSpec), and FusedGraphPlan, the engine chosen for
// it.
//
// Build stages: validate the spec → tensor, conv/matmul and pointwise descriptors → operation graph
// → heuristics (mode A, then B, then the fallback list) → the first engine config whose execution
// plan finalizes. Rejected configs keep cuDNN's error text (rejection_log()).
//
// Conventions (see CUDNN_FACTS.md):
//  - dims are logical: x [N,C,H,W], w [K,C/G,R,S], y [N,K,P,Q] for a conv; x [B,M,K], w [B,K,N],
//    y [B,M,N] for a matmul. The layout lives in the strides (NHWC x: [HWC,1,WC,C]).
//  - UIDs are unique within a graph, virtual ones included; only non-virtual, non-by-value tensors
//    need a device pointer at Execute. By-value tensors are host scalars held by the plan.
//  - compute type is always float; virtual intermediates should be kFloat.
//  - ReLU6 should be written MAX(x,0) then MIN(x,6), never RELU_FWD with an upper clip.
//
// Example:
//   FusedGraphSpec spec = ...;  // conv + bias ADD + MAX(x, 0)
//   absl::StatusOr<FusedGraphPlan> plan = FusedGraphPlan::Build(handle, spec, {});
//   void* ws = ...;  // plan->workspace_bytes() of device memory
//   plan->Execute(handle, {{x.uid, x_dev}, {w.uid, w_dev}, {bias.uid, b_dev}, {y.uid, y_dev}}, ws);
#ifndef ONNXRUN_KERNELS_CUDNN_FUSED_GRAPH_H_
#define ONNXRUN_KERNELS_CUDNN_FUSED_GRAPH_H_

#include <cudnn.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/cudnn/descriptor.h"

namespace cudnn {

enum class IoType { kFloat, kHalf, kBFloat16 };

// fp16 and bf16: 2-byte elements, tensor-core math.
inline bool Is16Bit(IoType t) { return t != IoType::kFloat; }
inline size_t ElementBytes(IoType t) { return Is16Bit(t) ? 2 : 4; }

struct TensorDesc {
  int64_t uid = 0;
  std::vector<int64_t> dims;     // logical order (N,C,H,W / K,C,R,S / batch,M,N)
  std::vector<int64_t> strides;  // same rank as dims; carries the layout
  IoType type = IoType::kFloat;
  bool is_virtual = false;  // an intermediate inside the graph: no memory
  bool by_value = false;    // a host scalar constant (dims all 1): `value`
  double value = 0;
};

struct ConvParams {
  std::vector<int64_t> pads_begin, pads_end, strides, dilations;  // one per spatial dim
};

struct PointwiseOp {
  // "ADD","SUB","MUL","DIV","MAX","MIN","SIGMOID_FWD","TANH_FWD","ELU_FWD","SWISH_FWD","GELU_FWD",
  // "ERF","RELU_FWD","IDENTITY"
  std::string mode;
  int64_t in0 = 0;
  int64_t in1 = -1;  // -1 for unary modes
  int64_t out = 0;
  double alpha = 0;  // ELU alpha / RELU lower-clip slope (0: plain ReLU) / SWISH beta
};

struct FusedGraphSpec {
  enum Anchor { kConv, kMatMul } anchor = kConv;
  TensorDesc x, w, y;             // y may be virtual when an epilogue follows
  ConvParams conv;                // kConv only
  std::vector<TensorDesc> extra;  // epilogue operands and virtual intermediates
  std::vector<PointwiseOp> epilogue;
  bool allow_tf32 = false;  // false + all-float I/O: engines with TF32/tensor-core notes are skipped
};

struct BuildOptions {
  // A device-properties JSON (CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR serialisation, cuDNN >= 9.8):
  // heuristics and plans are made for that device, so precompiled plans finalize without a GPU.
  std::optional<std::string> device_properties_json_path;
  bool build_plan = true;  // false: stop after heuristics (candidates() only)
  // Finalize up to this many configs (heuristics order); the first is used until SelectPlan picks
  // another (autotuning times them on real buffers).
  int max_plans = 1;
  // With max_plans > 1: configs after the first finalized one are skipped when runtime-compiled
  // (each costs an NVRTC compile, 0.2-1.2 s, at a cold start); the first is kept whatever its kind.
  bool precompiled_alternatives_only = false;
};

// One engine config offered by heuristics.
struct EngineCandidate {
  int rung = 0;  // 0: heuristics mode A, 1: mode B, 2: fallback list
  int64_t engine_id = -1;
  std::vector<cudnnBackendNumericalNote_t> numerical_notes;
  std::vector<cudnnBackendBehaviorNote_t> behavior_notes;
  std::vector<std::pair<int64_t, int64_t>> knobs;  // (cudnnBackendKnobType_t, value)
  bool runtime_compiled() const;
  bool has_numerical_note(cudnnBackendNumericalNote_t note) const;
  std::string ToString() const;  // "engine 4 (runtime-compiled) knobs {...}, heuristics mode A"
};

// A built plan: owns every descriptor it was made from. Move-only.
class FusedGraphPlan {
 public:
  // `handle` may be null: then `options.device_properties_json_path` should be set (CPU-only
  // build). Errors: InvalidArgument for a malformed spec; NotFound when no config finalizes (the
  // message holds the rejection log); cuDNN failures otherwise.
  static absl::StatusOr<FusedGraphPlan> Build(cudnnHandle_t handle, const FusedGraphSpec& spec,
                                              const BuildOptions& options);
  // Rebuilds an executable plan from SerializedPlan()'s bytes: no heuristics, no compilation.
  // `spec` must be the spec the plan was built from (its UIDs and by-value scalars make the variant
  // pack; the blob cannot be checked against it). Device: options' device properties, else the
  // handle's GPU (one of them is required). candidates() holds the one loaded config (its knobs may
  // include ones heuristics left unset). Errors: InvalidArgument for a malformed spec or blob;
  // FailedPrecondition for a blob of another cuDNN version; DataLoss when the plan runs another
  // engine than the blob claims; cuDNN's error when it refuses the plan (see plan_serialization.h).
  static absl::StatusOr<FusedGraphPlan> FromSerialized(cudnnHandle_t handle, const FusedGraphSpec& spec,
                                                       std::string_view blob, const BuildOptions& options);

  FusedGraphPlan(FusedGraphPlan&&) noexcept;
  FusedGraphPlan& operator=(FusedGraphPlan&&) noexcept;
  ~FusedGraphPlan();

  // Runs the plan on the handle's stream. `device_ptrs` maps each non-virtual, non-by-value UID to
  // its device memory (16-byte aligned); `workspace` has workspace_bytes() bytes (may be null when
  // that is 0). FailedPrecondition when the plan was built with build_plan = false.
  absl::Status Execute(cudnnHandle_t handle, const std::map<int64_t, void*>& device_ptrs, void* workspace) const;

  bool has_plan() const;
  // Finalized plans held (1 + alternatives; 0 without a plan). SelectPlan(i) makes plan i the one
  // Execute runs (plan 0 is the current one; the previous current becomes alternative i);
  // DropAlternatives frees the others.
  size_t plan_count() const;
  absl::Status SelectPlan(size_t index);
  void DropAlternatives();
  size_t workspace_bytes() const;
  std::string engine_description() const;                  // the chosen candidate's ToString(); "" without a plan
  int rung() const;                                        // the chosen candidate's rung; -1 without a plan
  std::string rejection_log() const;                       // one line per rejected/skipped config, with the reason
  const std::vector<EngineCandidate>& candidates() const;  // every config heuristics offered
  std::vector<int64_t> io_uids() const;                    // UIDs Execute needs a device pointer for
  // The chosen plan as a plan blob (plan_serialization.h) for FromSerialized. FailedPrecondition
  // without a plan; cuDNN's error when its engine cannot be serialized.
  absl::StatusOr<std::string> SerializedPlan() const;

  struct State;  // implementation detail (fused_graph.cc)

 private:
  explicit FusedGraphPlan(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Reads a device-properties JSON file and returns a finalized CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR.
// NotFound when the file cannot be read; cuDNN errors (e.g. a malformed JSON) otherwise.
absl::StatusOr<BackendDescriptor> LoadDeviceProperties(const std::string& json_path);

// Packed strides for logical dims stored channels-last (rank >= 3: dim 1 innermost), e.g.
// [N,C,H,W] → [HWC,1,WC,C]; and row-major packed strides.
std::vector<int64_t> ChannelsLastStrides(const std::vector<int64_t>& dims);
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

}  // namespace cudnn

#endif  // ONNXRUN_KERNELS_CUDNN_FUSED_GRAPH_H_
