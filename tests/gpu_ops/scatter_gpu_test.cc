// TopK, GatherND, ScatterND and ScatterElements on the own CUDA kernels (runtime/device_runners_index.cc,
// device_runners_scatter.cc): each a small model compared element by element with the CPU
// reference kernels running the same plan (themselves checked against ONNX's stored outputs in
// tests/conformance), required to run on the device (never the host fallback) and to replay a CUDA
// graph on the third run, in fp32 and fp16. Indices are model inputs (computed on the device)
// unless a case makes them an initializer; where a case says so, a 3x3 conv writes the data,
// which the GPU keeps channels last. TopK inputs hold exact ties and a NaN (lower index first, NaN
// above every number); the add reductions repeat indices. Skips when no GPU is usable.
#include <cmath>
#include <limits>
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
  std::string op;
  std::vector<int64_t> dims;  // the data input x's (the conv's input with after_conv)
  bool after_conv = false;    // a 3x3 conv (8 channels, pads 1) writes the op's data
  std::vector<std::pair<std::string, int64_t>> int_attrs;
  std::vector<int64_t> index_dims;    // GatherND / scatters: the indices
  std::vector<int64_t> index_values;  // as many as index_dims hold
  bool constant_indices = false;      // an initializer instead of a model input
  bool int32_indices = false;         // ScatterElements
  std::vector<int64_t> update_dims;   // scatters: the updates input
  std::string reduction;              // scatters ("" for none)
  int64_t k = 0;                      // TopK: the constant K
  bool fp32_only = false;             // TopK over a conv's output: fp16 rounding may reorder near ties
};

std::string Name(const testing::TestParamInfo<std::pair<Case, std::string>>& info) {
  return absl::StrCat(info.param.first.label, "_", info.param.second);
}

std::vector<std::variant<int64_t, std::string>> SymbolicDims(const std::string& prefix) {
  std::vector<std::variant<int64_t, std::string>> dims;
  for (int i = 0; i < 6; ++i) dims.emplace_back(absl::StrCat(prefix, i));
  return dims;
}

// An int64 initializer `name` with dims and values.
void AddIndexInitializer(onnx::ModelProto& model, const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& values) {
  testing_util::AddInt64Initializer(model, name, values);
  onnx::TensorProto* t = model.mutable_graph()->mutable_initializer(model.graph().initializer_size() - 1);
  t->clear_dims();
  for (int64_t d : dims) t->add_dims(d);
}

// The output's rank (the value info's symbolic dims are cut to it).
size_t OutputRank(const Case& c) {
  const size_t data_rank = c.after_conv ? 4 : c.dims.size();
  if (c.op == "GatherND") {
    int64_t batch = 0;
    for (const auto& [name, value] : c.int_attrs) batch = name == "batch_dims" ? value : batch;
    return c.index_dims.size() - 1 + data_rank - batch - c.index_dims.back();
  }
  return data_rank;
}

std::string OneOpModel(const Case& c) {
  onnx::ModelProto model = testing_util::MakeModel(18);
  auto* g = model.mutable_graph();
  *g->add_input() = testing_util::TensorInfo("x", testing_util::StaticDims(c.dims));
  std::vector<std::string> inputs = {"x"};
  if (c.after_conv) {
    testing_util::AddConvPrefix(model, "x", c.dims[1], "c");
    inputs = {"c"};
  }
  if (c.op == "TopK") {
    testing_util::AddInt64Initializer(model, "k", {c.k});
    inputs.push_back("k");
  } else if (c.constant_indices) {
    AddIndexInitializer(model, "idx", c.index_dims, c.index_values);
    inputs.push_back("idx");
  } else {
    *g->add_input() = testing_util::TensorInfo("idx", testing_util::StaticDims(c.index_dims),
                                               c.int32_indices ? onnx::TensorProto::INT32 : onnx::TensorProto::INT64);
    inputs.push_back("idx");
  }
  if (!c.update_dims.empty()) {
    *g->add_input() = testing_util::TensorInfo("upd", testing_util::StaticDims(c.update_dims));
    inputs.push_back("upd");
  }
  auto y_dims = SymbolicDims("y");
  y_dims.resize(OutputRank(c));
  *g->add_output() = testing_util::TensorInfo("y", y_dims);
  std::vector<std::string> outputs = {"y"};
  if (c.op == "TopK") {
    *g->add_output() = testing_util::TensorInfo("i", y_dims, onnx::TensorProto::INT64);
    outputs.push_back("i");
  }
  onnx::NodeProto node = testing_util::MakeNode(c.op, inputs, outputs, "op");
  for (const auto& [name, value] : c.int_attrs) testing_util::SetIntAttr(node, name, value);
  if (!c.reduction.empty()) testing_util::SetStringAttr(node, "reduction", c.reduction);
  *g->add_node() = node;
  return model.SerializeAsString();
}

// x uniform in [-3, 3]; for TopK of the model input rounded to halves (exact ties) with one NaN.
std::vector<runtime::NamedTensor> Inputs(const Case& c) {
  ir::Tensor x = partitioner::test::RandomTensor(c.dims, /*seed=*/5, -3.0f, 3.0f);
  if (c.op == "TopK" && !c.after_conv) {
    float* v = x.data<float>();
    for (int64_t i = 0; i < x.num_elements(); ++i) v[i] = std::round(v[i] * 2.0f) / 2.0f;
    v[x.num_elements() / 3] = std::numeric_limits<float>::quiet_NaN();
  }
  std::vector<runtime::NamedTensor> inputs = {{"x", x}};
  if (c.op != "TopK" && !c.constant_indices) {
    ir::Tensor idx = *ir::Tensor::Create(c.int32_indices ? ir::DType::kInt32 : ir::DType::kInt64, c.index_dims);
    for (size_t i = 0; i < c.index_values.size(); ++i) {
      if (c.int32_indices) {
        idx.data<int32_t>()[i] = static_cast<int32_t>(c.index_values[i]);
      } else {
        idx.data<int64_t>()[i] = c.index_values[i];
      }
    }
    inputs.push_back({"idx", idx});
  }
  if (!c.update_dims.empty()) inputs.push_back({"upd", partitioner::test::RandomTensor(c.update_dims, 7, -2.0f, 2.0f)});
  return inputs;
}

