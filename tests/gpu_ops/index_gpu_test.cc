// ArgMax / ArgMin, GatherElements, Trilu, DepthToSpace and SpaceToDepth on the own CUDA kernels
// (runtime/device_runners_index.cc): each a small model compared element by element with the CPU
// reference kernels running the same plan (themselves checked against ONNX's stored outputs in
// tests/conformance), required to run on the device (never the host fallback) and to replay a CUDA
// graph on the third run, in fp32 and fp16. Where a case says so, a 3x3 conv writes the op's input,
// which the GPU keeps channels last (the runners read stored strides or convert). ArgMax inputs
// hold ties and a NaN (the first index wins, or the last with select_last_index). Skips when no GPU
// is usable.
#include <cmath>
#include <limits>
#include <optional>
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
  std::string op;
  std::vector<int64_t> dims;  // the model input x's
  bool after_conv = false;    // a 3x3 conv (8 channels, pads 1) writes the op's input
  std::vector<std::pair<std::string, int64_t>> int_attrs;
  std::string mode;                 // DepthToSpace / SpaceToDepth mode ("" for the default)
  std::vector<int64_t> index_dims;  // GatherElements: the indices input's dims
  std::optional<int64_t> trilu_k;   // Trilu: a constant k input
  int64_t index_range = 0;          // GatherElements: the data dim along the axis
  bool fp32_only = false;           // an ArgMax over a conv's output: fp16 rounding may reorder near ties
};

std::string Name(const testing::TestParamInfo<std::pair<Case, std::string>>& info) {
  return absl::StrCat(info.param.first.label, "_", info.param.second);
}

std::vector<std::variant<int64_t, std::string>> SymbolicDims(size_t rank) {
  std::vector<std::variant<int64_t, std::string>> dims;
  for (size_t i = 0; i < rank; ++i) dims.emplace_back(absl::StrCat("y", i));
  return dims;
}

std::string OneOpModel(const Case& c) {
  onnx::ModelProto model = testing_util::MakeModel(c.op == "SpaceToDepth" || c.op == "Trilu" ? 14 : 13);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", testing_util::StaticDims(c.dims));
  std::vector<std::string> inputs = {"x"};
  if (c.after_conv) {
    testing_util::AddConvPrefix(model, "x", c.dims[1], "c");
    inputs = {"c"};
  }
  if (!c.index_dims.empty()) {
    *g->add_input() = testing_util::TensorInfo("idx", testing_util::StaticDims(c.index_dims), onnx::TensorProto::INT64);
    inputs.push_back("idx");
  }
  if (c.trilu_k) {
    testing_util::AddInt64Initializer(model, "k", {*c.trilu_k}, /*scalar=*/true);
    inputs.push_back("k");
  }
  const bool arg = absl::StartsWith(c.op, "Arg");
  bool keepdims = true;
  for (const auto& [name, value] : c.int_attrs) keepdims = keepdims && !(name == "keepdims" && value == 0);
  size_t out_rank = arg && !keepdims ? c.dims.size() - 1 : c.dims.size();
  if (c.op == "GatherElements") out_rank = c.index_dims.size();
  *g->add_output() =
      testing_util::TensorInfo("y", SymbolicDims(out_rank), arg ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT);
  onnx::NodeProto node = testing_util::MakeNode(c.op, inputs, {"y"}, "op");
  for (const auto& [name, value] : c.int_attrs) testing_util::SetIntAttr(node, name, value);
  if (!c.mode.empty()) testing_util::SetStringAttr(node, "mode", c.mode);
  *g->add_node() = node;
  return model.SerializeAsString();
}

// x uniform in [-3, 3]; for ArgMax / ArgMin of the model input rounded to integers (exact ties)
// with one NaN (after a conv, ties would be rounding-order near ties).
ir::Tensor Input(const Case& c) {
  ir::Tensor x = partitioner::test::RandomTensor(c.dims, /*seed=*/5, -3.0f, 3.0f);
  if (absl::StartsWith(c.op, "Arg") && !c.after_conv) {
    float* v = x.data<float>();
    for (int64_t i = 0; i < x.num_elements(); ++i) v[i] = std::round(v[i]);
    v[x.num_elements() / 3] = std::numeric_limits<float>::quiet_NaN();
  }
  return x;
}

