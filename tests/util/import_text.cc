// See import_text.h.
#include "tests/util/import_text.h"

#include "ir/printer.h"

namespace testing_util {

std::string ImportText(const onnx::ModelProto& model, const importer::ImportLimits& limits) {
  absl::StatusOr<ir::Graph> graph = importer::ImportModelBytes(model.SerializeAsString(), "", limits);
  if (!graph.ok()) return std::string(graph.status().message());
  return ir::PrintGraph(*graph);
}

}  // namespace testing_util
