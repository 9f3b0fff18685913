// ir::Graph: values (typed edges, some constant) and nodes (ops) in topological order.
// Value and node ids are indices into the graph's vectors; kNoValue marks an absent optional input.
#ifndef ONNXRUN_IR_GRAPH_H_
#define ONNXRUN_IR_GRAPH_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/attribute.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace ir {

using ValueId = int;
using NodeId = int;
inline constexpr ValueId kNoValue = -1;

struct Value {
  std::string name;
  TensorType type;
  std::optional<Tensor> constant;  // set for initializers and folded constants
  NodeId producer = -1;            // -1 for graph inputs and constants
  // Physical layout chosen by the layout pass: "" means the logical ONNX order (NCHW for 4-D
  // activations, KCRS for conv weights); "NHWC" / "KRSC" when a device keeps channels last. Dims in
  // `type` are always logical; executors that ignore layout (the CPU) stay correct.
  std::string layout;
};

struct Node {
  std::string name;             // never empty after import (generated as "<op>_<index>" when missing)
  std::string op_type;          // ONNX op type in canonical form (see importer/canonicalize.h)
  int opset = 0;                // the model's ai.onnx opset
  std::vector<ValueId> inputs;  // kNoValue for an absent optional input
  std::vector<ValueId> outputs;
  Attributes attrs;

  // Input i, or kNoValue when the node has fewer inputs.
  ValueId input(size_t i) const { return i < inputs.size() ? inputs[i] : kNoValue; }
};

class Graph {
 public:
  ValueId AddValue(std::string name, TensorType type = {});
  ValueId AddConstant(std::string name, Tensor tensor);
  // Appends a node; sets the producer of its outputs.
  NodeId AddNode(Node node);

  Value& value(ValueId id) { return values_[id]; }
  const Value& value(ValueId id) const { return values_[id]; }
  Node& node(NodeId id) { return nodes_[id]; }
  const Node& node(NodeId id) const { return nodes_[id]; }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& mutable_nodes() { return nodes_; }

  std::vector<ValueId>& inputs() { return inputs_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  std::vector<ValueId>& outputs() { return outputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }

  std::string name;
  // A subgraph (a control-flow body) reads outer-scope values through its last
  // `num_captured_inputs` inputs: they are bound, in order, to the control-flow node's last inputs
  // (its implicit inputs), so the outer graph orders and keeps alive what a body reads. 0 for a
  // model's main graph.
  int num_captured_inputs = 0;

  // Replaces the node list (e.g. after a pass removed or inserted nodes) and recomputes producers.
  // Node ids change; value ids do not.
  void ReplaceNodes(std::vector<Node> nodes);
  // Every read of `from` (node inputs and graph outputs) reads `to` instead.
  void ReplaceAllUses(ValueId from, ValueId to);
  // consumers[v] = ids of the nodes that read value v (once per node).
  std::vector<std::vector<NodeId>> ComputeConsumers() const;
  bool IsGraphOutput(ValueId id) const;

  // Checks that ids are in range, every value is produced once, and nodes are topologically
  // ordered (inputs are graph inputs, constants or outputs of earlier nodes).
  absl::Status Validate() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
};

}  // namespace ir

#endif  // ONNXRUN_IR_GRAPH_H_
