// Small builders of ONNX protos for tests: value infos, nodes with attributes, models.
#ifndef ONNXRUN_TESTS_UTIL_ONNX_BUILDER_H_
#define ONNXRUN_TESTS_UTIL_ONNX_BUILDER_H_

#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx_pb.h"

namespace testing_util {

// A tensor value info; dims < 0 are left unknown, dims given as strings are symbolic.
onnx::ValueInfoProto TensorInfo(const std::string& name, std::vector<std::variant<int64_t, std::string>> dims,
                                int elem_type = onnx::TensorProto::FLOAT);
// Numeric dims in TensorInfo's form.
std::vector<std::variant<int64_t, std::string>> StaticDims(const std::vector<int64_t>& dims);

onnx::NodeProto MakeNode(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                         const std::string& name);
void SetIntAttr(onnx::NodeProto& node, const std::string& name, int64_t value);
void SetFloatAttr(onnx::NodeProto& node, const std::string& name, float value);
void SetIntsAttr(onnx::NodeProto& node, const std::string& name, std::vector<int64_t> values);
void SetFloatsAttr(onnx::NodeProto& node, const std::string& name, std::vector<float> values);
void SetStringAttr(onnx::NodeProto& node, const std::string& name, const std::string& value);

// A model with one graph at the given ai.onnx opset; add inputs, outputs and nodes to graph().
onnx::ModelProto MakeModel(int opset);
// A float initializer filled with `fill`.
void AddInitializer(onnx::ModelProto& model, const std::string& name, std::vector<int64_t> dims, float fill = 0.5f);
// A float32 initializer with the given values (as many as the dims hold).
void AddFloatInitializer(onnx::ModelProto& model, const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<float>& values);
// A 1-D int64 initializer (a scalar when `scalar`, with one value): shapes, axes, indices.
void AddInt64Initializer(onnx::ModelProto& model, const std::string& name, const std::vector<int64_t>& values,
                         bool scalar = false);
// A 3x3 conv (pads 1, no bias, weights ((i * 37) % 17) / 17 - 0.5) from `input` of `in_channels`
// to `out_channels`, writing `output`: a prefix that makes the GPU keep the next op's input
// channels last.
void AddConvPrefix(onnx::ModelProto& model, const std::string& input, int64_t in_channels, const std::string& output,
                   int64_t out_channels = 8);

}  // namespace testing_util

#endif  // ONNXRUN_TESTS_UTIL_ONNX_BUILDER_H_
