// LSTM, GRU and RNN on the GPU through the whole Session (cuDNN's RNN API as a Legacy step), each
// output (Y, Y_h, Y_c) compared element by element with the CPU reference kernel running the same
// plan: forward and bidirectional, layout 0 and 1, sequence_lens (a constant with short sequences,
// or a graph input read each run), initial states, fp32 (FMA math), tf32 and fp16. A supported
// form must run as "legacy cuDNN: <op> (cudnnRNNForward)" and replay a CUDA graph on the third run
// (unless sequence_lens is computed at run time); forms cuDNN does not compute as ONNX does
// (reverse, clip, GRU linear_before_reset=0) must say why and still match on the host kernel.
// Without a usable GPU only the model and its CPU run are checked, then the case skips.
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

constexpr int64_t kSeq = 7, kBatch = 4, kInput = 10, kHidden = 16;
const std::vector<int32_t> kLengths = {7, 3, 5, 1};  // every length kind: full, middle, single step

struct RnnCase {
  std::string label;
  std::string op;  // LSTM, GRU or RNN
  std::string direction = "forward";
  int64_t layout = 0;
  bool lengths = false;                  // sequence_lens as a constant
  bool lengths_input = false;            // sequence_lens as a graph input
  bool states = false;                   // initial_h (and initial_c) as graph inputs
  std::vector<std::string> activations;  // empty: the op's defaults
  int64_t linear_before_reset = 1;       // GRU
  float clip = 0;                        // > 0: the clip attribute
  std::string precision = "fp32";
  std::string host_reason;  // non-empty: the step must run on the host, saying this
};

std::string Name(const testing::TestParamInfo<RnnCase>& info) { return info.param.label; }

int64_t Directions(const RnnCase& c) { return c.direction == "bidirectional" ? 2 : 1; }
int64_t Gates(const RnnCase& c) { return c.op == "LSTM" ? 4 : c.op == "GRU" ? 3 : 1; }

std::vector<float> Uniform(int64_t n, float bound, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-bound, bound);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void AddFloatInitializer(onnx::ModelProto& model, const std::string& name, const std::vector<int64_t>& dims,
                         float bound, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  testing_util::AddFloatInitializer(model, name, dims, Uniform(n, bound, seed));
}

std::vector<int64_t> XDims(const RnnCase& c) {
  return c.layout == 1 ? std::vector<int64_t>{kBatch, kSeq, kInput} : std::vector<int64_t>{kSeq, kBatch, kInput};
}
std::vector<int64_t> StateDims(const RnnCase& c) {
  return c.layout == 1 ? std::vector<int64_t>{kBatch, Directions(c), kHidden}
                       : std::vector<int64_t>{Directions(c), kBatch, kHidden};
}
std::vector<int64_t> YDims(const RnnCase& c) {
  return c.layout == 1 ? std::vector<int64_t>{kBatch, kSeq, Directions(c), kHidden}
                       : std::vector<int64_t>{kSeq, Directions(c), kBatch, kHidden};
}

void SetAttributes(const RnnCase& c, onnx::NodeProto& node) {
  testing_util::SetIntAttr(node, "hidden_size", kHidden);
  testing_util::SetStringAttr(node, "direction", c.direction);
  if (c.layout != 0) testing_util::SetIntAttr(node, "layout", c.layout);
  if (c.op == "GRU") testing_util::SetIntAttr(node, "linear_before_reset", c.linear_before_reset);
  if (c.clip > 0) testing_util::SetFloatAttr(node, "clip", c.clip);
  if (!c.activations.empty()) {
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const std::string& f : c.activations) a->add_strings(f);
  }
}