class ScatterGpuTest : public testing::TestWithParam<std::pair<Case, std::string>> {};

TEST_P(ScatterGpuTest, OwnKernelMatchesCpuKernels) {
  const Case& c = GetParam().first;
  const std::string& precision = GetParam().second;
  // Moves and picks are exact; the add reductions sum in another order (fp16: rounding each sum).
  const testing_util::Tolerance tol =
      precision == "fp16" ? testing_util::Tolerance{1e-2, 1e-3} : testing_util::Tolerance{1e-5, 1e-6};
  auto session = testing_util::ExpectGpuRunsMatchCpu(OneOpModel(c), precision, Inputs(c), c.label, tol);
  if (session == nullptr && !HasFailure()) GTEST_SKIP() << "no usable GPU";
  ASSERT_NE(session, nullptr);
  testing_util::ExpectOwnKernelsReplayed(*session, c.label);
}

std::vector<Case> TopKCases() {
  Case last{"topk_last_axis", "TopK", {3, 20}};
  last.k = 5;
  Case smallest{"topk_smallest_middle_axis", "TopK", {2, 9, 4}, false, {{"axis", 1}, {"largest", 0}}};
  smallest.k = 3;
  Case full{"topk_full_sort_long_rows", "TopK", {2, 300}};
  full.k = 300;
  Case channels{"topk_channels_after_conv", "TopK", {1, 3, 4, 5}, true, {{"axis", 1}}};
  channels.k = 4;
  channels.fp32_only = true;
  return {last, smallest, full, channels};
}

std::vector<Case> GatherNDCases() {
  Case pairs{"gather_nd_pairs", "GatherND", {4, 5, 6}};
  pairs.index_dims = {3, 2};
  pairs.index_values = {0, 4, -1, 2, 2, -5};
  Case batch{"gather_nd_batch_dims_1", "GatherND", {2, 5, 3}, false, {{"batch_dims", 1}}};
  batch.index_dims = {2, 4, 1};
  batch.index_values = {4, 0, -2, 1, 3, 3, 0, -5};
  Case conv{"gather_nd_triples_after_conv", "GatherND", {1, 3, 4, 5}, true};
  conv.index_dims = {2, 3};
  conv.index_values = {0, 7, 2, 0, -8, -1};
  Case constant = pairs;
  constant.label = "gather_nd_constant_indices";
  constant.constant_indices = true;
  return {pairs, batch, conv, constant};
}

std::vector<Case> ScatterCases() {
  Case rows{"scatter_nd_rows", "ScatterND", {6, 4}};
  rows.index_dims = {3, 1};
  rows.index_values = {1, 4, -1};
  rows.update_dims = {3, 4};
  Case add{"scatter_nd_add_repeated", "ScatterND", {5, 4}};
  add.index_dims = {6, 2};
  add.index_values = {0, 1, 4, 3, 0, 1, -1, -1, 2, 0, 0, 1};
  add.update_dims = {6};
  add.reduction = "add";
  Case conv{"scatter_nd_after_conv", "ScatterND", {1, 3, 3, 4}, true};
  conv.index_dims = {2, 2};
  conv.index_values = {0, 3, 0, -1};
  conv.update_dims = {2, 3, 4};
  Case elements{"scatter_elements_axis1", "ScatterElements", {3, 5}, false, {{"axis", 1}}};
  elements.index_dims = {3, 2};
  elements.index_values = {4, 0, -1, 1, 2, -4};
  elements.update_dims = {3, 2};
  Case elements_add{"scatter_elements_add_int32_indices", "ScatterElements", {4, 3}, false, {{"axis", 0}}};
  elements_add.index_dims = {5, 3};
  elements_add.index_values = {0, 1, 2, 3, 3, 3, 0, 1, 2, -1, 0, 0, 1, 1, 1};
  elements_add.update_dims = {5, 3};
  elements_add.reduction = "add";
  elements_add.int32_indices = true;
  Case elements_conv{"scatter_elements_channels_after_conv", "ScatterElements", {1, 2, 3, 3}, true, {{"axis", 1}}};
  elements_conv.index_dims = {1, 2, 3, 3};
  for (int64_t p = 0; p < 18; ++p) elements_conv.index_values.push_back(p < 9 ? p % 8 : (p + 3) % 8 - 8);
  elements_conv.update_dims = {1, 2, 3, 3};
  return {rows, add, conv, elements, elements_add, elements_conv};
}

std::vector<std::pair<Case, std::string>> WithPrecisions() {
  std::vector<Case> cases = TopKCases();
  for (std::vector<Case> more : {GatherNDCases(), ScatterCases()}) cases.insert(cases.end(), more.begin(), more.end());
  std::vector<std::pair<Case, std::string>> all;
  for (const Case& c : cases) {
    for (const char* precision : {"fp32", "fp16"}) {
      if (!c.fp32_only || precision == std::string("fp32")) all.emplace_back(c, precision);
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Forms, ScatterGpuTest, testing::ValuesIn(WithPrecisions()), Name);

}  // namespace
