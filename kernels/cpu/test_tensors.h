// Test helpers for the CPU kernel tests: a node of one op, small tensors from literal values
// (strings too), their values back, a run's error message and attribute lists. Nodes run through kernels::cpu::RunNode
// (kernels/cpu/run_node.h), the path the CPU executor takes.
#ifndef ONNXRUN_KERNELS_CPU_TEST_TENSORS_H_
#define ONNXRUN_KERNELS_CPU_TEST_TENSORS_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace kernels::cpu::test_tensors {

// A node named "n" of `op` at `opset` with outputs 0..outputs-1 (inputs are given to RunNode).
inline ir::Node MakeNode(const std::string& op, int outputs, ir::Attributes attrs = {}, int opset = 21) {
  ir::Node node;
  node.name = "n";
  node.op_type = op;
  node.opset = opset;
  for (int i = 0; i < outputs; ++i) node.outputs.push_back(i);
  node.attrs = std::move(attrs);
  return node;
}

// A tensor of `shape` holding `values` (zero-filled where fewer are given).
template <typename T>
ir::Tensor Make(ir::DType dtype, std::vector<int64_t> shape, std::vector<T> values) {
  ir::Tensor t = *ir::Tensor::Create(dtype, std::move(shape));
  if (!values.empty()) std::memcpy(t.raw_data(), values.data(), std::min(values.size() * sizeof(T), t.byte_size()));
  return t;
}
inline ir::Tensor I64(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return Make(ir::DType::kInt64, std::move(shape), std::move(v));
}
inline ir::Tensor I32(std::vector<int64_t> shape, std::vector<int32_t> v) {
  return Make(ir::DType::kInt32, std::move(shape), std::move(v));
}
inline ir::Tensor U8(std::vector<int64_t> shape, std::vector<uint8_t> v) {
  return Make(ir::DType::kUint8, std::move(shape), std::move(v));
}
inline ir::Tensor F32(std::vector<int64_t> shape, std::vector<float> v) {
  return Make(ir::DType::kFloat32, std::move(shape), std::move(v));
}

// A string tensor of `shape` holding `v` (empty strings where fewer are given).
inline ir::Tensor Strings(std::vector<int64_t> shape, std::vector<std::string> v) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kString, std::move(shape));
  std::move(v.begin(), v.begin() + std::min<int64_t>(v.size(), t.num_elements()), t.mutable_strings());
  return t;
}
inline std::vector<std::string> StringValues(const ir::Tensor& t) {
  return std::vector<std::string>(t.strings(), t.strings() + t.num_elements());
}

template <typename T>
std::vector<T> Values(const ir::Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

// "ok", or the error's message.
inline std::string Error(const absl::StatusOr<std::vector<ir::Tensor>>& r) {
  return r.ok() ? "ok" : std::string(r.status().message());
}

inline ir::Attributes Attrs(std::initializer_list<std::pair<std::string, ir::AttributeValue>> list) {
  ir::Attributes attrs;
  for (const auto& entry : list) attrs.Set(entry.first, entry.second);
  return attrs;
}

}  // namespace kernels::cpu::test_tensors

#endif  // ONNXRUN_KERNELS_CPU_TEST_TENSORS_H_
