// ModelProto -> ir::Graph: parse, expand model-local functions (importer/inline_functions.h), check
// the opset and op support, then build the graph
// (importer/graph_builder.h: nodes ordered, values, attributes and constants converted, each node
// canonicalized and its output types inferred).
#include "importer/importer.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "importer/convert.h"
#include "importer/graph_builder.h"
#include "importer/inline_functions.h"
#include "onnx/onnx_pb.h"

namespace importer {
namespace {

// The ai.onnx opset; 0 when the model imports none (then only ops of other domains may be used).
absl::StatusOr<int> DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& import : model.opset_import()) {
    if (!IsDefaultDomain(import.domain())) continue;
    const int64_t version = import.version();
    if (version < kMinOpset || version > kMaxOpset) {
      return absl::UnimplementedError(absl::StrCat("model uses ai.onnx opset ", version, "; onnxrun supports opsets ",
                                                   kMinOpset, " to ", kMaxOpset));
    }
    return static_cast<int>(version);
  }
  return 0;
}

// The version of every other domain the model imports (a node checks its own domain when it is built).
std::map<std::string, int64_t> DomainOpsets(const onnx::ModelProto& model) {
  std::map<std::string, int64_t> opsets;
  for (const auto& import : model.opset_import()) {
    if (!IsDefaultDomain(import.domain())) opsets[import.domain()] = import.version();
  }
  return opsets;
}

absl::StatusOr<ir::Graph> ConvertModel(const onnx::ModelProto& model, const std::string& model_dir,
                                       const ImportLimits& limits) {
  const onnx::GraphProto& proto = model.graph();
  if (proto.node_size() > limits.max_nodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("model has ", proto.node_size(), " nodes, more than the limit of ", limits.max_nodes));
  }
  absl::StatusOr<int> opset = DefaultOpset(model);
  absl::Status supported = CheckOpsSupported(proto, opset.ok() ? *opset : 0);
  if (!supported.ok()) return supported;  // names every unsupported op first
  if (!opset.ok()) return opset.status();
  ImportState state{*opset, DomainOpsets(model), model_dir, limits};
  return BuildMainGraph(proto, state);
}

}  // namespace

absl::StatusOr<ir::Graph> ImportModelBytes(std::string_view bytes, const std::string& model_dir,
                                           const ImportLimits& limits) {
  if (bytes.empty()) return absl::InvalidArgumentError("the model file is empty");
  if (static_cast<int64_t>(bytes.size()) > limits.max_model_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("model of ", bytes.size(), " bytes exceeds the limit of ", limits.max_model_bytes));
  }
  onnx::ModelProto model;
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetRecursionLimit(64);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    return absl::InvalidArgumentError("not a valid ONNX model (protobuf parse failed: truncated or corrupt file)");
  }
  if (!model.has_graph()) return absl::InvalidArgumentError("not a valid ONNX model (no graph)");
  absl::Status inlined = InlineLocalFunctions(model, limits.max_nodes);
  if (!inlined.ok()) return inlined;
  return ConvertModel(model, model_dir, limits);
}

absl::StatusOr<ir::Graph> ImportModelFile(const std::string& path, const ImportLimits& limits) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a folder, not a model file"));
  }
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open model '", path, "'"));
  const std::streamoff size = file.tellg();
  if (size > limits.max_model_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("'", path, "' has ", size, " bytes, more than the limit of ", limits.max_model_bytes));
  }
  std::string bytes(static_cast<size_t>(std::max<std::streamoff>(size, 0)), '\0');
  file.seekg(0);
  if (!file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    return absl::DataLossError(absl::StrCat("cannot read model '", path, "'"));
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  absl::StatusOr<ir::Graph> graph = ImportModelBytes(bytes, dir.empty() ? "." : dir, limits);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(), absl::StrCat(path, ": ", graph.status().message()));
  }
  return graph;
}

}  // namespace importer
