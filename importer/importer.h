// The ONNX importer: ModelProto -> ir::Graph in canonical form (ops/CANONICAL.md), with every value
// typed (symbolic dims allowed). Fails with one Status naming what is wrong: a malformed file,
// every unsupported op with its nodes, a cycle, a dangling input, a type or shape that does not fit
// (with the node), external data outside the model's folder.
#ifndef ONNXRUN_IMPORTER_IMPORTER_H_
#define ONNXRUN_IMPORTER_IMPORTER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace importer {

// Caps on what a model may ask for; each is checked before the memory is allocated, and going past
// one is a ResourceExhausted (sizes) or InvalidArgument (ranks, dims) Status naming the value.
struct ImportLimits {
  int64_t max_model_bytes = int64_t{2} << 30;  // the serialized model; protobuf's own limit is 2 GiB
  // Nodes in the graph, control-flow bodies included (an If branch imported a second time without
  // the outer shapes, graph_builder.cc, counts twice).
  int64_t max_nodes = 1'000'000;
  int64_t max_rank = 16;  // rank of any value info, initializer or inferred value
  // Bytes of any one tensor: initializers, constants, and every value whose inferred shape is known
  // (symbolic dims count as 1). The runtime's hard cap (ir::kMaxTensorBytes) is 64 GiB.
  int64_t max_tensor_bytes = int64_t{16} << 30;
  // Bytes of all initializers and Constant nodes together (external data included).
  int64_t max_total_initializer_bytes = int64_t{32} << 30;
  // How deep control-flow bodies (If branches, Loop and Scan bodies) may nest: 1 is a body of a
  // main-graph node, 2 a body inside that body, ... Deeper is an InvalidArgument.
  int max_subgraph_depth = 10;
};

// Opsets 6-24 are the target (22-24 add types, QuantizeLinear precision and DequantizeLinear
// output_dtype, which onnxrun refuses unless at their defaults, and new ops); older models load too when their ops have
// the same form (the importer drops opset-1-5 leftovers such as `consumed_inputs`).
inline constexpr int kMinOpset = 1;
inline constexpr int kMaxOpset = 28;

// Reads and imports a model file; external data is resolved relative to its folder.
absl::StatusOr<ir::Graph> ImportModelFile(const std::string& path, const ImportLimits& limits = {});
// Imports serialized ModelProto bytes. `model_dir` is where external data lives ("" refuses it).
absl::StatusOr<ir::Graph> ImportModelBytes(std::string_view bytes, const std::string& model_dir,
                                           const ImportLimits& limits = {});

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_IMPORTER_H_
