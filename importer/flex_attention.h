// ai.onnx.preview's FlexAttention (PyTorch's flex_attention as an ONNX op) expanded into standard
// ops before the importer builds it: scaled Q K^T, the score_mod graph inlined, Softmax, the
// prob_mod graph inlined, P V, with grouped-query heads repeated and the softmax precision's casts.
// The expansion is ordinary nodes, so the partitioner fuses and places them like any others.
#ifndef ONNXRUN_IMPORTER_FLEX_ATTENTION_H_
#define ONNXRUN_IMPORTER_FLEX_ATTENTION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/shape.h"
#include "onnx/onnx_pb.h"

namespace importer {

// The default-domain nodes that compute `node` (a FlexAttention with inputs Q, K, V of types
// `q`, `k`, `v`), as the ONNX reference does: Q and K scaled by sqrt(scale) (scale defaults to
// 1/sqrt(head_size)), the scores cast to the softmax precision (the attribute, else float32 for
// 16-bit inputs, else the input type), the result cast back to V's type. Their names start with
// `prefix`; the last node writes the node's output. Errors name what is malformed (rank, heads,
// a modifier graph without one input and one output, an unsupported softmax_precision).
absl::StatusOr<std::vector<onnx::NodeProto>> ExpandFlexAttention(const onnx::NodeProto& node, const std::string& prefix,
                                                                 const ir::TensorType& q, const ir::TensorType& k,
                                                                 const ir::TensorType& v);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_FLEX_ATTENTION_H_
