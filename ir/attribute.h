// Node attributes: a small tagged value (int, float, string, lists, tensor, subgraph) and a name ->
// value map with typed getters that return a default when the attribute is absent.
#ifndef ONNXRUN_IR_ATTRIBUTE_H_
#define ONNXRUN_IR_ATTRIBUTE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/tensor.h"

namespace ir {

class Graph;  // ir/graph.h
// A GRAPH attribute (a control-flow body): immutable once imported, shared by copies of the node.
using GraphPtr = std::shared_ptr<const Graph>;

using AttributeValue = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                                    std::vector<std::string>, Tensor, GraphPtr>;

class Attributes {
 public:
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  void Set(const std::string& name, AttributeValue value) { values_[name] = std::move(value); }
  void Erase(const std::string& name) { values_.erase(name); }
  const std::map<std::string, AttributeValue>& all() const { return values_; }

  // Typed getters: the default when absent; the default too when present with another type
  // (the importer checks types when it converts, so a mismatch here is a programming error).
  int64_t GetInt(const std::string& name, int64_t default_value) const;
  float GetFloat(const std::string& name, float default_value) const;
  std::string GetString(const std::string& name, const std::string& default_value) const;
  std::vector<int64_t> GetInts(const std::string& name, const std::vector<int64_t>& default_value = {}) const;
  std::vector<float> GetFloats(const std::string& name, const std::vector<float>& default_value = {}) const;
  std::vector<std::string> GetStrings(const std::string& name,
                                      const std::vector<std::string>& default_value = {}) const;
  const Tensor* GetTensor(const std::string& name) const;
  // nullptr when absent (or not a graph).
  const Graph* GetGraph(const std::string& name) const;

 private:
  std::map<std::string, AttributeValue> values_;
};

std::string AttributeValueToString(const AttributeValue& value);

}  // namespace ir

#endif  // ONNXRUN_IR_ATTRIBUTE_H_
