// Layout: chooses the physical layout of 4-D tensors for a channels-last device and lists the
// edges where a reader needs another layout than the value has. Annotations only (Value::layout):
// dims stay logical, and executors that ignore layout (the CPU) stay correct.
//
// Annotations:
//   "NHWC"  every 4-D floating-point value produced by a spatial node (conv, pooling, channel
//           normalisation, Resize, Global*), and by a layout-agnostic node (pointwise, Concat, Pad:
//           ops whose attributes do not name NCHW axes) that reads such a value or feeds a node
//           storing NHWC; 4-D values away from spatial ops (attention heads) stay logical;
//           A Transpose(0, 3, 1, 2) of a logical value that feeds a node storing NHWC (an NHWC
//           graph input before the first conv, as tf2onnx writes) stores its output NHWC: the
//           bytes of its input, so an executor may run it as a view;
//   "KRSC"  4-D constant Conv/ConvTranspose weights read only as weights (not graph outputs);
//   ""      everything else: graph inputs, other constants, and outputs of ops whose axes refer to
//           the logical order (Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Gather, Slice,
//           Split, Concat, DepthToSpace, Pad, Softmax, reductions, MatMul, ...), which these ops
//           read and write in logical (NCHW) order.
#ifndef ONNXRUN_PARTITIONER_LAYOUT_H_
#define ONNXRUN_PARTITIONER_LAYOUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class Layout : public Pass {
 public:
  Layout() = default;

  std::string_view name() const override { return "layout"; }
  // Sets Value::layout of every value as above; true when any annotation changed.
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

// One edge that needs a layout conversion: `value` is read by node `consumer` (-1: the value is a
// graph output, which the user receives in logical order) in layout `to`, while it is stored in
// layout `from`. Layout names: "NCHW" (logical order), "NHWC".
struct LayoutConversion {
  ir::ValueId value = ir::kNoValue;
  ir::NodeId consumer = -1;
  std::string from;
  std::string to;
};

// Whether `node` is a Transpose whose input has rank perm.size() and whose (resolved) perm is `perm`.
bool IsTransposeWithPerm(const ir::Graph& graph, const ir::Node& node, absl::Span<const int64_t> perm);

// Whether `node` is a Transpose whose output's stored bytes are its input's: (0, 3, 1, 2) from a
// logical value to an NHWC one, or (0, 2, 3, 1) from an NHWC value to a logical one. Its input
// needs no conversion.
bool IsLayoutViewTranspose(const ir::Graph& graph, const ir::Node& node);

// True for ops that accept 4-D activations in NHWC and produce their 4-D outputs in NHWC.
bool AcceptsChannelsLast(std::string_view op_type);

// Every edge of an annotated graph where a reader gets a layout it cannot take, in node order
// then graph-output order:
//   a logical 4-D value (graph input, constant, output of a logical-order op) read by a node that
//   produces NHWC: NCHW -> NHWC;
//   an NHWC value read by a node that does not produce NHWC (a logical-order op, or an agnostic op
//   whose outputs are not 4-D float): NHWC -> NCHW;
//   an NHWC graph output: NHWC -> NCHW (consumer -1).
// Conv/ConvTranspose weights (input 1), Shape's input (only its dims are read) and a layout-view
// Transpose's input (IsLayoutViewTranspose) never convert.
std::vector<LayoutConversion> FindLayoutConversions(const ir::Graph& graph);

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_LAYOUT_H_
