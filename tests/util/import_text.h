// The importer's tests read the imported graph as text: ImportText gives ir::PrintGraph of the
// graph a model imports to, or the import error's message.
#ifndef ONNXRUN_TESTS_UTIL_IMPORT_TEXT_H_
#define ONNXRUN_TESTS_UTIL_IMPORT_TEXT_H_

#include <string>

#include "importer/importer.h"
#include "onnx/onnx_pb.h"

namespace testing_util {

std::string ImportText(const onnx::ModelProto& model, const importer::ImportLimits& limits = {});

}  // namespace testing_util

#endif  // ONNXRUN_TESTS_UTIL_IMPORT_TEXT_H_
