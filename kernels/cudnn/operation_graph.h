// kernels/cudnn/operation_graph.h: FusedGraphSpec → a finalized cuDNN operation graph (validation,
// tensor / conv / matmul / pointwise descriptors). Internal to kernels/cudnn (used by fused_graph).
#ifndef ONNXRUN_KERNELS_CUDNN_OPERATION_GRAPH_H_
#define ONNXRUN_KERNELS_CUDNN_OPERATION_GRAPH_H_

#include <cudnn.h>

#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/cudnn/descriptor.h"
#include "kernels/cudnn/fused_graph.h"

namespace cudnn {

// The operation graph and every descriptor it references (kept alive together).
struct OperationGraph {
  std::vector<BackendDescriptor> parts;  // tensors, conv/matmul/pointwise descriptors, operations
  BackendDescriptor graph;               // finalized CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR
};

// InvalidArgument naming the problem when the spec is malformed (duplicate or unknown UIDs, rank
// mismatches, unknown pointwise modes, a missing conv parameter, ...).
absl::Status ValidateSpec(const FusedGraphSpec& spec);

// Validates, then builds and finalizes the graph. Needs no GPU and no handle.
absl::StatusOr<OperationGraph> BuildOperationGraph(const FusedGraphSpec& spec);

// The cuDNN pointwise mode for a spec name ("ADD", "RELU_FWD", ...); InvalidArgument if unknown.
absl::StatusOr<cudnnPointwiseMode_t> PointwiseModeFromName(const std::string& name);
bool IsBinaryPointwise(cudnnPointwiseMode_t mode);

cudnnDataType_t ToCudnnDataType(IoType type);

// The pieces the graph builders share (also kernels/cudnn/sdpa.cc): a finalized tensor
// descriptor; a matmul operation C = A B (float compute; its matmul descriptor goes to `parts`); a
// pointwise operation reading and writing the tensors named by UID in `tensors`.
absl::StatusOr<BackendDescriptor> MakeTensor(const TensorDesc& t);
absl::StatusOr<BackendDescriptor> MakeMatMulOperation(const BackendDescriptor& a, const BackendDescriptor& b,
                                                      const BackendDescriptor& c,
                                                      std::vector<BackendDescriptor>& parts);
absl::StatusOr<BackendDescriptor> MakePointwiseOp(const PointwiseOp& p, std::map<int64_t, BackendDescriptor*>& tensors,
                                                  std::vector<BackendDescriptor>& parts);

}  // namespace cudnn

#endif  // ONNXRUN_KERNELS_CUDNN_OPERATION_GRAPH_H_
