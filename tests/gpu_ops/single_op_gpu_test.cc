// Single ops on the GPU through the whole Session, each compared element by element with the CPU
// reference kernels running the same plan, and required to run as a device step (never the host
// fallback) and to replay a CUDA graph on the third run: Softmax and LogSoftmax of every rank 2/3/4
// and axis -1/1 (cuDNN's softmax, or the own kernel where cuDNN does not take the shape), and LRN
// (cuDNN's cross-channel LRN), in fp32 and fp16; and the fp16 / tf32 stem (one-pass input
// (Cast+)Pad, fused conv). Skips when no GPU is usable.
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
  std::vector<int64_t> dims;
  std::vector<std::pair<std::string, int64_t>> int_attrs;
  std::vector<std::pair<std::string, float>> float_attrs;
  std::string precision;
};

std::string Name(const testing::TestParamInfo<Case>& info) { return info.param.label; }

// One node `op` from input x to output y (same shape) at opset 13.
std::string SingleOpModel(const Case& c) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  std::vector<std::variant<int64_t, std::string>> dims;
  for (int64_t d : c.dims) dims.emplace_back(d);
  *model.mutable_graph()->add_input() = testing_util::TensorInfo("x", dims);
  *model.mutable_graph()->add_output() = testing_util::TensorInfo("y", dims);
  onnx::NodeProto node = testing_util::MakeNode(c.op, {"x"}, {"y"}, "op");
  for (const auto& [name, value] : c.int_attrs) testing_util::SetIntAttr(node, name, value);
  for (const auto& [name, value] : c.float_attrs) testing_util::SetFloatAttr(node, name, value);
  *model.mutable_graph()->add_node() = node;
  return model.SerializeAsString();
}

ir::Tensor RandomInput(const std::vector<int64_t>& dims) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kFloat32, dims);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

class SingleOpGpuTest : public testing::TestWithParam<Case> {};

TEST_P(SingleOpGpuTest, DeviceStepMatchesCpuKernels) {
  const Case& c = GetParam();
  runtime::SessionOptions options;
  options.device = runtime::Device::kCuda;
  options.precision = c.precision;
  options.gpu.plan_cache = false;
  auto session = runtime::Session::CreateFromBytes(SingleOpModel(c), options);
  if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
    GTEST_SKIP() << session.status().message();
  }
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput(c.dims)}};
  auto cpu = (*session)->RunOn(runtime::Device::kCpu, inputs, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  for (int run = 0; run < 3; ++run) {  // step by step, captured, replayed
    auto gpu = (*session)->Run(inputs);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    const testing_util::Tolerance tol =
        c.precision == "fp16" ? testing_util::Tolerance{1e-2, 1e-3} : testing_util::Tolerance{1e-5, 1e-6};
    EXPECT_EQ(testing_util::CompareTensors((*gpu)[0].tensor, (*cpu)[0].tensor, tol), "") << "run " << run;
  }
  bool on_device = false;
  for (const std::string& note : (*session)->gpu_step_notes()) {
    if (absl::StrContains(note, "legacy cuDNN") || absl::StrContains(note, "own CUDA kernel")) on_device = true;
    EXPECT_FALSE(absl::StrContains(note, "host reference")) << note;
  }
  EXPECT_TRUE(on_device);
  EXPECT_TRUE(absl::StrContains((*session)->gpu()->graph_status(), "CUDA graph replay"))
      << (*session)->gpu()->graph_status();
}

std::vector<Case> SoftmaxCases() {
  const std::vector<int64_t> all_dims = {3, 37, 5, 6};
  std::vector<Case> cases;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int rank : {2, 3, 4}) {
      for (int axis : {-1, 1}) {
        for (const char* precision : {"fp32", "fp16"}) {
          cases.push_back({absl::StrCat(op, "_rank", rank, "_axis", axis < 0 ? "m1" : "1", "_", precision),
                           op,
                           std::vector<int64_t>(all_dims.begin(), all_dims.begin() + rank),
                           {{"axis", axis}},
                           {},
                           precision});
        }
      }
    }
  }
  return cases;
}

