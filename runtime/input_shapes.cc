// FixInputShapes (input_shapes.h).
#include "runtime/input_shapes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/infer_graph.h"

namespace runtime {
namespace {

// Checks `dims` against the input's declared shape, recording each symbol's value in `symbols`.
absl::Status CheckAgainstDeclared(const ir::Value& input, const std::vector<int64_t>& dims,
                                  std::map<std::string, int64_t>& symbols) {
  const std::string given = absl::StrCat("[", absl::StrJoin(dims, ","), "]");
  if (!input.type.is_tensor()) {
    return absl::InvalidArgumentError(absl::StrCat("input '", input.name, "' is not a tensor: no shape to fix"));
  }
  if (!input.type.shape) return absl::OkStatus();  // unknown rank: any dims
  const ir::Shape& declared = *input.type.shape;
  if (declared.size() != dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat("input '", input.name, "' has rank ", declared.size(),
                                                   "; the fixed shape ", given, " has rank ", dims.size()));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    const ir::Dim& d = declared[i];
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("input '", input.name, "': negative dim in ", given));
    }
    if (d.known() && d.value != dims[i]) {
      return absl::InvalidArgumentError(absl::StrCat("input '", input.name, "' has dim ", i, " = ", d.value,
                                                     "; the fixed shape ", given, " says ", dims[i]));
    }
    if (d.known() || d.symbol.empty()) continue;
    auto [it, inserted] = symbols.emplace(d.symbol, dims[i]);
    if (!inserted && it->second != dims[i]) {
      return absl::InvalidArgumentError(absl::StrCat("symbolic dim '", d.symbol, "' fixed to both ", it->second,
                                                     " and ", dims[i], " (input '", input.name, "')"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status FixInputShapes(ir::Graph& graph, const InputShapes& shapes) {
  if (shapes.empty()) return absl::OkStatus();
  std::map<std::string, int64_t> symbols;
  size_t used = 0;
  for (ir::ValueId id : graph.inputs()) {
    ir::Value& input = graph.value(id);
    auto it = shapes.find(input.name);
    if (it == shapes.end()) continue;
    ++used;
    if (absl::Status s = CheckAgainstDeclared(input, it->second, symbols); !s.ok()) return s;
    input.type.shape = ir::ShapeFromInts(it->second);
  }
  if (used != shapes.size()) {
    std::vector<std::string> unknown;
    for (const auto& [name, dims] : shapes) {
      bool found = false;
      for (ir::ValueId id : graph.inputs()) found = found || graph.value(id).name == name;
      if (!found) unknown.push_back(absl::StrCat("'", name, "'"));
    }
    return absl::InvalidArgumentError(absl::StrCat("fixed shapes name no model input: ", absl::StrJoin(unknown, ", ")));
  }
  // Inputs not named share the fixed symbols' values.
  for (ir::ValueId id : graph.inputs()) {
    ir::TensorType& type = graph.value(id).type;
    if (!type.shape) continue;
    for (ir::Dim& d : *type.shape) {
      auto it = d.known() ? symbols.end() : symbols.find(d.symbol);
      if (it != symbols.end()) d = ir::Dim(it->second);
    }
  }
  return ops::InferGraphTypes(graph);
}

}  // namespace runtime
