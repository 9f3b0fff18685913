// GridSample over two spatial dims on the own CUDA kernel (runtime/device_runners_resize.cc): every
// mode (bilinear, nearest, bicubic) with every padding (zeros, border, reflection), with and
// without align_corners, compared element by element with the CPU reference kernel running the
// same plan (itself checked against ONNX's stored outputs in tests/conformance), required to run on
// the device and to replay a CUDA graph, in fp32 and fp16. The grid's coordinates reach past
// [-1, 1] (padding decides) and one is NaN (its outputs are NaN on both). Where a case says so, a
// 3x3 conv writes X, which the GPU keeps channels last. Skips when no GPU is usable.
#include <limits>
#include <string>
#include <utility>
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
  std::string mode;
  std::string padding;
  bool align_corners = false;
  bool after_conv = false;
  std::vector<int64_t> dims = {2, 3, 5, 6};  // X (the conv's input with after_conv)
  std::vector<int64_t> grid = {2, 4, 7, 2};
};

std::string Label(const Case& c) {
  return absl::StrCat(c.mode, "_", c.padding, c.align_corners ? "_align_corners" : "",
                      c.after_conv ? "_after_conv" : "");
}

std::string Name(const testing::TestParamInfo<std::pair<Case, std::string>>& info) {
  return absl::StrCat(Label(info.param.first), "_", info.param.second);
}

std::string GridSampleModel(const Case& c) {
  onnx::ModelProto model = testing_util::MakeModel(20);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", testing_util::StaticDims(c.dims));
  *g->add_input() = testing_util::TensorInfo("grid", testing_util::StaticDims(c.grid));
  std::string x = "x";
  int64_t channels = c.dims[1];
  if (c.after_conv) {
    testing_util::AddConvPrefix(model, "x", c.dims[1], "c");
    x = "c";
    channels = 8;
  }
  *g->add_output() =
      testing_util::TensorInfo("y", testing_util::StaticDims({c.dims[0], channels, c.grid[1], c.grid[2]}));
  onnx::NodeProto node = testing_util::MakeNode("GridSample", {x, "grid"}, {"y"}, "sample");
  testing_util::SetStringAttr(node, "mode", c.mode);
  testing_util::SetStringAttr(node, "padding_mode", c.padding);
  testing_util::SetIntAttr(node, "align_corners", c.align_corners ? 1 : 0);
  *g->add_node() = node;
  return model.SerializeAsString();
}

class GridSampleGpuTest : public testing::TestWithParam<std::pair<Case, std::string>> {};

TEST_P(GridSampleGpuTest, OwnKernelMatchesCpuKernel) {
  const Case& c = GetParam().first;
  const std::string& precision = GetParam().second;
  ir::Tensor grid = partitioner::test::RandomTensor(c.grid, /*seed=*/3, -1.3f, 1.3f);
  grid.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<runtime::NamedTensor> inputs = {
      {"x", partitioner::test::RandomTensor(c.dims, /*seed=*/4, -2.0f, 2.0f)}, {"grid", grid}};
  // The weights and sums are in double on both sides; fp16 rounds X, the grid and Y.
  const testing_util::Tolerance tol =
      precision == "fp16" ? testing_util::Tolerance{1e-2, 1e-3} : testing_util::Tolerance{1e-5, 1e-6};
  auto session = testing_util::ExpectGpuRunsMatchCpu(GridSampleModel(c), precision, inputs, Label(c), tol);
  if (session == nullptr && !HasFailure()) GTEST_SKIP() << "no usable GPU";
  ASSERT_NE(session, nullptr);
  testing_util::ExpectOwnKernelsReplayed(*session, Label(c));
}

std::vector<std::pair<Case, std::string>> WithPrecisions() {
  std::vector<Case> cases;
  for (const char* mode : {"linear", "nearest", "cubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      for (bool align : {false, true}) cases.push_back({mode, padding, align});
    }
  }
  cases.push_back({"linear", "zeros", false, /*after_conv=*/true});
  cases.push_back({"cubic", "reflection", true, /*after_conv=*/true});
  std::vector<std::pair<Case, std::string>> all;
  for (const Case& c : cases) {
    for (const char* precision : {"fp32", "fp16"}) all.emplace_back(c, precision);
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Forms, GridSampleGpuTest, testing::ValuesIn(WithPrecisions()), Name);

}  // namespace
