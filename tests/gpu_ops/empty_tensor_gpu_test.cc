// Ops on the GPU where a tensor is empty (a 0 dim: what a detector's heads meet when nothing passes
// the score threshold, or a slice that selects nothing): each a one-node model whose three GPU runs
// (tests/util/gpu_runs.h) are compared with the CPU reference kernels running the same plan, shape
// and every element, the CPU's shape with the expected one (MatMul with K = 0 and
// ReduceSum over an empty axis give zeros; a Concat or Gemm keeps its non-empty part). Skips when
// no GPU is usable.
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/util/gpu_runs.h"
#include "tests/util/onnx_builder.h"

namespace {

struct Case {
  std::string label, op;
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;  // float32 graph inputs
  std::vector<int64_t> z;                                            // the output's dims
  std::vector<std::pair<std::string, std::vector<int64_t>>> ints;    // int64 initializers (1-D)
  std::vector<std::pair<std::string, std::vector<int64_t>>> floats;  // float initializers: name, dims
  std::vector<std::string> node_inputs;                              // default: the graph inputs
  std::vector<std::pair<std::string, int64_t>> int_attrs;
  std::vector<std::pair<std::string, std::vector<int64_t>>> ints_attrs;
  int out_type = onnx::TensorProto::FLOAT;
};

std::string Name(const testing::TestParamInfo<Case>& info) { return info.param.label; }

std::string OneNodeModel(const Case& c) {
  onnx::ModelProto model = testing_util::MakeModel(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  std::vector<std::string> node_inputs = c.node_inputs;
  for (const auto& [name, dims] : c.inputs) {
    *graph.add_input() = testing_util::TensorInfo(name, testing_util::StaticDims(dims));
    if (c.node_inputs.empty()) node_inputs.push_back(name);
  }
  for (const auto& [name, values] : c.ints) testing_util::AddInt64Initializer(model, name, values);
  for (const auto& [name, dims] : c.floats) testing_util::AddInitializer(model, name, dims, 0.25f);
  *graph.add_output() = testing_util::TensorInfo("z", testing_util::StaticDims(c.z), c.out_type);
  onnx::NodeProto node = testing_util::MakeNode(c.op, node_inputs, {"z"}, "op");
  for (const auto& [name, value] : c.int_attrs) testing_util::SetIntAttr(node, name, value);
  for (const auto& [name, values] : c.ints_attrs) testing_util::SetIntsAttr(node, name, values);
  *graph.add_node() = node;
  return model.SerializeAsString();
}

std::vector<runtime::NamedTensor> Inputs(const Case& c) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<runtime::NamedTensor> inputs;
  for (const auto& [name, dims] : c.inputs) {
    ir::Tensor t = *ir::Tensor::Create(ir::DType::kFloat32, dims);
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
    inputs.push_back({name, std::move(t)});
  }
  return inputs;
}

class EmptyTensorGpuTest : public testing::TestWithParam<Case> {};

TEST_P(EmptyTensorGpuTest, MatchesTheCpuShapeAndValues) {
  const Case& c = GetParam();
  const std::vector<runtime::NamedTensor> inputs = Inputs(c);
  std::unique_ptr<runtime::Session> session =
      testing_util::ExpectGpuRunsMatchCpu(OneNodeModel(c), "fp32", inputs, c.label);
  if (session == nullptr) {
    if (!HasFailure()) GTEST_SKIP() << "no usable GPU";
    return;
  }
  auto cpu = session->RunOn(runtime::Device::kCpu, inputs, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ((*cpu)[0].tensor.shape(), c.z);
}

Case Unary(const std::string& op, std::vector<int64_t> x) { return {op, op, {{"x", x}}, x}; }

std::vector<Case> Cases() {
  std::vector<Case> cases = {Unary("Relu", {0, 4}), Unary("Sigmoid", {2, 0, 3}), Unary("Exp", {0})};
  cases.push_back({"Mul_empty_by_scalar", "Mul", {{"x", {0}}, {"y", {}}}, {0}});
  cases.push_back({"Add_empty_rows", "Add", {{"x", {0, 4}}, {"y", {1, 4}}}, {0, 4}});
  cases.push_back({"Mul_stretched_to_empty", "Mul", {{"x", {1, 4}}, {"y", {0, 1}}}, {0, 4}});
  cases.push_back({"Softmax", "Softmax", {{"x", {0, 5}}}, {0, 5}});
  cases.push_back({"Cast_to_int32", "Cast", {{"x", {0, 3}}}, {0, 3}, {}, {}, {}, {{"to", onnx::TensorProto::INT32}}});
  cases.back().out_type = onnx::TensorProto::INT32;
  cases.push_back({"Concat_with_empty", "Concat", {{"x", {0, 4}}, {"y", {2, 4}}}, {2, 4}, {}, {}, {}, {{"axis", 0}}});
  cases.push_back({"Transpose", "Transpose", {{"x", {0, 4, 3}}}, {3, 0, 4}, {}, {}, {}, {}, {{"perm", {2, 0, 1}}}});
  cases.push_back({"Reshape", "Reshape", {{"x", {0, 4}}}, {0, 2, 2}, {{"shape", {0, 2, 2}}}, {}, {"x", "shape"}});
  cases.push_back({"Slice_to_empty",
                   "Slice",
                   {{"x", {3, 4}}},
                   {0, 4},
                   {{"starts", {1}}, {"ends", {1}}, {"axes", {0}}},
                   {},
                   {"x", "starts", "ends", "axes"}});
  cases.push_back({"Gather_no_indices", "Gather", {{"x", {3, 4}}}, {0, 4}, {{"idx", {}}}, {}, {"x", "idx"}});
  cases.push_back({"Expand_to_empty", "Expand", {{"x", {1, 4}}}, {0, 4}, {{"shape", {0, 4}}}, {}, {"x", "shape"}});
  cases.push_back({"ReduceSum_over_empty_axis",
                   "ReduceSum",
                   {{"x", {0, 4}}},
                   {4},
                   {{"axes", {0}}},
                   {},
                   {"x", "axes"},
                   {{"keepdims", 0}}});
  cases.push_back({"ReduceSum_of_empty_rows",
                   "ReduceSum",
                   {{"x", {0, 4}}},
                   {0},
                   {{"axes", {1}}},
                   {},
                   {"x", "axes"},
                   {{"keepdims", 0}}});
  cases.push_back({"MatMul_no_rows", "MatMul", {{"x", {0, 4}}, {"y", {4, 5}}}, {0, 5}});
  cases.push_back({"MatMul_k0", "MatMul", {{"x", {2, 0}}, {"y", {0, 5}}}, {2, 5}});
  cases.push_back({"Gemm_no_rows",
                   "Gemm",
                   {{"x", {0, 4}}},
                   {0, 5},
                   {},
                   {{"w", {5, 4}}, {"b", {5}}},
                   {"x", "w", "b"},
                   {{"transB", 1}}});
  cases.push_back(
      {"Conv_no_images", "Conv", {{"x", {0, 3, 8, 8}}}, {0, 4, 6, 6}, {}, {{"w", {4, 3, 3, 3}}}, {"x", "w"}});
  cases.push_back({"MaxPool_no_images",
                   "MaxPool",
                   {{"x", {0, 3, 8, 8}}},
                   {0, 3, 4, 4},
                   {},
                   {},
                   {},
                   {},
                   {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}});
  cases.push_back({"GlobalAveragePool_no_images", "GlobalAveragePool", {{"x", {0, 3, 8, 8}}}, {0, 3, 1, 1}});
  cases.push_back({"LayerNormalization_no_rows",
                   "LayerNormalization",
                   {{"x", {0, 8}}},
                   {0, 8},
                   {},
                   {{"scale", {8}}},
                   {"x", "scale"}});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Ops, EmptyTensorGpuTest, testing::ValuesIn(Cases()), Name);

}  // namespace