std::vector<Case> LrnCases() {
  std::vector<Case> cases;
  for (const char* precision : {"fp32", "fp16"}) {
    cases.push_back({absl::StrCat("LRN_size5_4d_", precision),
                     "LRN",
                     {2, 16, 7, 9},
                     {{"size", 5}},
                     {{"alpha", 2e-3f}, {"beta", 0.75f}, {"bias", 1.0f}},
                     precision});
    cases.push_back({absl::StrCat("LRN_size4_3d_", precision),
                     "LRN",
                     {2, 10, 13},
                     {{"size", 4}},
                     {{"alpha", 1e-2f}, {"beta", 0.5f}, {"bias", 2.0f}},
                     precision});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Softmax, SingleOpGpuTest, testing::ValuesIn(SoftmaxCases()), Name);
INSTANTIATE_TEST_SUITE_P(Lrn, SingleOpGpuTest, testing::ValuesIn(LrnCases()), Name);

}  // namespace

// An fp32 image into a stem conv (3 channels, padded to 4) + bias + Relu: the
// channel Pad (fp16: with the input Cast) runs as one own kernel into NHWC (kernels/cuda/cast_pad.h)
// and the conv as a fused cuDNN graph (Relu as RELU_FWD); the result equals the CPU's run of the
// same plan in every run (step by step, captured, replayed).
class StemGpuTest : public testing::TestWithParam<std::string> {};

TEST_P(StemGpuTest, StemPadsInOnePassAndFuses) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", {2, 3, 16, 16});
  *g->add_output() = testing_util::TensorInfo("y", {2, 8, 16, 16});
  std::vector<float> w(8 * 3 * 3 * 3), b(8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 37) % 17) / 17.0f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * static_cast<float>(i) - 0.3f;
  testing_util::AddFloatInitializer(model, "w", {8, 3, 3, 3}, w);
  testing_util::AddFloatInitializer(model, "b", {8}, b);
  onnx::NodeProto conv = testing_util::MakeNode("Conv", {"x", "w", "b"}, {"c"}, "conv");
  testing_util::SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  *g->add_node() = conv;
  *g->add_node() = testing_util::MakeNode("Relu", {"c"}, {"y"}, "relu");
  runtime::SessionOptions options;
  options.device = runtime::Device::kCuda;
  options.precision = GetParam();
  options.gpu.plan_cache = false;
  options.gpu.measure_choices = false;  // this test is about the graph being built: never split
  auto session = runtime::Session::CreateFromBytes(model.SerializeAsString(), options);
  if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
    GTEST_SKIP() << session.status().message();
  }
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput({2, 3, 16, 16})}};
  auto cpu = (*session)->RunOn(runtime::Device::kCpu, inputs, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  // fp16: 16-bit rounding; tf32: 27 products (|x| <= 2, |w| <= 0.5) each within 2^-10 of itself.
  const testing_util::Tolerance tol =
      GetParam() == "fp16" ? testing_util::Tolerance{1e-2, 1e-3} : testing_util::Tolerance{2e-3, 2e-3};
  for (int run = 0; run < 3; ++run) {  // step by step, captured, replayed
    auto gpu = (*session)->Run(inputs);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    EXPECT_EQ(testing_util::CompareTensors((*gpu)[0].tensor, (*cpu)[0].tensor, tol), "") << "run " << run;
  }
  const std::string one_pass = GetParam() == "fp16" ? "cast, NHWC layout and channel padding in one pass"
                                                    : "NHWC layout and channel padding in one pass";
  bool padded = false, fused = false;
  for (const std::string& note : (*session)->gpu_step_notes()) {
    padded = padded || absl::StrContains(note, one_pass);
    fused = fused || absl::StrContains(note, "cuDNN operation graph");
    EXPECT_FALSE(absl::StrContains(note, "host reference")) << note;
  }
  EXPECT_TRUE(padded);
  EXPECT_TRUE(fused);
}

INSTANTIATE_TEST_SUITE_P(Precisions, StemGpuTest, testing::Values("fp16", "tf32"));
