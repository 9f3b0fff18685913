// Proto -> IR conversions of single items the graph builder uses: value infos, non-graph
// attributes, Constant node values, and the checks of a value's type and of constant bytes against
// the import limits.
#ifndef ONNXRUN_IMPORTER_CONVERT_H_
#define ONNXRUN_IMPORTER_CONVERT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "importer/importer.h"
#include "ir/attribute.h"
#include "ir/shape.h"
#include "ir/tensor.h"
#include "onnx/onnx_pb.h"

namespace importer {

// Ops the importer itself consumes or rewrites (not in the op registry under that name).
bool HandledByImporter(const std::string& op_type);
bool IsDefaultDomain(const std::string& domain);
// The op type a node has in the IR and the op registry: its op_type in the default domain ("" or
// "ai.onnx"), else "<domain>.<op_type>" (e.g. "ai.onnx.preview.training.Adam"). A default-domain
// op_type with a '.' gets "" (no registered op has that name).
std::string CanonicalOpType(const onnx::NodeProto& node);
// The opset versions of a non-default domain that the importer accepts (0, 0 for a domain it
// does not know; its nodes are then reported as unsupported ops).
struct DomainVersions {
  int min = 0, max = 0;
};
DomainVersions SupportedDomainVersions(const std::string& domain);
// The node's name, or "<op>_<index>" when it has none.
std::string NodeName(const onnx::NodeProto& node, int index);

// Checks a value's rank and, over its known dims (symbolic ones count as 1), its byte size against
// the limits; `what` names the value in the error.
absl::Status CheckTypeLimits(const std::string& what, const ir::TensorType& type, const ImportLimits& limits);
// Every attribute type but GRAPH (the graph builder converts those).
absl::StatusOr<ir::AttributeValue> ConvertAttribute(const onnx::AttributeProto& attr, const std::string& model_dir,
                                                    const ImportLimits& limits);
// The tensor a Constant node defines (value, value_float(s), value_int(s)).
absl::StatusOr<ir::Tensor> ConstantValue(const ir::Attributes& attrs);
absl::StatusOr<ir::TensorType> ConvertValueInfo(const onnx::ValueInfoProto& info, const ImportLimits& limits);
// Adds a constant's bytes to `total`; ResourceExhausted past max_total_initializer_bytes.
absl::Status AddConstantBytes(const std::string& name, const ir::Tensor& t, const ImportLimits& limits, int64_t& total);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_CONVERT_H_
