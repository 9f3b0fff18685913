// GroupNormalization (opset 18's per-group and opset 21's per-channel scale and bias) and
// RMSNormalization (opset 23) on the own row-normalisation kernel, and LpNormalization (p 1 and 2;
// one slice of zeros: a zero norm gives 0) on its own kernel (runtime/device_runners_math.cc):
// each a small model compared element by element with the CPU reference kernels running the same
// plan (themselves checked against ONNX's stored outputs in tests/conformance), required to run on
// the device (never the host fallback) and to replay a CUDA graph on the third run, in fp32 and
// fp16. Rows of whole 16-byte packs take the one-warp-per-row kernel, others the block kernel; where
// a case says so, a 3x3 conv writes the norm's input, which the GPU keeps channels last. Skips when
// no GPU is usable.
#include <string>
#include <utility>
#include <variant>
#include <vector>

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
  std::string op;  // GroupNormalization, RMSNormalization or LpNormalization
  int opset = 21;
  std::vector<int64_t> dims;        // the model input x's
  bool after_conv = false;          // a 3x3 conv (8 channels, pads 1) writes the norm's input
  int64_t num_groups = 0;           // GroupNormalization
  std::vector<int64_t> scale_dims;  // RMSNormalization: scale's dims; GroupNormalization: [C] or [groups]
  int64_t axis = -1;                // RMSNormalization, LpNormalization
  float epsilon = 1e-5f;
  int64_t p = 2;  // LpNormalization
};

std::string Name(const testing::TestParamInfo<std::pair<Case, std::string>>& info) {
  return absl::StrCat(info.param.first.label, "_", info.param.second);
}

// Values in [-1.5, 1.5) that differ from element to element (a scale of ones would hide an indexing error).
std::vector<float> ParamValues(int64_t count, int salt) {
  std::vector<float> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 13 + salt * 7) % 23) / 23.0f * 3.0f - 1.5f;
  return v;
}

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string NormModel(const Case& c) {
  onnx::ModelProto model = testing_util::MakeModel(c.opset);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", testing_util::StaticDims(c.dims));
  std::vector<int64_t> y_dims = c.dims;
  std::string x = "x";
  if (c.after_conv) {
    testing_util::AddConvPrefix(model, "x", c.dims[1], "c");
    x = "c";
    y_dims[1] = 8;
  }
  *g->add_output() = testing_util::TensorInfo("y", testing_util::StaticDims(y_dims));
  std::vector<std::string> inputs = {x};
  if (!c.scale_dims.empty()) {
    testing_util::AddFloatInitializer(model, "scale", c.scale_dims, ParamValues(Count(c.scale_dims), 1));
    inputs.push_back("scale");
  }
  if (c.op == "GroupNormalization") {
    testing_util::AddFloatInitializer(model, "bias", c.scale_dims, ParamValues(Count(c.scale_dims), 2));
    inputs.push_back("bias");
  }
  onnx::NodeProto node = testing_util::MakeNode(c.op, inputs, {"y"}, "norm");
  if (c.op == "GroupNormalization") testing_util::SetIntAttr(node, "num_groups", c.num_groups);
  if (c.op != "GroupNormalization") testing_util::SetIntAttr(node, "axis", c.axis);
  if (c.op == "LpNormalization") {
    testing_util::SetIntAttr(node, "p", c.p);
  } else {
    testing_util::SetFloatAttr(node, "epsilon", c.epsilon);
  }
  *g->add_node() = node;
  return model.SerializeAsString();
}

class NormGpuTest : public testing::TestWithParam<std::pair<Case, std::string>> {};

TEST_P(NormGpuTest, OwnKernelMatchesCpuKernels) {
  const Case& c = GetParam().first;
  const std::string& precision = GetParam().second;
  // x uniform in [-3, 3] plus an offset, so that GroupNormalization's mean matters.
  ir::Tensor x = partitioner::test::RandomTensor(c.dims, /*seed=*/9, -2.0f, 4.0f);
  if (c.op == "LpNormalization" && !c.after_conv) {  // the slice x[0, ..., :, 0, ...] all zeros
    const size_t axis = static_cast<size_t>(c.axis < 0 ? c.axis + static_cast<int64_t>(c.dims.size()) : c.axis);
    const int64_t inner = Count(std::vector<int64_t>(c.dims.begin() + axis + 1, c.dims.end()));
    for (int64_t k = 0; k < c.dims[axis]; ++k) x.data<float>()[k * inner] = 0.0f;
  }
  // The statistics are in float or double on both sides; fp16 rounds x, the parameters and y.
  const testing_util::Tolerance tol =
      precision == "fp16" ? testing_util::Tolerance{2e-2, 2e-3} : testing_util::Tolerance{1e-4, 1e-5};
  auto session = testing_util::ExpectGpuRunsMatchCpu(NormModel(c), precision, {{"x", x}}, c.label, tol);
  if (session == nullptr && !HasFailure()) GTEST_SKIP() << "no usable GPU";
  ASSERT_NE(session, nullptr);
  testing_util::ExpectOwnKernelsReplayed(*session, c.label);
}

std::vector<Case> Cases() {
  return {
      {"group_norm_per_channel_after_conv", "GroupNormalization", 21, {2, 3, 5, 6}, true, 4, {8}},
      {"group_norm_3d_epsilon", "GroupNormalization", 21, {1, 6, 7}, false, 2, {6}, -1, 1e-2f},
      {"group_norm_one_channel_per_group", "GroupNormalization", 21, {2, 4, 3, 3}, false, 4, {4}},
      {"group_norm_opset18_per_group", "GroupNormalization", 18, {2, 6, 4, 4}, false, 3, {3}},
      {"rms_norm_last_axis_64", "RMSNormalization", 23, {2, 3, 64}, false, 0, {64}},
      {"rms_norm_hidden_1024", "RMSNormalization", 23, {2, 1024}, false, 0, {1024}},
      {"rms_norm_axis1_4d", "RMSNormalization", 23, {2, 4, 5, 3}, false, 0, {4, 5, 3}, 1},
      {"rms_norm_broadcast_scale", "RMSNormalization", 23, {3, 5, 3}, false, 0, {1, 3}, -2, 1e-3f},
      {"rms_norm_after_conv", "RMSNormalization", 23, {1, 3, 4, 4}, true, 0, {8, 4, 4}, 1},
      {"lp_norm_l2_last_axis", "LpNormalization", 13, {3, 512}, false, 0, {}, -1},
      {"lp_norm_l1_middle_axis", "LpNormalization", 13, {2, 7, 5}, false, 0, {}, 1, 0, 1},
      {"lp_norm_l2_channels_after_conv", "LpNormalization", 13, {1, 3, 4, 5}, true, 0, {}, 1},
  };
}

std::vector<std::pair<Case, std::string>> WithPrecisions() {
  std::vector<std::pair<Case, std::string>> all;
  for (const Case& c : Cases()) {
    for (const char* precision : {"fp32", "fp16"}) all.emplace_back(c, precision);
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Forms, NormGpuTest, testing::ValuesIn(WithPrecisions()), Name);

}  // namespace
