// Conversion between onnx.TensorProto and ir::Tensor, including external data, which is read
// only from files inside the model's folder and only within the file's bounds.
#ifndef ONNXRUN_IMPORTER_TENSOR_PROTO_H_
#define ONNXRUN_IMPORTER_TENSOR_PROTO_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/tensor.h"
#include "onnx/onnx_pb.h"

namespace importer {

// `model_dir` is the folder external data paths are relative to; empty refuses external data.
// The shape, the data's size (inline or in the external file) and `max_bytes` are checked before
// anything is allocated: data shorter or longer than the shape needs is an error.
absl::StatusOr<ir::Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& model_dir,
                                           int64_t max_bytes = ir::kMaxTensorBytes);
onnx::TensorProto TensorToProto(const ir::Tensor& tensor, const std::string& name);

// Reads a serialized TensorProto file (the ONNX test layout's input_N.pb).
absl::StatusOr<ir::Tensor> ReadTensorProtoFile(const std::string& path, std::string* name = nullptr);
absl::Status WriteTensorProtoFile(const ir::Tensor& tensor, const std::string& name, const std::string& path);

}  // namespace importer

#endif  // ONNXRUN_IMPORTER_TENSOR_PROTO_H_
