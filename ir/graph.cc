// Graph construction and structural validation.
#include "ir/graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ir {

ValueId Graph::AddValue(std::string name, TensorType type) {
  Value v;
  v.name = std::move(name);
  v.type = std::move(type);
  values_.push_back(std::move(v));
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId Graph::AddConstant(std::string name, Tensor tensor) {
  TensorType type{tensor.dtype(), ShapeFromInts(tensor.shape())};
  ValueId id = AddValue(std::move(name), std::move(type));
  values_[id].constant = std::move(tensor);
  return id;
}

NodeId Graph::AddNode(Node node) {
  NodeId id = static_cast<NodeId>(nodes_.size());
  for (ValueId out : node.outputs) {
    if (out >= 0 && out < static_cast<ValueId>(values_.size())) values_[out].producer = id;
  }
  nodes_.push_back(std::move(node));
  return id;
}

void Graph::ReplaceNodes(std::vector<Node> nodes) {
  nodes_ = std::move(nodes);
  for (Value& v : values_) v.producer = -1;
  for (NodeId id = 0; id < static_cast<NodeId>(nodes_.size()); ++id) {
    for (ValueId out : nodes_[id].outputs) {
      if (out >= 0 && out < static_cast<ValueId>(values_.size())) values_[out].producer = id;
    }
  }
}

void Graph::ReplaceAllUses(ValueId from, ValueId to) {
  for (Node& node : nodes_) {
    for (ValueId& in : node.inputs) {
      if (in == from) in = to;
    }
  }
  for (ValueId& out : outputs_) {
    if (out == from) out = to;
  }
}

std::vector<std::vector<NodeId>> Graph::ComputeConsumers() const {
  std::vector<std::vector<NodeId>> consumers(values_.size());
  for (NodeId id = 0; id < static_cast<NodeId>(nodes_.size()); ++id) {
    for (ValueId in : nodes_[id].inputs) {
      if (in == kNoValue) continue;
      if (consumers[in].empty() || consumers[in].back() != id) consumers[in].push_back(id);
    }
  }
  return consumers;
}

bool Graph::IsGraphOutput(ValueId id) const {
  return std::find(outputs_.begin(), outputs_.end(), id) != outputs_.end();
}

absl::Status Graph::Validate() const {
  const int num_values = static_cast<int>(values_.size());
  std::vector<bool> available(num_values, false);
  for (ValueId id : inputs_) {
    if (id < 0 || id >= num_values) return absl::InternalError("graph input id out of range");
    available[id] = true;
  }
  for (int i = 0; i < num_values; ++i) {
    if (values_[i].constant) available[i] = true;
  }
  for (const Node& node : nodes_) {
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      if (in < 0 || in >= num_values) {
        return absl::InternalError(absl::StrCat("node '", node.name, "': input id out of range"));
      }
      if (!available[in]) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", node.name, "' (", node.op_type, ") reads '", values_[in].name,
                         "', which is not a graph input, an initializer or the output of an "
                         "earlier node (dangling input or cycle)"));
      }
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      if (out < 0 || out >= num_values) {
        return absl::InternalError(absl::StrCat("node '", node.name, "': output id out of range"));
      }
      if (available[out]) {
        return absl::InvalidArgumentError(
            absl::StrCat("value '", values_[out].name, "' is produced more than once (node '", node.name, "')"));
      }
      available[out] = true;
    }
  }
  for (ValueId id : outputs_) {
    if (id < 0 || id >= num_values || !available[id]) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", id >= 0 && id < num_values ? values_[id].name : "?", "' is never produced"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ir
