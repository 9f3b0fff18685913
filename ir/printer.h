// Text form of an ir::Graph for tests, golden files and debugging:
//   graph NAME (in: x float32[N,3,224,224]) -> (y float32[N,1000])
//   %w = const float32[64,3,7,7]
//   conv1: Conv(%x, %w) -> (%c: float32[N,64,112,112]) {pads=[3,3,3,3], strides=[2,2]}
#ifndef ONNXRUN_IR_PRINTER_H_
#define ONNXRUN_IR_PRINTER_H_

#include <string>

#include "ir/graph.h"

namespace ir {

std::string PrintGraph(const Graph& graph);
std::string PrintNode(const Graph& graph, const Node& node);

}  // namespace ir

#endif  // ONNXRUN_IR_PRINTER_H_
