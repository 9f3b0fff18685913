// Tests of the recurrent kernels (rnn.cc) and their attribute parser (ops/rnn_attrs.h) by
// properties that hold whatever the gate equations: a bidirectional op is its forward and reverse
// halves, reverse is forward on reversed time, layout 1 is layout 0 transposed, sequence_lens is
// truncation; plus the parser's activation parameters and errors. (The equations themselves are
// checked by the ONNX conformance cases and against torch exports.)
#include <random>

#include "gtest/gtest.h"
#include "kernels/cpu/kernel.h"
#include "ops/op_def.h"
#include "ops/rnn_attrs.h"

namespace kernels::cpu {
namespace {

ir::Tensor Random(std::vector<int64_t> shape, std::mt19937& rng) {
  ir::Tensor t = *ir::Tensor::Create(ir::DType::kFloat32, std::move(shape));
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Runs `op` with the inputs (invalid tensors are absent) and 3 outputs (2 for RNN/GRU).
std::vector<ir::Tensor> RunOp(const std::string& op, const ir::Attributes& attrs, const std::vector<ir::Tensor>& in) {
  ir::Node node;
  node.name = "rnn";
  node.op_type = op;
  node.attrs = attrs;
  const size_t outputs = op == "LSTM" ? 3 : 2;
  node.outputs.assign(outputs, 0);
  std::vector<ir::TensorType> types(in.size());
  ops::InferContext ictx{node, {}, {}};
  KernelContext kctx{node, {}, {}};
  for (size_t i = 0; i < in.size(); ++i) {
    const bool present = in[i].valid();
    if (present) types[i] = {in[i].dtype(), ir::ShapeFromInts(in[i].shape())};
    ictx.input_types.push_back(present ? &types[i] : nullptr);
    ictx.input_values.push_back(present ? &in[i] : nullptr);
    kctx.inputs.push_back(present ? &in[i] : nullptr);
  }
  absl::StatusOr<std::vector<ir::TensorType>> out_types = ops::FindOpDef(op)->infer(ictx);
  EXPECT_TRUE(out_types.ok()) << out_types.status();
  if (!out_types.ok()) return {};
  std::vector<ir::Tensor> out(outputs);
  for (size_t i = 0; i < outputs; ++i) {
    out[i] = *ir::Tensor::Create((*out_types)[i].dtype, *ir::ShapeToInts(*(*out_types)[i].shape));
    kctx.outputs.push_back(&out[i]);
  }
  absl::Status s = FindKernel(op)(kctx);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

// Rows [begin, end) of dim 0 of `t`.
ir::Tensor Slice0(const ir::Tensor& t, int64_t begin, int64_t end) {
  std::vector<int64_t> shape = t.shape();
  const int64_t row = t.num_elements() / shape[0];
  shape[0] = end - begin;
  ir::Tensor out = *ir::Tensor::Create(t.dtype(), shape);
  std::copy(t.data<float>() + begin * row, t.data<float>() + end * row, out.data<float>());
  return out;
}

// X [seq, batch, input] with time reversed.
ir::Tensor ReverseTime(const ir::Tensor& x) {
  ir::Tensor out = *ir::Tensor::Create(x.dtype(), x.shape());
  const int64_t seq = x.shape()[0], row = x.num_elements() / seq;
  for (int64_t t = 0; t < seq; ++t) {
    std::copy(x.data<float>() + t * row, x.data<float>() + (t + 1) * row, out.data<float>() + (seq - 1 - t) * row);
  }
  return out;
}

void ExpectNear(const float* a, const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(a[i], b[i], 1e-5) << "element " << i;
}

struct Weights {
  ir::Tensor w, r, b, p;
};

Weights RandomWeights(const std::string& op, int64_t dirs, int64_t input, int64_t hidden, std::mt19937& rng) {
  const int64_t gates = op == "RNN" ? 1 : op == "GRU" ? 3 : 4;
  Weights w{Random({dirs, gates * hidden, input}, rng), Random({dirs, gates * hidden, hidden}, rng),
            Random({dirs, 2 * gates * hidden}, rng), Random({dirs, 3 * hidden}, rng)};
  return w;
}

std::vector<ir::Tensor> Inputs(const std::string& op, const ir::Tensor& x, const Weights& w, const ir::Tensor& h0,
                               const ir::Tensor& c0, const ir::Tensor& lens = ir::Tensor()) {
  std::vector<ir::Tensor> in = {x, w.w, w.r, w.b, lens, h0};
  if (op == "LSTM") in.insert(in.end(), {c0, w.p});
  return in;
}

TEST(RnnTest, BidirectionalIsForwardAndReverse) {
  std::mt19937 rng(3);
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    const int64_t seq = 5, batch = 3, input = 4, hidden = 6;
    const ir::Tensor x = Random({seq, batch, input}, rng);
    const Weights w = RandomWeights(op, 2, input, hidden, rng);
    const ir::Tensor h0 = Random({2, batch, hidden}, rng), c0 = Random({2, batch, hidden}, rng);
    ir::Attributes bi;
    bi.Set("direction", std::string("bidirectional"));
    bi.Set("clip", 2.5f);
    bi.Set("linear_before_reset", int64_t{1});
    const std::vector<ir::Tensor> both = RunOp(op, bi, Inputs(op, x, w, h0, c0));
    for (int64_t d = 0; d < 2; ++d) {
      const Weights wd{Slice0(w.w, d, d + 1), Slice0(w.r, d, d + 1), Slice0(w.b, d, d + 1), Slice0(w.p, d, d + 1)};
      ir::Attributes one = bi;
      one.Set("direction", std::string(d == 0 ? "forward" : "reverse"));
      const std::vector<ir::Tensor> half =
          RunOp(op, one, Inputs(op, x, wd, Slice0(h0, d, d + 1), Slice0(c0, d, d + 1)));
      const int64_t block = batch * hidden;
      for (int64_t t = 0; t < seq; ++t) {
        ExpectNear(both[0].data<float>() + (t * 2 + d) * block, half[0].data<float>() + t * block, block);
      }
      for (size_t o = 1; o < both.size(); ++o)
        ExpectNear(both[o].data<float>() + d * block, half[o].data<float>(), block);
    }
  }
}

TEST(RnnTest, ReverseIsForwardOnReversedTime) {
  std::mt19937 rng(4);
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    const ir::Tensor x = Random({4, 2, 3}, rng);
    const Weights w = RandomWeights(op, 1, 3, 5, rng);
    ir::Attributes fwd, rev;
    rev.Set("direction", std::string("reverse"));
    const std::vector<ir::Tensor> r = RunOp(op, rev, Inputs(op, x, w, ir::Tensor(), ir::Tensor()));
    const std::vector<ir::Tensor> f = RunOp(op, fwd, Inputs(op, ReverseTime(x), w, ir::Tensor(), ir::Tensor()));
    const ir::Tensor f_y = ReverseTime(f[0]);
    ExpectNear(r[0].data<float>(), f_y.data<float>(), r[0].num_elements());
    for (size_t o = 1; o < r.size(); ++o) ExpectNear(r[o].data<float>(), f[o].data<float>(), r[o].num_elements());
  }
}

TEST(RnnTest, BatchMajorLayoutIsTransposed) {
  std::mt19937 rng(5);
  const int64_t seq = 3, batch = 2, input = 3, hidden = 4;
  const ir::Tensor x = Random({seq, batch, input}, rng);
  ir::Tensor xb = *ir::Tensor::Create(ir::DType::kFloat32, {batch, seq, input});
  for (int64_t t = 0; t < seq; ++t) {
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < input; ++i)
        xb.data<float>()[(b * seq + t) * input + i] = x.data<float>()[(t * batch + b) * input + i];
    }
  }
  const Weights w = RandomWeights("LSTM", 2, input, hidden, rng);
  ir::Attributes a0, a1;
  a0.Set("direction", std::string("bidirectional"));
  a1 = a0;
  a1.Set("layout", int64_t{1});
  const std::vector<ir::Tensor> y0 = RunOp("LSTM", a0, Inputs("LSTM", x, w, ir::Tensor(), ir::Tensor()));
  const std::vector<ir::Tensor> y1 = RunOp("LSTM", a1, Inputs("LSTM", xb, w, ir::Tensor(), ir::Tensor()));
  ASSERT_EQ(y1[0].shape(), (std::vector<int64_t>{batch, seq, 2, hidden}));
  for (int64_t t = 0; t < seq; ++t) {
    for (int64_t d = 0; d < 2; ++d) {
      for (int64_t b = 0; b < batch; ++b) {
        ExpectNear(y0[0].data<float>() + ((t * 2 + d) * batch + b) * hidden,
                   y1[0].data<float>() + ((b * seq + t) * 2 + d) * hidden, hidden);
        ExpectNear(y0[1].data<float>() + (d * batch + b) * hidden, y1[1].data<float>() + (b * 2 + d) * hidden, hidden);
      }
    }
  }
}

