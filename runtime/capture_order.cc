// Keeps a captured run's kernels from overlapping where the arena reuses memory (see
// capture_order.h).
#include "runtime/capture_order.h"

#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cuda_run_util.h"

namespace exec {
namespace {

bool Programmatic(const cudaGraphEdgeData& edge) {
  return edge.type != cudaGraphDependencyTypeDefault || edge.from_port != cudaGraphKernelNodePortDefault;
}

// The name of a node type, singular and plural.
std::pair<const char*, const char*> NodeTypeName(cudaGraphNodeType type) {
  switch (type) {
    case cudaGraphNodeTypeKernel: return {"kernel", "kernels"};
    case cudaGraphNodeTypeMemcpy: return {"copy", "copies"};
    case cudaGraphNodeTypeMemset: return {"memset", "memsets"};
    case cudaGraphNodeTypeMemAlloc: return {"allocation", "allocations"};
    case cudaGraphNodeTypeMemFree: return {"free", "frees"};
    case cudaGraphNodeTypeEmpty: return {"empty node", "empty nodes"};
    case cudaGraphNodeTypeEventRecord: return {"event record", "event records"};
    case cudaGraphNodeTypeWaitEvent: return {"event wait", "event waits"};
    default: return {"other node", "other nodes"};
  }
}

}  // namespace

std::string DescribeGraph(cudaGraph_t graph) {
  size_t count = 0;
  if (cudaGraphGetNodes(graph, nullptr, &count) != cudaSuccess) return "";
  std::vector<cudaGraphNode_t> nodes(count);
  if (cudaGraphGetNodes(graph, nodes.data(), &count) != cudaSuccess) return "";
  std::map<cudaGraphNodeType, int> by_type;  // in the enum's order: kernels first
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    if (cudaGraphNodeGetType(node, &type) == cudaSuccess) ++by_type[type];
  }
  std::vector<std::string> parts;
  for (const auto& [type, n] : by_type) {
    const auto [singular, plural] = NodeTypeName(type);
    parts.push_back(absl::StrCat(n, " ", n == 1 ? singular : plural));
  }
  std::string text = absl::StrCat(count, " nodes (", absl::StrJoin(parts, ", "), ")");
  size_t edge_count = 0;
  if (cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edge_count) != cudaSuccess) return text;
  std::vector<cudaGraphNode_t> from(edge_count), to(edge_count);
  std::vector<cudaGraphEdgeData> edges(edge_count);
  if (cudaGraphGetEdges(graph, from.data(), to.data(), edges.data(), &edge_count) != cudaSuccess) return text;
  int programmatic = 0;
  for (const cudaGraphEdgeData& edge : edges) programmatic += Programmatic(edge) ? 1 : 0;
  return absl::StrCat(text, ", ", edge_count, " edges (", programmatic, " programmatic)");
}

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
