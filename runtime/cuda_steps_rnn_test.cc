// The support rule of recurrent Legacy steps (runtime/cuda_steps_rnn.h) on single LSTM/GRU/RNN
// nodes: the forms cuDNN's RNN API takes, with their cuDNN spec, and the forms left to the host
// with the reason --explain shows. Needs no GPU (the device run is tests/gpu_ops/rnn_gpu_test).
#include "runtime/cuda_steps_rnn.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph.h"

namespace exec {
namespace {

using ::testing::HasSubstr;

// One recurrent node: X [T=5, N=2, I=3] (or [N, T, I] for layout 1), constant W, R (and B, P) of
// hidden size 4, outputs Y and Y_h.
class Recurrent {
 public:
  Recurrent(std::string op, int64_t dirs = 1, ir::DType dtype = ir::DType::kFloat32) : dirs_(dirs), dtype_(dtype) {
    node_.op_type = op;
    node_.name = "rec";
    node_.opset = 14;
    gates_ = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
    if (dirs == 2) Attr("direction", std::string("bidirectional"));
    if (op == "GRU") Attr("linear_before_reset", int64_t{1});
  }
  Recurrent& Attr(const std::string& name, ir::AttributeValue value) {
    node_.attrs.Set(name, std::move(value));
    return *this;
  }
  Recurrent& WithB(int64_t length = -1) {
    bias_ = length < 0 ? 2 * gates_ * kHidden : length;
    return *this;
  }
  Recurrent& WithP(float value) {
    peephole_ = value;
    return *this;
  }
  Recurrent& ComputedW() {
    computed_w_ = true;
    return *this;
  }
  Recurrent& ComputedP() {
    computed_p_ = true;
    return *this;
  }
  const ir::Graph& graph() {
    Build();
    return graph_;
  }
  const ir::Node& node() {
    Build();
    return graph_.node(0);
  }

 private:
  static constexpr int64_t kHidden = 4, kInput = 3;
  ir::ValueId Constant(std::vector<int64_t> dims, float fill) {
    ir::Tensor t = *ir::Tensor::Create(ir::DType::kFloat32, dims);
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = fill;
    if (dtype_ != ir::DType::kFloat32) {
      ir::Tensor converted = *ir::Tensor::Create(dtype_, dims);
      return graph_.AddConstant(Name(), converted);  // zeros of the dtype: only the type matters here
    }
    return graph_.AddConstant(Name(), t);
  }
  ir::ValueId Computed(std::vector<int64_t> dims) {
    const ir::ValueId id = graph_.AddValue(Name(), {dtype_, ir::ShapeFromInts(dims)});
    graph_.inputs().push_back(id);
    return id;
  }
  void Build() {
    if (built_) return;
    built_ = true;
    const int64_t rows = gates_ * kHidden;
    node_.inputs.push_back(Computed({5, 2, kInput}));
    node_.inputs.push_back(computed_w_ ? Computed({dirs_, rows, kInput}) : Constant({dirs_, rows, kInput}, 0.5f));
    node_.inputs.push_back(Constant({dirs_, rows, kHidden}, 0.25f));
    if (bias_ >= 0 || peephole_ || computed_p_) {
      node_.inputs.push_back(bias_ >= 0 ? Constant({dirs_, bias_}, 0.1f) : ir::kNoValue);
    }
    if (peephole_ || computed_p_) {
      for (int i = 0; i < 3; ++i) node_.inputs.push_back(ir::kNoValue);  // sequence_lens, initial_h, initial_c
      node_.inputs.push_back(computed_p_ ? Computed({dirs_, 3 * kHidden}) : Constant({dirs_, 3 * kHidden}, *peephole_));
    }
    node_.outputs = {graph_.AddValue(Name()), graph_.AddValue(Name())};
    graph_.AddNode(node_);
  }
  std::string Name() { return "v" + std::to_string(graph_.values().size()); }

