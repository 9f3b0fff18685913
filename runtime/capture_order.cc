// Keeps a captured run's kernels from overlapping where the arena reuses memory (see
// capture_order.h).
#include "runtime/capture_order.h"

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
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

absl::StatusOr<std::vector<cudaGraphNode_t>> ListNodes(cudaGraph_t graph) {
  size_t count = 0;
  if (absl::Status s = CudaOk(cudaGraphGetNodes(graph, nullptr, &count), "cudaGraphGetNodes"); !s.ok()) return s;
  std::vector<cudaGraphNode_t> nodes(count);
  if (absl::Status s = CudaOk(cudaGraphGetNodes(graph, nodes.data(), &count), "cudaGraphGetNodes"); !s.ok()) {
    return s;
  }
  nodes.resize(count);
  return nodes;
}

absl::StatusOr<EdgeList> ListEdges(cudaGraph_t graph) {
  size_t count = 0;
  if (absl::Status s = CudaOk(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count), "cudaGraphGetEdges");
      !s.ok()) {
    return s;
  }
  EdgeList edges{std::vector<cudaGraphNode_t>(count), std::vector<cudaGraphNode_t>(count),
                 std::vector<cudaGraphEdgeData>(count)};
  if (absl::Status s = CudaOk(cudaGraphGetEdges(graph, edges.from.data(), edges.to.data(), edges.data.data(), &count),
                              "cudaGraphGetEdges");
      !s.ok()) {
    return s;
  }
  edges.from.resize(count), edges.to.resize(count), edges.data.resize(count);
  return edges;
}

std::string DescribeGraph(cudaGraph_t graph) {
  absl::StatusOr<std::vector<cudaGraphNode_t>> nodes = ListNodes(graph);
  if (!nodes.ok()) return "";
  std::map<cudaGraphNodeType, int> by_type;  // in the enum's order: kernels first
  for (cudaGraphNode_t node : *nodes) {
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    if (cudaGraphNodeGetType(node, &type) == cudaSuccess) ++by_type[type];
  }
  std::vector<std::string> parts;
  for (const auto& [type, n] : by_type) {
    const auto [singular, plural] = NodeTypeName(type);
    parts.push_back(absl::StrCat(n, " ", n == 1 ? singular : plural));
  }
  std::string text = absl::StrCat(nodes->size(), " nodes (", absl::StrJoin(parts, ", "), ")");
  absl::StatusOr<EdgeList> edges = ListEdges(graph);
  if (!edges.ok()) return text;
  int programmatic = 0;
  for (const cudaGraphEdgeData& edge : edges->data) programmatic += Programmatic(edge) ? 1 : 0;
  return absl::StrCat(text, ", ", edges->data.size(), " edges (", programmatic, " programmatic)");
}

absl::StatusOr<std::optional<std::vector<cudaGraphNode_t>>> CaptureNodesIfGrown(cudaStream_t stream, size_t seen) {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  if (cudaStreamGetCaptureInfo(stream, &capturing, nullptr, &graph, nullptr, nullptr, nullptr) != cudaSuccess ||
      capturing != cudaStreamCaptureStatusActive || graph == nullptr) {
    cudaGetLastError();
    return absl::NotFoundError("the stream is not capturing");
  }
  size_t count = 0;
  if (cudaGraphGetNodes(graph, nullptr, &count) == cudaSuccess && count == seen) return std::nullopt;
  absl::StatusOr<std::vector<cudaGraphNode_t>> nodes = ListNodes(graph);
  if (!nodes.ok()) {
    cudaGetLastError();
    return nodes.status();
  }
  return *std::move(nodes);
}

void CaptureSegments::Cut(cudaStream_t stream) {
  absl::StatusOr<std::optional<std::vector<cudaGraphNode_t>>> nodes = CaptureNodesIfGrown(stream, nodes_seen_);
  if (absl::IsNotFound(nodes.status())) return;  // an invalidated capture fails at cudaStreamEndCapture
  if (!nodes.ok()) {
    lost_track_ = true;  // every programmatic edge is made full then
    return;
  }
  if (!nodes->has_value()) return;
  for (cudaGraphNode_t node : **nodes) segment_of_.emplace(node, segments_);  // keeps earlier segments
  nodes_seen_ = (*nodes)->size();
  ++segments_;
}

int CaptureSegments::SegmentOf(cudaGraphNode_t node) const {
  auto it = segment_of_.find(node);
  return it == segment_of_.end() ? segments_ : it->second;
}

absl::StatusOr<int> CaptureSegments::SerializeAcrossSegments(cudaGraph_t graph) const {
  absl::StatusOr<EdgeList> listed = ListEdges(graph);
  if (!listed.ok()) return listed.status();
  std::vector<cudaGraphNode_t>& from = listed->from;
  std::vector<cudaGraphNode_t>& to = listed->to;
  std::vector<cudaGraphEdgeData>& edges = listed->data;
  int changed = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
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
