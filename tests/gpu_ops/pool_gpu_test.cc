// MaxPool and AveragePool in the forms cuDNN's pooling descriptor cannot state — ceil_mode
// (GoogLeNet, SqueezeNet), auto_pad SAME_UPPER / SAME_LOWER and asymmetric pads (tf2onnx),
// dilations — and with 1 or 3 spatial dims, on the own pooling kernel (kernels/cuda/pool.h): each
// compared element by element with the CPU reference kernels running the same plan (themselves
// checked against ONNX's stored outputs in tests/conformance), required to run on the device
// (never the host fallback) and to replay a CUDA graph on the third run. The 2-D cases pool a
// conv's output, which the GPU keeps channels last; the others pool the model input. Skips when no
// GPU is usable.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/util/compare.h"
#include "tests/util/gpu_runs.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/pass_test_util.h"

namespace {

struct Case {
  std::string label;
  std::string op;             // MaxPool or AveragePool
  std::vector<int64_t> dims;  // the model input's
  bool after_conv = false;    // a 3x3 conv (8 channels, pads 1) writes the pool's input
  std::vector<std::pair<std::string, std::vector<int64_t>>> ints;
  std::vector<std::pair<std::string, int64_t>> int_attrs;
  std::string auto_pad;  // "" for NOTSET
};

std::string Name(const testing::TestParamInfo<std::pair<Case, std::string>>& info) {
  return absl::StrCat(info.param.first.label, "_", info.param.second);
}

std::string PoolModel(const Case& c) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", testing_util::StaticDims(c.dims));
  std::vector<std::variant<int64_t, std::string>> y_dims;
  for (size_t i = 0; i < c.dims.size(); ++i) y_dims.emplace_back(absl::StrCat("y", i));
  *g->add_output() = testing_util::TensorInfo("y", y_dims);
  std::string pool_input = "x";
  if (c.after_conv) {
    testing_util::AddConvPrefix(model, "x", c.dims[1], "c");
    pool_input = "c";
  }
  onnx::NodeProto pool = testing_util::MakeNode(c.op, {pool_input}, {"y"}, "pool");
  for (const auto& [name, values] : c.ints) testing_util::SetIntsAttr(pool, name, values);
  for (const auto& [name, value] : c.int_attrs) testing_util::SetIntAttr(pool, name, value);
  if (!c.auto_pad.empty()) testing_util::SetStringAttr(pool, "auto_pad", c.auto_pad);
  *g->add_node() = pool;
  return model.SerializeAsString();
}

class PoolGpuTest : public testing::TestWithParam<std::pair<Case, std::string>> {};

TEST_P(PoolGpuTest, OwnPoolingKernelMatchesCpuKernels) {
  const Case& c = GetParam().first;
  const std::string& precision = GetParam().second;
  const std::vector<runtime::NamedTensor> inputs = {
      {"x", partitioner::test::RandomTensor(c.dims, /*seed=*/11, -4.0f, 4.0f)}};
  // fp16: 16-bit rounding of the conv's output and of the mean; fp32: a float sum of <= 27 taps.
  const testing_util::Tolerance tol =
      precision == "fp16" ? testing_util::Tolerance{1e-2, 1e-3} : testing_util::Tolerance{1e-5, 1e-6};
  auto session = testing_util::ExpectGpuRunsMatchCpu(PoolModel(c), precision, inputs, c.label, tol);
  if (session == nullptr && !HasFailure()) GTEST_SKIP() << "no usable GPU";
  ASSERT_NE(session, nullptr);
  bool own_pool = false;
  for (const std::string& note : session->gpu_step_notes()) {
    own_pool = own_pool || absl::StrContains(note, "own CUDA pooling kernel") ||
               (!c.after_conv && absl::StrContains(note, "own CUDA kernel"));
    EXPECT_FALSE(absl::StrContains(note, "host reference")) << note;
  }
  EXPECT_TRUE(own_pool);
  EXPECT_TRUE(absl::StrContains(session->gpu()->graph_status(), "CUDA graph replay")) << session->gpu()->graph_status();
}

std::vector<Case> Cases() {
  using Ints = std::vector<std::pair<std::string, std::vector<int64_t>>>;
  return {
      // GoogLeNet's stem and branch pools (ceil_mode), the last window starting in the image.
      {"max_3x3_s2_ceil",
       "MaxPool",
       {2, 3, 14, 15},
       true,
       Ints{{"kernel_shape", {3, 3}}, {"strides", {2, 2}}},
       {{"ceil_mode", 1}},
       ""},
      {"max_3x3_s1_p1_ceil",
       "MaxPool",
       {1, 5, 7, 7},
       true,
       Ints{{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}},
       {{"ceil_mode", 1}},
       ""},
      {"avg_3x3_s2_ceil_include_pad",
       "AveragePool",
       {2, 3, 10, 11},
       true,
       Ints{{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}},
       {{"ceil_mode", 1}, {"count_include_pad", 1}},
       ""},
      // tf2onnx: SAME padding, more of it after the image than before.
      {"max_3x3_s2_same_upper",
       "MaxPool",
       {1, 4, 9, 10},
       true,
       Ints{{"kernel_shape", {3, 3}}, {"strides", {2, 2}}},
       {},
       "SAME_UPPER"},
      {"avg_2x2_s1_same_lower", "AveragePool", {1, 4, 6, 7}, true, Ints{{"kernel_shape", {2, 2}}}, {}, "SAME_LOWER"},
      {"avg_3x3_asymmetric_include_pad",
       "AveragePool",
       {1, 2, 8, 8},
       true,
       Ints{{"kernel_shape", {3, 3}}, {"pads", {0, 1, 2, 0}}},
       {{"count_include_pad", 1}},
       ""},
      {"max_2x2_dilation2",
       "MaxPool",
       {1, 3, 9, 9},
       true,
       Ints{{"kernel_shape", {2, 2}}, {"dilations", {2, 2}}},
       {},
       ""},
      // Other ranks, on the model input (channels first).
      {"max_1d_k3_s2_ceil",
       "MaxPool",
       {2, 6, 17},
       false,
       Ints{{"kernel_shape", {3}}, {"strides", {2}}},
       {{"ceil_mode", 1}},
       ""},
      {"avg_3d_k2_p1",
       "AveragePool",
       {1, 3, 5, 6, 7},
       false,
       Ints{{"kernel_shape", {2, 2, 2}}, {"pads", {1, 0, 1, 1, 0, 1}}},
       {},
       ""},
      {"max_3d_k3_s2",
       "MaxPool",
       {2, 2, 7, 8, 9},
       false,
       Ints{{"kernel_shape", {3, 3, 3}}, {"strides", {2, 2, 2}}},
       {},
       ""},
  };
}

std::vector<std::pair<Case, std::string>> WithPrecisions() {
  std::vector<std::pair<Case, std::string>> all;
  for (const Case& c : Cases()) {
    for (const char* precision : {"fp32", "fp16"}) all.emplace_back(c, precision);
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Forms, PoolGpuTest, testing::ValuesIn(WithPrecisions()), Name);

}  // namespace