  ir::Graph graph_;
  ir::Node node_;
  int64_t dirs_, gates_ = 1, bias_ = -1;
  ir::DType dtype_;
  std::optional<float> peephole_;
  bool computed_w_ = false, computed_p_ = false, built_ = false;
};

std::string Rejection(Recurrent& r) { return RecurrentRejection(r.graph(), r.node()); }

TEST(RecurrentRuleTest, IdentifiesTheRecurrentOps) {
  EXPECT_TRUE(IsRecurrentOp("LSTM"));
  EXPECT_TRUE(IsRecurrentOp("GRU"));
  EXPECT_TRUE(IsRecurrentOp("RNN"));
  EXPECT_FALSE(IsRecurrentOp("Scan"));
}

TEST(RecurrentRuleTest, LstmForwardWithBias) {
  Recurrent r("LSTM");
  r.WithB();
  ASSERT_EQ(Rejection(r), "");
  absl::StatusOr<cudnn::RnnSpec> spec = RecurrentSpecOf(r.graph(), r.node(), false);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->cell, cudnn::RnnCell::kLstm);
  EXPECT_EQ(spec->type, cudnn::IoType::kFloat);
  EXPECT_FALSE(spec->bidirectional);
  EXPECT_FALSE(spec->batch_major);
  EXPECT_FALSE(spec->allow_tf32);
  EXPECT_EQ(spec->input_size, 3);
  EXPECT_EQ(spec->hidden_size, 4);
}

TEST(RecurrentRuleTest, BidirectionalHalfBatchMajorLstm) {
  Recurrent r("LSTM", 2, ir::DType::kFloat16);
  r.Attr("layout", int64_t{1}).WithB();
  ASSERT_EQ(Rejection(r), "");
  absl::StatusOr<cudnn::RnnSpec> spec = RecurrentSpecOf(r.graph(), r.node(), true);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->type, cudnn::IoType::kHalf);
  EXPECT_TRUE(spec->bidirectional);
  EXPECT_TRUE(spec->batch_major);
  EXPECT_TRUE(spec->allow_tf32);
}

TEST(RecurrentRuleTest, GruAndRnnCells) {
  Recurrent gru("GRU", 2);
  ASSERT_EQ(Rejection(gru), "");
  EXPECT_EQ(RecurrentSpecOf(gru.graph(), gru.node(), false)->cell, cudnn::RnnCell::kGru);
  Recurrent tanh("RNN");
  ASSERT_EQ(Rejection(tanh), "");
  EXPECT_EQ(RecurrentSpecOf(tanh.graph(), tanh.node(), false)->cell, cudnn::RnnCell::kRnnTanh);
  Recurrent relu("RNN", 2);
  relu.Attr("activations", std::vector<std::string>{"Relu", "Relu"});
  ASSERT_EQ(Rejection(relu), "");
  EXPECT_EQ(RecurrentSpecOf(relu.graph(), relu.node(), false)->cell, cudnn::RnnCell::kRnnRelu);
}

TEST(RecurrentRuleTest, AllZeroPeepholesAreNoPeepholes) {
  Recurrent r("LSTM");
  r.WithP(0.0f);
  EXPECT_EQ(Rejection(r), "");
}

TEST(RecurrentRuleTest, FormsLeftToTheHost) {
  struct Expectation {
    Recurrent node;
    std::string reason;
  };
  std::vector<Expectation> cases;
  cases.push_back({Recurrent("LSTM").Attr("direction", std::string("reverse")), "reverse"});
  cases.push_back({Recurrent("LSTM").Attr("clip", 3.0f), "clip"});
  cases.push_back({Recurrent("LSTM").Attr("input_forget", int64_t{1}), "input_forget"});
  cases.push_back({Recurrent("LSTM").WithP(0.5f), "peepholes"});
  cases.push_back({Recurrent("LSTM").ComputedP(), "peepholes"});
  cases.push_back(
      {Recurrent("LSTM").Attr("activations", std::vector<std::string>{"HardSigmoid", "Tanh", "Tanh"}), "activations"});
  cases.push_back({Recurrent("RNN", 2).Attr("activations", std::vector<std::string>{"Tanh", "Relu"}), "activations"});
  cases.push_back({Recurrent("RNN").Attr("activations", std::vector<std::string>{"Sigmoid"}), "activations"});
  cases.push_back({Recurrent("GRU").Attr("linear_before_reset", int64_t{0}), "linear_before_reset"});
  cases.push_back({Recurrent("GRU").ComputedW(), "not a constant"});
  cases.push_back({Recurrent("LSTM").WithB(7), "shape"});
  cases.push_back({Recurrent("LSTM", 1, ir::DType::kFloat64), "float32 or float16"});
  for (Expectation& c : cases) {
    const std::string why = Rejection(c.node);
    EXPECT_THAT(why, HasSubstr(c.reason));
    EXPECT_EQ(RecurrentSpecOf(c.node.graph(), c.node.node(), false).status().code(), absl::StatusCode::kUnimplemented)
        << why;
  }
}

}  // namespace
}  // namespace exec
