// Softmax and LogSoftmax on the GPU (issue 16): every rank 2/3/4 and axis -1/1, fp32 and fp16, run as
// a device step (cuDNN's softmax, or the own kernel where cuDNN does not take the shape), compared
// element by element with the CPU reference kernels running the same plan; the third run of a
// model ending in LogSoftmax replays a CUDA graph. Skips when no GPU is usable.
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
  std::string op;
  int rank;
  int axis;
  std::string precision;
};

std::string Name(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return absl::StrCat(c.op, "_rank", c.rank, "_axis", c.axis < 0 ? "m1" : "1", "_", c.precision);
}

std::vector<int64_t> DimsOfRank(int rank) {
  const std::vector<int64_t> all = {3, 37, 5, 6};
  return std::vector<int64_t>(all.begin(), all.begin() + rank);
}

std::string SoftmaxModel(const Case& c) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  std::vector<std::variant<int64_t, std::string>> dims;
  for (int64_t d : DimsOfRank(c.rank)) dims.emplace_back(d);
  *model.mutable_graph()->add_input() = testing_util::TensorInfo("x", dims);
  *model.mutable_graph()->add_output() = testing_util::TensorInfo("y", dims);
  onnx::NodeProto node = testing_util::MakeNode(c.op, {"x"}, {"y"}, "softmax");
  testing_util::SetIntAttr(node, "axis", c.axis);
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

class SoftmaxGpuTest : public testing::TestWithParam<Case> {};

TEST_P(SoftmaxGpuTest, DeviceStepMatchesCpuKernels) {
  const Case& c = GetParam();
  runtime::SessionOptions options;
  options.device = runtime::Device::kCuda;
  options.precision = c.precision;
  options.gpu.plan_cache = false;
  auto session = runtime::Session::CreateFromBytes(SoftmaxModel(c), options);
  if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
    GTEST_SKIP() << session.status().message();
  }
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<runtime::NamedTensor> inputs = {{"x", RandomInput(DimsOfRank(c.rank))}};
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

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int rank : {2, 3, 4}) {
      for (int axis : {-1, 1}) {
        for (const char* precision : {"fp32", "fp16"}) cases.push_back({op, rank, axis, precision});
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllRanksAndAxes, SoftmaxGpuTest, testing::ValuesIn(AllCases()), Name);

}  // namespace
