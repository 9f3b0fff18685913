// Keeps the steps of a captured run in stream order (see capture_order.h).
#include "runtime/capture_order.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace exec {
namespace {

absl::Status CudaOk(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorString(error)));
}

bool Programmatic(const cudaGraphEdgeData& edge) {
  return edge.type != cudaGraphDependencyTypeDefault || edge.from_port != cudaGraphKernelNodePortDefault;
}

}  // namespace

absl::Status StepNodes::MarkStep(cudaStream_t stream, int step) {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  absl::Status info = CudaOk(cudaStreamGetCaptureInfo(stream, &capturing, nullptr, &graph, nullptr, nullptr, nullptr),
                             "cudaStreamGetCaptureInfo");
  if (!info.ok()) return info;
  if (capturing != cudaStreamCaptureStatusActive || graph == nullptr) {
    return absl::FailedPreconditionError("StepNodes::MarkStep: the stream is not capturing");
  }
  size_t count = 0;
  if (absl::Status s = CudaOk(cudaGraphGetNodes(graph, nullptr, &count), "cudaGraphGetNodes"); !s.ok()) return s;
  if (count == step_of_.size()) return absl::OkStatus();
  std::vector<cudaGraphNode_t> nodes(count);
  if (absl::Status s = CudaOk(cudaGraphGetNodes(graph, nodes.data(), &count), "cudaGraphGetNodes"); !s.ok()) return s;
  for (cudaGraphNode_t node : nodes) step_of_.emplace(node, step);  // keeps an earlier step's mark
  return absl::OkStatus();
}

int StepNodes::StepOf(cudaGraphNode_t node) const {
  auto it = step_of_.find(node);
  return it == step_of_.end() ? -1 : it->second;
}

absl::StatusOr<int> StepNodes::SerializeSteps(cudaGraph_t graph) const {
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
    if (!Programmatic(edges[i]) || StepOf(from[i]) == StepOf(to[i])) continue;
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
