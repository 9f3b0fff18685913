// Keeps a captured run's kernels from overlapping where the arena reuses memory (see
// capture_order.h).
#include "runtime/capture_order.h"

#include <vector>

#include "runtime/cuda_run_util.h"

namespace exec {
namespace {

bool Programmatic(const cudaGraphEdgeData& edge) {
  return edge.type != cudaGraphDependencyTypeDefault || edge.from_port != cudaGraphKernelNodePortDefault;
}

}  // namespace

void CaptureSegments::Cut(cudaStream_t stream) {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  if (cudaStreamGetCaptureInfo(stream, &capturing, nullptr, &graph, nullptr, nullptr, nullptr) != cudaSuccess ||
      capturing != cudaStreamCaptureStatusActive || graph == nullptr) {
    cudaGetLastError();  // an invalidated capture fails at cudaStreamEndCapture; nothing to cut
    return;
  }
  size_t count = 0;
  std::vector<cudaGraphNode_t> nodes;
  if (cudaGraphGetNodes(graph, nullptr, &count) == cudaSuccess && count == nodes_seen_) return;
  nodes.resize(count);
  if (cudaGraphGetNodes(graph, nodes.data(), &count) != cudaSuccess) {
    cudaGetLastError();
    lost_track_ = true;  // every programmatic edge is made full then
    return;
  }
  for (cudaGraphNode_t node : nodes) segment_of_.emplace(node, segments_);  // keeps earlier segments
  nodes_seen_ = count;
  ++segments_;
}

int CaptureSegments::SegmentOf(cudaGraphNode_t node) const {
  auto it = segment_of_.find(node);
  return it == segment_of_.end() ? segments_ : it->second;
}

absl::StatusOr<int> CaptureSegments::SerializeAcrossSegments(cudaGraph_t graph) const {
  size_t count = 0;
  if (absl::Status s = CudaOk(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count), "cudaGraphGetEdges");
      !s.ok()) {
    return s;
  }
  std::vector<cudaGraphNode_t> from(count), to(count);
  std::vector<cudaGraphEdgeData> edges(count);
  if (absl::Status s =
          CudaOk(cudaGraphGetEdges(graph, from.data(), to.data(), edges.data(), &count), "cudaGraphGetEdges");
      !s.ok()) {
    return s;
  }
  int changed = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!Programmatic(edges[i]) || (!lost_track_ && SegmentOf(from[i]) == SegmentOf(to[i]))) continue;
    absl::Status removed =
        CudaOk(cudaGraphRemoveDependencies(graph, &from[i], &to[i], &edges[i], 1), "cudaGraphRemoveDependencies");
    if (!removed.ok()) return removed;
    const cudaGraphEdgeData full{};  // zeroes: the whole upstream node, with memory visibility
    absl::Status added =
        CudaOk(cudaGraphAddDependencies(graph, &from[i], &to[i], &full, 1), "cudaGraphAddDependencies");
    if (!added.ok()) return added;
    ++changed;
  }
  return changed;
}

}  // namespace exec
