// runtime/capture_order.h: keeps the steps of a captured run in stream order.
//
// cuDNN launches some of its kernels with programmatic dependent launch (PDL): in a captured CUDA
// graph, the edge into such a kernel is "programmatic", and the kernel may start (and do work ahead
// of its griddepcontrol.wait) before the kernel before it has finished. Within one cuDNN plan that
// is cuDNN's business. Between two steps it is not safe here: the activation arena
// (device_arena.h) gives a buffer that died in one step to an allocation of the next, assuming the
// next step starts after the previous one ended. Measured on the H200: resnet50 in tf32 with
// autotuned engines replayed 0.2-3% away from its step-by-step run with those edges (19 of 66), and
// matched the CPU once they were full dependencies; fp16 b1/b32 lose ~2% of replay speed to that.
//
// Use: StepNodes nodes; begin capture; after each step nodes.MarkStep(stream, s); end capture;
//      absl::StatusOr<int> made = nodes.SerializeSteps(graph);  // before cudaGraphInstantiate
#ifndef ONNXRUN_RUNTIME_CAPTURE_ORDER_H_
#define ONNXRUN_RUNTIME_CAPTURE_ORDER_H_

#include <cuda_runtime_api.h>

#include <unordered_map>

#include "absl/status/statusor.h"

namespace exec {

class StepNodes {
 public:
  // While `stream` captures: the nodes added to its graph since the previous call belong to `step`.
  absl::Status MarkStep(cudaStream_t stream, int step);
  // Makes every programmatic edge of `graph` whose two nodes belong to different steps (nodes never
  // marked count as one more step) a full dependency; returns how many it changed.
  absl::StatusOr<int> SerializeSteps(cudaGraph_t graph) const;

 private:
  int StepOf(cudaGraphNode_t node) const;
  std::unordered_map<cudaGraphNode_t, int> step_of_;
};

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CAPTURE_ORDER_H_