// One recurrent node at opset 14: X (and initial states, sequence_lens) as graph inputs, W, R, B
// as random initializers; outputs Y, Y_h and, for LSTM, Y_c.
std::string RnnModel(const RnnCase& c) {
  onnx::ModelProto model = testing_util::MakeModel(14);
  onnx::GraphProto* g = model.mutable_graph();
  const int64_t dirs = Directions(c), rows = Gates(c) * kHidden;
  *g->add_input() = testing_util::TensorInfo("x", testing_util::StaticDims(XDims(c)));
  AddFloatInitializer(model, "w", {dirs, rows, kInput}, 0.4f, 11);
  AddFloatInitializer(model, "r", {dirs, rows, kHidden}, 0.4f, 12);
  AddFloatInitializer(model, "b", {dirs, 2 * rows}, 0.2f, 13);
  std::string lengths;
  if (c.lengths_input) {
    lengths = "lens";
    *g->add_input() = testing_util::TensorInfo(lengths, {kBatch}, onnx::TensorProto::INT32);
  } else if (c.lengths) {
    lengths = "lens";
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(lengths);
    t->set_data_type(onnx::TensorProto::INT32);
    t->add_dims(kBatch);
    for (int32_t l : kLengths) t->add_int32_data(l);
  }
  std::vector<std::string> inputs = {"x", "w", "r", "b", lengths};
  if (c.states) {
    inputs.push_back("h0");
    *g->add_input() = testing_util::TensorInfo("h0", testing_util::StaticDims(StateDims(c)));
    if (c.op == "LSTM") {
      inputs.push_back("c0");
      *g->add_input() = testing_util::TensorInfo("c0", testing_util::StaticDims(StateDims(c)));
    }
  }
  std::vector<std::string> outputs = {"y", "y_h"};
  if (c.op == "LSTM") outputs.push_back("y_c");
  onnx::NodeProto node = testing_util::MakeNode(c.op, inputs, outputs, "rec");
  SetAttributes(c, node);
  *g->add_node() = node;
  *g->add_output() = testing_util::TensorInfo("y", testing_util::StaticDims(YDims(c)));
  for (size_t o = 1; o < outputs.size(); ++o)
    *g->add_output() = testing_util::TensorInfo(outputs[o], testing_util::StaticDims(StateDims(c)));
  return model.SerializeAsString();
}

ir::Tensor RandomTensor(const std::vector<int64_t>& dims, float bound, uint32_t seed) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kFloat32, dims);
  const std::vector<float> v = Uniform(t.num_elements(), bound, seed);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

std::vector<runtime::NamedTensor> Inputs(const RnnCase& c) {
  std::vector<runtime::NamedTensor> inputs = {{"x", RandomTensor(XDims(c), 1.0f, 21)}};
  if (c.states) {
    inputs.push_back({"h0", RandomTensor(StateDims(c), 0.5f, 22)});
    if (c.op == "LSTM") inputs.push_back({"c0", RandomTensor(StateDims(c), 0.5f, 23)});
  }
  if (c.lengths_input) {
    ir::Tensor lens = *ir::Tensor::Create(ir::DType::kInt32, {kBatch});
    std::copy(kLengths.begin(), kLengths.end(), lens.data<int32_t>());
    inputs.push_back({"lens", lens});
  }
  return inputs;
}

testing_util::Tolerance ToleranceOf(const std::string& precision) {
  if (precision == "fp16") return {1e-2, 5e-3};
  if (precision == "tf32") return {1e-2, 2e-3};
  return {1e-4, 1e-5};
}

class RnnGpuTest : public testing::TestWithParam<RnnCase> {};

