// ConvTranspose on the GPU (cuDNN's backward-data convolution, kernels/cudnn/conv_transpose.h) in
// the forms real decoders export — UNet's 2x2 stride 2, GAN and FCN 4x4 stride 2 pad 1, 3x3 stride
// 2 with output_padding, grouped, SAME_UPPER (tf2onnx), output_shape, with and without bias — each
// compared element by element with the CPU reference kernel running the same plan (itself checked
// against ONNX's stored outputs in tests/conformance), required to run on cuDNN and to replay a
// CUDA graph on the third run. Cases after a conv get NHWC activations; the others read the model
// input (NCHW). More pad after than before is a crop of the call's output; an output_shape past
// what the kernel reaches runs on the host, still equal.
// Skips when no GPU is usable.
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
  std::vector<int64_t> dims;  // the model input's
  int64_t out_channels = 8, kernel = 2, group = 1;
  bool after_conv = false;  // a 3x3 conv (pads 1, 16 channels) writes the ConvTranspose's input
  bool bias = true;
  std::vector<std::pair<std::string, std::vector<int64_t>>> ints;
  std::string auto_pad;  // "" for NOTSET
  bool on_cudnn = true;  // false: a form the backward-data call does not reach (host)
};

std::string Name(const testing::TestParamInfo<std::pair<Case, std::string>>& info) {
  return absl::StrCat(info.param.first.label, "_", info.param.second);
}

std::vector<float> Weights(size_t count, int seed) {
  std::vector<float> w(count);
  for (size_t i = 0; i < count; ++i) w[i] = static_cast<float>((i * 37 + seed) % 17) / 17.0f - 0.5f;
  return w;
}

std::string ConvTransposeModel(const Case& c) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", testing_util::StaticDims(c.dims));
  *g->add_output() = testing_util::TensorInfo("y", {"n", "c", "h", "w"});
  std::string input = "x";
  int64_t in_c = c.dims[1];
  if (c.after_conv) {
    testing_util::AddFloatInitializer(model, "cw", {16, in_c, 3, 3}, Weights(16 * in_c * 9, 1));
    onnx::NodeProto conv = testing_util::MakeNode("Conv", {"x", "cw"}, {"c"}, "conv");
    testing_util::SetIntsAttr(conv, "pads", {1, 1, 1, 1});
    *g->add_node() = conv;
    input = "c";
    in_c = 16;
  }
  const int64_t per_group = c.out_channels / c.group;
  testing_util::AddFloatInitializer(model, "w", {in_c, per_group, c.kernel, c.kernel},
                                    Weights(in_c * per_group * c.kernel * c.kernel, 5));
  std::vector<std::string> inputs = {input, "w"};
  if (c.bias) {
    std::vector<float> b(c.out_channels);
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * static_cast<float>(i) - 0.3f;
    testing_util::AddFloatInitializer(model, "b", {c.out_channels}, b);
    inputs.push_back("b");
  }
  onnx::NodeProto t = testing_util::MakeNode("ConvTranspose", inputs, {"y"}, "up");
  testing_util::SetIntsAttr(t, "kernel_shape", {c.kernel, c.kernel});
  if (c.group != 1) testing_util::SetIntAttr(t, "group", c.group);
  for (const auto& [name, values] : c.ints) testing_util::SetIntsAttr(t, name, values);
  if (!c.auto_pad.empty()) testing_util::SetStringAttr(t, "auto_pad", c.auto_pad);
  *g->add_node() = t;
  return model.SerializeAsString();
}

class ConvTransposeGpuTest : public testing::TestWithParam<std::pair<Case, std::string>> {};

