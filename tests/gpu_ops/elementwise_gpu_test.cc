// Elementwise ops on the GPU through the whole Session, each a one-node model compared element by
// element with the CPU reference kernels running the same plan, required to run as own CUDA
// kernels (never the host fallback) and to replay a CUDA graph on the third run: the float unary
// math of the pointwise path (Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh,
// Floor, Ceil, Round, Sign, Softsign, Mish, Celu, ThresholdedRelu, Shrink, Swish), the comparisons, IsNaN, IsInf and
// float Mod in fp32, fp16 and bf16, and And/Or/Xor/Not of bools. Inputs hold NaN, infinities, -0, +-1 and halves
// (Round's ties). Also binary ops broadcasting an empty operand (the result stays empty). Skips when no GPU is usable.
#include <cmath>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/util/compare.h"
#include "tests/util/onnx_builder.h"

namespace {

struct Case {
  std::string label;
  std::string op;
  int inputs = 1;  // x, or x and y (y of x's last dim, broadcast over the rows)
  int in_type = onnx::TensorProto::FLOAT;
  int out_type = onnx::TensorProto::FLOAT;
  std::vector<std::pair<std::string, int64_t>> int_attrs;
  std::string precision = "fp32";
};

constexpr int64_t kRows = 4, kCols = 37;

std::string Name(const testing::TestParamInfo<Case>& info) { return info.param.label; }

// One node `op` from x [kRows, kCols] (and y [kCols]) to z [kRows, kCols] at opset 17.
std::string OneNodeModel(const Case& c) {
  onnx::ModelProto model = testing_util::MakeModel(c.op == "Swish" ? 24 : 17);  // Swish came in opset 24
  onnx::GraphProto& graph = *model.mutable_graph();
  std::vector<std::string> inputs = {"x"};
  *graph.add_input() = testing_util::TensorInfo("x", testing_util::StaticDims({kRows, kCols}), c.in_type);
  if (c.inputs == 2) {
    inputs.push_back("y");
    *graph.add_input() = testing_util::TensorInfo("y", testing_util::StaticDims({kCols}), c.in_type);
  }
  *graph.add_output() = testing_util::TensorInfo("z", testing_util::StaticDims({kRows, kCols}), c.out_type);
  onnx::NodeProto node = testing_util::MakeNode(c.op, inputs, {"z"}, "op");
  for (const auto& [name, value] : c.int_attrs) testing_util::SetIntAttr(node, name, value);
  *graph.add_node() = node;
  return model.SerializeAsString();
}

// x: uniform in [-4, 4], every fifth element a half (k + 0.5), and NaN, +-inf, -0, 1, -1 first.
ir::Tensor FloatX() {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kFloat32, {kRows, kCols});
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::uniform_int_distribution<int> half(-4, 3);
  float* x = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) x[i] = i % 5 == 4 ? half(rng) + 0.5f : dist(rng);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), INFINITY, -INFINITY, -0.0f, 1.0f, -1.0f};
  for (size_t i = 0; i < std::size(specials); ++i) x[i] = specials[i];
  return t;
}

// y: x's first row at even positions (equal pairs, NaN == NaN among them), uniform elsewhere.
ir::Tensor FloatY(const ir::Tensor& x) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kFloat32, {kCols});
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (int64_t i = 0; i < kCols; ++i) t.data<float>()[i] = i % 2 == 0 ? x.data<float>()[i] : dist(rng);
  return t;
}

ir::Tensor Bools(std::vector<int64_t> dims, uint32_t seed) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kBool, std::move(dims));
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<uint8_t>()[i] = rng() % 2;
  return t;
}

std::vector<runtime::NamedTensor> Inputs(const Case& c) {
  if (c.in_type == onnx::TensorProto::BOOL) {
    std::vector<runtime::NamedTensor> inputs = {{"x", Bools({kRows, kCols}, 1)}};
    if (c.inputs == 2) inputs.push_back({"y", Bools({kCols}, 2)});
    return inputs;
  }
  ir::Tensor x = FloatX();
  std::vector<runtime::NamedTensor> inputs = {{"x", x}};
  if (c.inputs == 2) inputs.push_back({"y", FloatY(x)});
  return inputs;
}

class ElementwiseGpuTest : public testing::TestWithParam<Case> {};

