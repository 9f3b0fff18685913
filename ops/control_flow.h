// Control flow (If, Loop, Scan-8 and Scan 9+): the layout of a control-flow node's inputs (explicit
// ones, then the implicit inputs its bodies read from the enclosing graph), Scan's attributes, and
// the type/shape inference of the three ops. Bodies are GRAPH attributes (ir::GraphPtr); their
// inputs end with the captured inputs bound to the node's implicit inputs
// (ir::Graph::num_captured_inputs).
#ifndef ONNXRUN_OPS_CONTROL_FLOW_H_
#define ONNXRUN_OPS_CONTROL_FLOW_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace ops {

// Iterations one Loop or Scan may run before the run fails with ResourceExhausted (a trip count or
// sequence past it fails at once; a loop its condition keeps going fails on reaching it): a model
// asking for 2^62 iterations, or looping forever, ends in seconds instead of hours.
inline constexpr int64_t kMaxControlFlowIterations = int64_t{1} << 20;

// If, Loop or Scan: ops whose bodies run on the host through the CPU interpreter on every backend.
bool IsControlFlowOp(std::string_view op_type);

// The body attribute `name`; InvalidArgument when absent.
absl::StatusOr<const ir::Graph*> BodyOf(const ir::Node& node, const std::string& name);
// The node's explicit inputs (ONNX's inputs; the implicit ones follow); an error when the node
// has fewer inputs than the body captures.
absl::StatusOr<size_t> NumExplicitInputs(const ir::Node& node, const ir::Graph& body);
// The number of a body's own (formal) inputs, captured ones not counted.
size_t NumFormalInputs(const ir::Graph& body);

// Scan: the attributes, one direction and axis per scan input and per scan output (axes as given,
// possibly negative: normalise them against the rank). Scan-8 has one batch dim in front of every
// input and output and a sequence_lens input first.
struct ScanAttrs {
  bool batched = false;    // Scan-8
  size_t first_input = 0;  // 1 for Scan-8 (after sequence_lens)
  size_t num_state = 0;
  size_t num_scan_inputs = 0;
  size_t num_scan_outputs = 0;
  std::vector<int64_t> input_directions, input_axes, output_directions, output_axes;
};
// Checks the counts against the body and the node's outputs, and each attribute's length and values.
absl::StatusOr<ScanAttrs> ParseScanAttrs(const ir::Node& node);

}  // namespace ops

#endif  // ONNXRUN_OPS_CONTROL_FLOW_H_