TEST_P(RnnGpuTest, MatchesCpuKernel) {
  const RnnCase& c = GetParam();
  const std::vector<runtime::NamedTensor> inputs = Inputs(c);
  runtime::SessionOptions options;
  options.precision = c.precision;
  options.gpu.plan_cache = false;
  // The model and the reference run on the CPU everywhere (checked without a GPU too).
  options.device = runtime::Device::kCpu;
  auto cpu_only = runtime::Session::CreateFromBytes(RnnModel(c), options);
  ASSERT_TRUE(cpu_only.ok()) << cpu_only.status();
  ASSERT_TRUE((*cpu_only)->Run(inputs).ok());
  options.device = runtime::Device::kCuda;
  auto session = runtime::Session::CreateFromBytes(RnnModel(c), options);
  if (!session.ok() && session.status().code() == absl::StatusCode::kUnavailable) {
    GTEST_SKIP() << session.status().message();
  }
  ASSERT_TRUE(session.ok()) << session.status();
  auto cpu = (*session)->RunOn(runtime::Device::kCpu, inputs, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  for (int run = 0; run < 3; ++run) {  // step by step, captured, replayed
    auto gpu = (*session)->Run(inputs);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    ASSERT_EQ(gpu->size(), cpu->size());
    for (size_t o = 0; o < cpu->size(); ++o) {
      EXPECT_EQ(testing_util::CompareTensors((*gpu)[o].tensor, (*cpu)[o].tensor, ToleranceOf(c.precision)), "")
          << "run " << run << ", output " << (*cpu)[o].name;
    }
  }
  std::string notes;
  for (const std::string& note : (*session)->gpu_step_notes()) absl::StrAppend(&notes, note, "\n");
  if (!c.host_reason.empty()) {
    EXPECT_TRUE(absl::StrContains(notes, "legacy cuDNN not used: ")) << notes;
    EXPECT_TRUE(absl::StrContains(notes, c.host_reason)) << notes;
    return;
  }
  EXPECT_TRUE(absl::StrContains(notes, absl::StrCat("legacy cuDNN: ", c.op, " (cudnnRNNForward)"))) << notes;
  EXPECT_FALSE(absl::StrContains(notes, "host reference")) << notes;
  if (!c.lengths_input) {
    EXPECT_TRUE(absl::StrContains((*session)->gpu()->graph_status(), "CUDA graph replay"))
        << (*session)->gpu()->graph_status();
  }
}

std::vector<RnnCase> LstmCases() {
  std::vector<RnnCase> cases;
  cases.push_back({.label = "LSTM_forward_fp32", .op = "LSTM"});
  cases.push_back({.label = "LSTM_forward_lengths_states_fp32", .op = "LSTM", .lengths = true, .states = true});
  cases.push_back({.label = "LSTM_forward_states_layout1_fp32", .op = "LSTM", .layout = 1, .states = true});
  for (const char* precision : {"fp32", "tf32", "fp16"}) {
    for (int64_t layout : {0, 1}) {
      cases.push_back({.label = absl::StrCat("LSTM_bidirectional_lengths_states_layout", layout, "_", precision),
                       .op = "LSTM",
                       .direction = "bidirectional",
                       .layout = layout,
                       .lengths = true,
                       .states = true,
                       .precision = precision});
    }
  }
  cases.push_back({.label = "LSTM_bidirectional_lengths_input_fp32",
                   .op = "LSTM",
                   .direction = "bidirectional",
                   .lengths_input = true,
                   .states = true});
  return cases;
}

std::vector<RnnCase> GruAndRnnCases() {
  std::vector<RnnCase> cases;
  for (const char* precision : {"fp32", "fp16"}) {
    cases.push_back({.label = absl::StrCat("GRU_bidirectional_lengths_states_", precision),
                     .op = "GRU",
                     .direction = "bidirectional",
                     .lengths = true,
                     .states = true,
                     .precision = precision});
    cases.push_back({.label = absl::StrCat("RNN_tanh_bidirectional_lengths_", precision),
                     .op = "RNN",
                     .direction = "bidirectional",
                     .lengths = true,
                     .precision = precision});
  }
  cases.push_back({.label = "GRU_forward_layout1_fp32", .op = "GRU", .layout = 1, .states = true});
  cases.push_back({.label = "RNN_relu_forward_states_fp32", .op = "RNN", .states = true, .activations = {"Relu"}});
  return cases;
}

std::vector<RnnCase> HostCases() {
  return {
      {.label = "LSTM_reverse_on_host", .op = "LSTM", .direction = "reverse", .host_reason = "direction reverse"},
      {.label = "LSTM_clip_on_host", .op = "LSTM", .clip = 0.5f, .host_reason = "clip"},
      {.label = "GRU_linear_before_reset0_on_host",
       .op = "GRU",
       .linear_before_reset = 0,
       .host_reason = "linear_before_reset = 0"},
  };
}

INSTANTIATE_TEST_SUITE_P(Lstm, RnnGpuTest, testing::ValuesIn(LstmCases()), Name);
INSTANTIATE_TEST_SUITE_P(GruRnn, RnnGpuTest, testing::ValuesIn(GruAndRnnCases()), Name);
INSTANTIATE_TEST_SUITE_P(Host, RnnGpuTest, testing::ValuesIn(HostCases()), Name);

}  // namespace