// GatherElements indices in [-range, range), every one valid, negatives included.
ir::Tensor Indices(const Case& c) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kInt64, c.index_dims);
  for (int64_t i = 0; i < t.num_elements(); ++i)
    t.data<int64_t>()[i] = (i * 7 + 3) % (2 * c.index_range) - c.index_range;
  return t;
}

class IndexGpuTest : public testing::TestWithParam<std::pair<Case, std::string>> {};

TEST_P(IndexGpuTest, OwnKernelMatchesCpuKernels) {
  const Case& c = GetParam().first;
  const std::string& precision = GetParam().second;
  std::vector<runtime::NamedTensor> inputs = {{"x", Input(c)}};
  if (!c.index_dims.empty()) inputs.push_back({"idx", Indices(c)});
  // Data movement and index picks are exact; fp16 rounds the conv's output the same on both sides
  // except for its accumulation order.
  const testing_util::Tolerance tol =
      precision == "fp16" ? testing_util::Tolerance{1e-2, 1e-3} : testing_util::Tolerance{1e-5, 1e-6};
  auto session = testing_util::ExpectGpuRunsMatchCpu(OneOpModel(c), precision, inputs, c.label, tol);
  if (session == nullptr && !HasFailure()) GTEST_SKIP() << "no usable GPU";
  ASSERT_NE(session, nullptr);
  testing_util::ExpectOwnKernelsReplayed(*session, c.label);
}

std::vector<Case> Cases() {
  Case argmax_channels{"argmax_channels_after_conv", "ArgMax", {2, 3, 5, 6}, true, {{"axis", 1}}};
  argmax_channels.fp32_only = true;
  Case argmax_last{"argmax_last_index", "ArgMax", {3, 4, 9}, false, {{"axis", -1}, {"select_last_index", 1}}};
  Case argmin_flat{"argmin_axis0_nokeep", "ArgMin", {7, 5}, false, {{"axis", 0}, {"keepdims", 0}}};
  Case gather_elements{"gather_elements_axis1", "GatherElements", {3, 6, 5}, false, {{"axis", 1}}};
  gather_elements.index_dims = {3, 4, 5};
  gather_elements.index_range = 6;
  Case gather_after_conv{"gather_elements_last_axis_after_conv", "GatherElements", {1, 3, 4, 7}, true, {{"axis", -1}}};
  gather_after_conv.index_dims = {1, 6, 4, 3};
  gather_after_conv.index_range = 7;
  Case tril{"trilu_lower", "Trilu", {2, 5, 6}, false, {{"upper", 0}}};
  Case triu{"trilu_upper_k1", "Trilu", {3, 4, 4}, false, {}};
  triu.trilu_k = 1;
  Case triu_neg{"trilu_upper_k_minus2_after_conv", "Trilu", {1, 2, 6, 5}, true, {}};
  triu_neg.trilu_k = -2;
  return {
      argmax_channels,
      argmax_last,
      argmin_flat,
      gather_elements,
      gather_after_conv,
      tril,
      triu,
      triu_neg,
      {"depth_to_space_dcr_after_conv", "DepthToSpace", {1, 3, 4, 5}, true, {{"blocksize", 2}}, "DCR"},
      {"depth_to_space_crd_after_conv", "DepthToSpace", {2, 3, 3, 4}, true, {{"blocksize", 2}}, "CRD"},
      {"depth_to_space_crd_input", "DepthToSpace", {1, 18, 2, 3}, false, {{"blocksize", 3}}, "CRD"},
      {"space_to_depth_input", "SpaceToDepth", {2, 3, 6, 4}, false, {{"blocksize", 2}}, ""},
      {"space_to_depth_after_conv", "SpaceToDepth", {1, 2, 6, 9}, true, {{"blocksize", 3}}, ""},
  };
}

std::vector<std::pair<Case, std::string>> WithPrecisions() {
  std::vector<std::pair<Case, std::string>> all;
  for (const Case& c : Cases()) {
    for (const char* precision : {"fp32", "fp16"}) {
      if (!c.fp32_only || precision == std::string("fp32")) all.emplace_back(c, precision);
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Forms, IndexGpuTest, testing::ValuesIn(WithPrecisions()), Name);

}  // namespace
