// runtime/capture_order.h: keeps a captured run's kernels from overlapping where the activation
// arena reuses memory.
//
// cuDNN launches some of its kernels with programmatic dependent launch (PDL): in a captured CUDA
// graph the edge into such a kernel is "programmatic", and the kernel may start (and do work ahead
// of its griddepcontrol.wait) before the kernel before it has finished — and so may a chain of
// such kernels. The activation arena (device_arena.h) gives memory that one buffer freed to a
// later allocation, assuming stream order: work launched after the free starts after work launched
// before it ended. So the capture is cut into segments at every arena allocation and free, and a
// programmatic edge between two segments becomes a full dependency before the graph is
// instantiated; within a segment (no buffer born or freed between the two launches, as within one
// cuDNN plan) it stays. Measured on the H200: resnet50 in tf32 with autotuned engines replayed
// 0.2-3% away from its step-by-step run with all such edges kept (19 of 66), and matched the CPU
// with the edges between steps made full; fp16 batch 1 replays 0.328 -> 0.330-0.332 ms.
//
// Graphs with memory alloc/free nodes (the capture without the arena) cannot lose edges (CUDA);
// the driver orders their memory reuse itself.
//
// Use: CaptureSegments segments; begin capture; segments.Cut(stream) at every allocation and free
//      (ArenaAllocator's listener); end capture; segments.SerializeAcrossSegments(graph).
#ifndef ONNXRUN_RUNTIME_CAPTURE_ORDER_H_
#define ONNXRUN_RUNTIME_CAPTURE_ORDER_H_

#include <cuda_runtime_api.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"

namespace exec {

class CaptureSegments {
 public:
  // While `stream` captures: the nodes added since the previous cut form one segment. A no-op when
  // the stream is not capturing (a buffer freed after the capture ended).
  void Cut(cudaStream_t stream);
  // Makes every programmatic edge of `graph` whose two nodes lie in different segments (nodes
  // added after the last cut count as one more) a full dependency; returns how many it changed.
  absl::StatusOr<int> SerializeAcrossSegments(cudaGraph_t graph) const;

 private:
  int SegmentOf(cudaGraphNode_t node) const;
  std::unordered_map<cudaGraphNode_t, int> segment_of_;
  int segments_ = 0;
  size_t nodes_seen_ = 0;
  bool lost_track_ = false;  // a cut could not list the nodes: no edge is trusted
};

// The graph's nodes, as cudaGraphGetNodes lists them.
absl::StatusOr<std::vector<cudaGraphNode_t>> ListNodes(cudaGraph_t graph);
// The graph's edges, as cudaGraphGetEdges lists them: from[i] -> to[i] of kind data[i].
struct EdgeList {
  std::vector<cudaGraphNode_t> from, to;
  std::vector<cudaGraphEdgeData> data;
};
absl::StatusOr<EdgeList> ListEdges(cudaGraph_t graph);

// The nodes of the graph `stream` is capturing, where it has other than `seen` of them; nullopt
// where it has `seen`; NotFound where the stream is not capturing; else the listing's error (CUDA's
// last error cleared either way).
absl::StatusOr<std::optional<std::vector<cudaGraphNode_t>>> CaptureNodesIfGrown(cudaStream_t stream, size_t seen);

// What `graph` holds, for the benchmark's line: "61 nodes (59 kernels, 1 copy, 1 memset), 60 edges (0
// programmatic)". Empty, or without the edges, where CUDA cannot list them.
std::string DescribeGraph(cudaGraph_t graph);

}  // namespace exec

#endif  // ONNXRUN_RUNTIME_CAPTURE_ORDER_H_