TEST_P(ElementwiseGpuTest, OwnKernelMatchesCpuKernels) {
  const Case& c = GetParam();
  runtime::SessionOptions options;
  options.device = runtime::Device::kCuda;
  options.precision = c.precision;
  options.gpu.plan_cache = false;
  auto session = runtime::Session::CreateFromBytes(OneNodeModel(c), options);
  if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
    GTEST_SKIP() << session.status().message();
  }
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<runtime::NamedTensor> inputs = Inputs(c);
  auto cpu = (*session)->RunOn(runtime::Device::kCpu, inputs, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  // Both sides compute in float and round once: a 16-bit result may differ in its last place.
  const testing_util::Tolerance tol = c.precision == "bf16"   ? testing_util::Tolerance{2e-2, 1e-3}
                                      : c.precision == "fp16" ? testing_util::Tolerance{1e-2, 1e-3}
                                                              : testing_util::Tolerance{1e-5, 1e-6};
  for (int run = 0; run < 3; ++run) {  // step by step, captured, replayed
    auto gpu = (*session)->Run(inputs);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    EXPECT_EQ(testing_util::CompareTensors((*gpu)[0].tensor, (*cpu)[0].tensor, tol), "") << "run " << run;
  }
  bool own_kernel = false;
  for (const std::string& note : (*session)->gpu_step_notes()) {
    if (absl::StrContains(note, "own CUDA kernel")) own_kernel = true;
    EXPECT_FALSE(absl::StrContains(note, "host reference")) << note;
  }
  EXPECT_TRUE(own_kernel);
  EXPECT_TRUE(absl::StrContains((*session)->gpu()->graph_status(), "CUDA graph replay"))
      << (*session)->gpu()->graph_status();
}

std::vector<Case> FloatCases() {
  std::vector<Case> cases;
  for (const char* precision : {"fp32", "fp16", "bf16"}) {
    for (const char* op :
         {"Sin",   "Cos",   "Tan",  "Asin",  "Acos", "Atan",     "Sinh", "Cosh", "Asinh",           "Acosh",
          "Atanh", "Floor", "Ceil", "Round", "Sign", "Softsign", "Mish", "Celu", "ThresholdedRelu", "Shrink",
          "Swish"}) {
      cases.push_back({absl::StrCat(op, "_", precision), op, 1});
      cases.back().precision = precision;
    }
    for (const char* op : {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"}) {
      cases.push_back({absl::StrCat(op, "_", precision), op, 2});
      cases.back().out_type = onnx::TensorProto::BOOL;
      cases.back().precision = precision;
    }
    for (const char* op : {"IsNaN", "IsInf"}) {
      cases.push_back({absl::StrCat(op, "_", precision), op, 1});
      cases.back().out_type = onnx::TensorProto::BOOL;
      cases.back().precision = precision;
    }
    cases.push_back({absl::StrCat("Mod_fmod_", precision), "Mod", 2});
    cases.back().int_attrs = {{"fmod", 1}};
    cases.back().precision = precision;
  }
  return cases;
}

std::vector<Case> BoolCases() {
  std::vector<Case> cases;
  for (const char* op : {"And", "Or", "Xor", "Not"}) {
    cases.push_back({op, op, std::string(op) == "Not" ? 1 : 2, onnx::TensorProto::BOOL, onnx::TensorProto::BOOL});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Float, ElementwiseGpuTest, testing::ValuesIn(FloatCases()), Name);

// A 1 stretches to 0 ([0] * scalar is [0], not [1]): torchvision's Faster R-CNN export rescales its
// boxes so when nothing is detected, and the GPU used to return one garbage box.
TEST(ElementwiseGpuEmptyTest, BroadcastingAnEmptyOperandGivesAnEmptyResult) {
  struct Shapes {
    std::vector<int64_t> x, y, z;
  };
  for (const Shapes& s : {Shapes{{0}, {}, {0}}, Shapes{{0, 4}, {1, 4}, {0, 4}}, Shapes{{1, 4}, {0, 1}, {0, 4}}}) {
    for (const char* op : {"Mul", "Add"}) {
      onnx::ModelProto model = testing_util::MakeModel(17);
      onnx::GraphProto& graph = *model.mutable_graph();
      *graph.add_input() = testing_util::TensorInfo("x", testing_util::StaticDims(s.x));
      *graph.add_input() = testing_util::TensorInfo("y", testing_util::StaticDims(s.y));
      *graph.add_output() = testing_util::TensorInfo("z", testing_util::StaticDims(s.z));
      *graph.add_node() = testing_util::MakeNode(op, {"x", "y"}, {"z"}, "op");
      runtime::SessionOptions options;
      options.device = runtime::Device::kCuda;
      options.gpu.plan_cache = false;
      auto session = runtime::Session::CreateFromBytes(model.SerializeAsString(), options);
      if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
        GTEST_SKIP() << session.status().message();
      }
      ASSERT_TRUE(session.ok()) << session.status();
      ir::Tensor y = *ir::Tensor::Create(ir::DType::kFloat32, s.y);
      for (int64_t i = 0; i < y.num_elements(); ++i) y.data<float>()[i] = 1.5f;
      const std::vector<runtime::NamedTensor> inputs = {{"x", *ir::Tensor::Create(ir::DType::kFloat32, s.x)}, {"y", y}};
      for (int run = 0; run < 2; ++run) {
        auto gpu = (*session)->Run(inputs);
        ASSERT_TRUE(gpu.ok()) << gpu.status();
        EXPECT_EQ((*gpu)[0].tensor.shape(), s.z) << op << " " << ir::ShapeToString(s.x) << " run " << run;
      }
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Bool, ElementwiseGpuTest, testing::ValuesIn(BoolCases()), Name);

}  // namespace