TEST(RnnTest, SequenceLensTruncates) {
  std::mt19937 rng(6);
  const int64_t seq = 5, batch = 2, input = 3, hidden = 4;
  const ir::Tensor x = Random({seq, batch, input}, rng);
  const Weights w = RandomWeights("GRU", 2, input, hidden, rng);
  ir::Tensor lens = *ir::Tensor::Create(ir::DType::kInt32, {batch});
  lens.data<int32_t>()[0] = 5;
  lens.data<int32_t>()[1] = 2;
  ir::Attributes bi;
  bi.Set("direction", std::string("bidirectional"));
  const std::vector<ir::Tensor> full = RunOp("GRU", bi, Inputs("GRU", x, w, ir::Tensor(), ir::Tensor(), lens));
  // Batch entry 1 alone, on its first 2 steps.
  ir::Tensor x1 = *ir::Tensor::Create(ir::DType::kFloat32, {2, 1, input});
  for (int64_t t = 0; t < 2; ++t)
    std::copy_n(x.data<float>() + (t * batch + 1) * input, input, x1.data<float>() + t * input);
  const std::vector<ir::Tensor> cut = RunOp("GRU", bi, Inputs("GRU", x1, w, ir::Tensor(), ir::Tensor()));
  for (int64_t t = 0; t < seq; ++t) {
    for (int64_t d = 0; d < 2; ++d) {
      const float* row = full[0].data<float>() + ((t * 2 + d) * batch + 1) * hidden;
      if (t < 2) {
        ExpectNear(row, cut[0].data<float>() + (t * 2 + d) * hidden, hidden);
      } else {
        for (int64_t j = 0; j < hidden; ++j) EXPECT_EQ(row[j], 0.0f);
      }
    }
  }
  for (int64_t d = 0; d < 2; ++d) {
    ExpectNear(full[1].data<float>() + (d * batch + 1) * hidden, cut[1].data<float>() + d * hidden, hidden);
  }
}

