// Reading and writing ONNX's non-tensor values as the ONNX test layout stores them: a
// SequenceProto for a seq(tensor) or seq(map) value, a MapProto for a map, an OptionalProto for an
// optional(...) one, a TensorProto otherwise; the declared type of the graph input or output says
// which.
#ifndef ONNXRUN_IMPORTER_VALUE_PROTO_H_
#define ONNXRUN_IMPORTER_VALUE_PROTO_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace importer {

// Reads `path` as the kind of value `declared` describes (ir::Tensor carries all kinds).
absl::StatusOr<ir::Tensor> ReadValueFile(const std::string& path, const ir::TensorType& declared);
// Writes `value` in the proto `declared` needs (TensorProto, SequenceProto, MapProto or OptionalProto).
absl::Status WriteValueFile(const ir::Tensor& value, const ir::TensorType& declared, const std::string& name,
                            const std::string& path);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_VALUE_PROTO_H_
