// The op registry: one explicit table built from the per-family tables.
#include <algorithm>
#include <map>

#include "ops/op_def.h"

namespace ops {
namespace {

const std::map<std::string_view, OpDef>& Registry() {
  static const auto* registry = [] {
    auto* map = new std::map<std::string_view, OpDef>();
    for (auto family :
         {ElementwiseOpDefs, NnOpDefs,           TensorOpDefs,        TensorCopyOpDefs,    ReduceResizeOpDefs,
          CumSumOpDefs,      LrnOpDefs,          RnnOpDefs,           QuantizeOpDefs,      VisionOpDefs,
          TensorGenOpDefs,   TensorSelectOpDefs, TensorScatterOpDefs, TensorSpatialOpDefs, LogicOpDefs,
          MathOpDefs,        EinsumOpDefs,       MathNormOpDefs,      LossOpDefs,          SpectralOpDefs,
          DropoutOpDefs,     TfIdfOpDefs,        OptimizerOpDefs}) {
      for (const OpDef& def : family()) (*map)[def.op_type] = def;
    }
    for (const OpDef& def : ControlFlowOpDefs()) (*map)[def.op_type] = def;
    return map;
  }();
  return *registry;
}

}  // namespace

const OpDef* FindOpDef(std::string_view op_type) {
  auto it = Registry().find(op_type);
  return it == Registry().end() ? nullptr : &it->second;
}

std::vector<std::string> SupportedOpTypes() {
  std::vector<std::string> names;
  for (const auto& [name, def] : Registry()) names.emplace_back(name);
  return names;
}

}  // namespace ops
