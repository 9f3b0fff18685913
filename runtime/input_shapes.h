// Fixing a model's symbolic input dims before planning (ONNX Runtime's free-dimension overrides,
// TensorRT's static profile): with every input dim known, shape computations fold, reshapes get
// static shapes and more nodes fuse, so the plan is made for exactly the dims that will run.
#ifndef ONNXRUN_RUNTIME_INPUT_SHAPES_H_
#define ONNXRUN_RUNTIME_INPUT_SHAPES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/graph.h"

namespace runtime {

// Input name -> the dims it will have.
using InputShapes = std::map<std::string, std::vector<int64_t>>;

// Gives each named graph input its dims and re-infers every node's types. InvalidArgument when a
// name is not a graph input, the rank differs, a known dim differs, or one symbol gets two values.
absl::Status FixInputShapes(ir::Graph& graph, const InputShapes& shapes);

}  // namespace runtime

#endif  // ONNXRUN_RUNTIME_INPUT_SHAPES_H_