TEST_P(ConvTransposeGpuTest, MatchesCpuKernel) {
  const Case& c = GetParam().first;
  const std::string& precision = GetParam().second;
  const std::vector<runtime::NamedTensor> inputs = {
      {"x", partitioner::test::RandomTensor(c.dims, /*seed=*/13, -2.0f, 2.0f)}};
  // Sums of at most 16 * 9 * 4 products of |x| <= 2 (after a conv: <= 2 * 27 * 0.5), |w| <= 0.5:
  // fp16 and tf32 round each product's inputs to 10 or 11 bits.
  const testing_util::Tolerance tol =
      precision == "fp32" ? testing_util::Tolerance{1e-4, 1e-5} : testing_util::Tolerance{1e-2, 2e-3};
  auto session = testing_util::ExpectGpuRunsMatchCpu(ConvTransposeModel(c), precision, inputs, c.label, tol);
  if (session == nullptr && !HasFailure()) GTEST_SKIP() << "no usable GPU";
  ASSERT_NE(session, nullptr);
  // In fp16 a Cast back to float32 follows the ConvTranspose: look for its note among all steps.
  int on_cudnn = 0, on_host = 0;
  for (const std::string& note : session->gpu_step_notes()) {
    on_cudnn += absl::StrContains(note, "ConvTranspose as a backward-data convolution");
    on_host += absl::StrContains(note, "host reference kernel");
  }
  if (c.on_cudnn) {
    EXPECT_EQ(on_cudnn, 1);
    EXPECT_EQ(on_host, 0);
    EXPECT_TRUE(absl::StrContains(session->gpu()->graph_status(), "CUDA graph replay"))
        << session->gpu()->graph_status();
  } else {
    EXPECT_EQ(on_host, 1);
  }
}

std::vector<Case> Cases() {
  using Ints = std::vector<std::pair<std::string, std::vector<int64_t>>>;
  return {
      {"unet_k2_s2", {2, 4, 7, 9}, 8, 2, 1, true, true, Ints{{"strides", {2, 2}}}, ""},
      {"unet_k2_s2_nchw_no_bias", {1, 6, 5, 5}, 4, 2, 1, false, false, Ints{{"strides", {2, 2}}}, ""},
      {"gan_k4_s2_p1", {1, 3, 6, 5}, 8, 4, 1, true, true, Ints{{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}, ""},
      {"k3_s2_p1_output_padding",
       {2, 3, 5, 6},
       8,
       3,
       1,
       true,
       true,
       Ints{{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}},
       ""},
      {"grouped_k3_s1_p1", {1, 4, 6, 6}, 8, 3, 2, true, true, Ints{{"pads", {1, 1, 1, 1}}}, ""},
      {"same_upper_k3_s2", {1, 3, 5, 7}, 8, 3, 1, false, true, Ints{{"strides", {2, 2}}}, "SAME_UPPER"},
      {"output_shape_k3_s2",
       {1, 3, 4, 4},
       8,
       3,
       1,
       true,
       true,
       Ints{{"strides", {2, 2}}, {"output_shape", {8, 8}}},
       ""},
      {"dilation2_k3", {1, 3, 6, 6}, 4, 3, 1, false, true, Ints{{"dilations", {2, 2}}}, ""},
      // More pad after than before: y is the beginning of the backward-data call's output.
      {"end_pads_cropped", {1, 3, 5, 5}, 4, 3, 1, true, true, Ints{{"pads", {0, 0, 1, 1}}}, ""},
      // An output_shape past what the kernel reaches (the rows after it are the bias alone).
      {"output_shape_past_reach_on_host",
       {1, 3, 5, 5},
       4,
       3,
       1,
       false,
       true,
       Ints{{"output_shape", {9, 9}}},
       "",
       false},
  };
}

std::vector<std::pair<Case, std::string>> WithPrecisions() {
  std::vector<std::pair<Case, std::string>> all;
  for (const Case& c : Cases()) {
    for (const char* precision : {"fp32", "tf32", "fp16"}) all.emplace_back(c, precision);
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Forms, ConvTransposeGpuTest, testing::ValuesIn(WithPrecisions()), Name);

}  // namespace
