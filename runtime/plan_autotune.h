// Choosing among a cuDNN plan's finalized engine configs by timing each on the step's real shapes:
// one execution at a time (the latency of one request), or K executions at once on K streams (the
// throughput of K requests in flight, PlanBuildOptions::tune_streams).
#ifndef ONNXRUN_RUNTIME_PLAN_AUTOTUNE_H_
#define ONNXRUN_RUNTIME_PLAN_AUTOTUNE_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

#include "kernels/cudnn/fused_graph.h"

namespace exec {

// Times every finalized config of `plan` (whose tensors `spec` describes) on zero-filled buffers,
// `streams` executions at once (each on its own stream and buffers, forked from `stream` and joined
// back), keeps the fastest and drops the others. `note` says what was timed. False when the timing
// could not be done: the first config is kept. Where `streams` copies of the buffers do not fit, one
// execution at a time is timed (the note says so).
bool AutotunePlan(cudnnHandle_t handle, cudaStream_t stream, const cudnn::FusedGraphSpec& spec, int streams,
                  cudnn::FusedGraphPlan& plan, std::string* note);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_PLAN_AUTOTUNE_H_