ir::Node RnnNode(const std::string& op, const ir::Attributes& attrs) {
  ir::Node node;
  node.op_type = op;
  node.attrs = attrs;
  return node;
}

TEST(RnnAttrsTest, AlphaAndBetaGoToTheFunctionsThatTakeThem) {
  ir::Attributes a;
  a.Set("activations", std::vector<std::string>{"LeakyRelu", "tanh", "HardSigmoid"});
  a.Set("activation_alpha", std::vector<float>{0.1f, 0.3f});
  a.Set("activation_beta", std::vector<float>{0.6f});
  absl::StatusOr<ops::RnnAttrs> attrs = ops::ParseRnnAttrs(RnnNode("LSTM", a));
  ASSERT_TRUE(attrs.ok()) << attrs.status();
  EXPECT_EQ(attrs->activation(0, 0).kind, ops::RnnActivationKind::kLeakyRelu);
  EXPECT_FLOAT_EQ(attrs->activation(0, 0).alpha, 0.1f);
  EXPECT_EQ(attrs->activation(0, 1).kind, ops::RnnActivationKind::kTanh);
  EXPECT_FLOAT_EQ(attrs->activation(0, 2).alpha, 0.3f);
  EXPECT_FLOAT_EQ(attrs->activation(0, 2).beta, 0.6f);
  // Defaults: GRU bidirectional is (Sigmoid, Tanh) per direction.
  ir::Attributes bi;
  bi.Set("direction", std::string("bidirectional"));
  absl::StatusOr<ops::RnnAttrs> gru = ops::ParseRnnAttrs(RnnNode("GRU", bi));
  ASSERT_TRUE(gru.ok());
  EXPECT_EQ(gru->activation(1, 0).kind, ops::RnnActivationKind::kSigmoid);
  EXPECT_EQ(gru->activation(1, 1).kind, ops::RnnActivationKind::kTanh);
}

TEST(RnnAttrsTest, RejectsBadAttributes) {
  const std::vector<std::pair<std::string, ir::AttributeValue>> bad = {
      {"direction", std::string("sideways")},
      {"activations", std::vector<std::string>{"Swish"}},
      {"activations", std::vector<std::string>{"Sigmoid"}},  // GRU needs 2
      {"clip", 0.0f},
      {"layout", int64_t{2}},
      {"hidden_size", int64_t{0}},
  };
  for (const auto& [name, value] : bad) {
    ir::Attributes a;
    a.Set(name, value);
    EXPECT_FALSE(ops::ParseRnnAttrs(RnnNode("GRU", a)).ok()) << name;
  }
}

}  // namespace
}  // namespace kernels::cpu
