// kernels/cudnn/sdpa.h: scaled-dot-product attention as one cuDNN fused-attention operation graph
// (flash attention inside cuDNN), built with the backend API: cuDNN's single SDPA_FWD operation
// when there is no bias (9.19 takes none), else the composite form cuDNN 9 recognises: MATMUL(Q, K^T) -> MUL(scale) ->
// [ADD(bias)] -> REDUCE MAX -> SUB -> EXP -> REDUCE ADD
// -> DIV (P in the I/O type) -> MATMUL(P, V), plus the softmax statistics (LOG, ADD) cuDNN needs to
// recognise the composite graph (written into the end of the workspace).
//
// Support surface (cuDNN 9.19, sm80+; checked by SdpaRejection before building): float16 I/O, 4-D
// tensors in (batch, head, position, element) order with any strides whose element stride is 1
// (so [B,H,S,D] and [B,S,H*D] are both read in place); head sizes multiples of 8 up to 256; key/
// value heads dividing the query heads; an additive bias [B or 1, H or 1, S, L] in the I/O type.
// The engine is runtime-compiled (NVRTC + libcuda), so the first build of a shape takes ~0.1-1 s.
#ifndef ONNXRUN_KERNELS_CUDNN_SDPA_H_
#define ONNXRUN_KERNELS_CUDNN_SDPA_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/cudnn/fused_graph.h"

namespace cudnn {

struct Strided4 {
  std::array<int64_t, 4> dims{}, strides{};
};

struct SdpaSpec {
  IoType type = IoType::kHalf;
  Strided4 q, k, v, o;           // q, o: [B,H,S,D|Dv]; k, v: [B,Hk,L,D|Dv]
  std::optional<Strided4> bias;  // [B|1, H|1, S, L]
  float scale = 1;
};

// Why cuDNN's fused attention cannot run `spec` ("" when it can, as far as documented).
std::string SdpaRejection(const SdpaSpec& spec);

class SdpaPlan {
 public:
  // Graph, heuristics (mode A, then fallback), the first `max_plans` configs whose plans finalize
  // (the first runs until Autotune picks another). NotFound with the rejection log when none does.
  static absl::StatusOr<SdpaPlan> Build(cudnnHandle_t handle, const SdpaSpec& spec, int max_plans = 1);
  SdpaPlan(SdpaPlan&&) noexcept;
  SdpaPlan& operator=(SdpaPlan&&) noexcept;
  ~SdpaPlan();

  // Runs on the handle's stream; `bias` only when the spec has one; `workspace` of
  // workspace_bytes() (null when 0).
  absl::Status Execute(cudnnHandle_t handle, const void* q, const void* k, const void* v, const void* bias, void* o,
                       void* workspace) const;
  // Times every finalized plan on these buffers with `time_ms` (which calls its argument on the
  // handle's stream and returns the mean GPU time) and keeps the fastest; returns what was measured
  // ("" with one plan). Not during a CUDA-graph capture.
  using TimeFn = std::function<absl::StatusOr<double>(const std::function<absl::Status()>&)>;
  absl::StatusOr<std::string> Autotune(const TimeFn& time_ms, cudnnHandle_t handle, const void* q, const void* k,
                                       const void* v, const void* bias, void* o, void* workspace);
  // Enough workspace for any plan kept (after Autotune: the chosen one's).
  size_t workspace_bytes() const;
  std::string engine_description() const;  // "engine 1 (runtime-compiled) knobs {...}, heuristics mode A"

  struct State;

 private:
  explicit SdpaPlan(std::unique_ptr<State> state);
  absl::Status ExecuteAlternative(cudnnHandle_t handle, size_t i, const void* q, const void* k, const void* v,
                                  const void* bias, void* o, void* workspace) const;
  std::unique_ptr<State> state_;
};

}  // namespace cudnn

#endif  // ONNXRUN_KERNELS_CUDNN_SDPA_H_
