// PatchConv: a ViT-style patch conv (with and without bias, a symbolic batch) becomes Reshape /
// Transpose / MatMul / Add / Transpose / Reshape with the same outputs (CPU reference plan before
// and after), and ViT's token layout after it is what the matmul writes; convs that are not patch
// embeddings stay.
#include "partitioner/patch_conv.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using test::Attrs;
using test::GraphBuilder;
using test::RandomTensor;

constexpr testing_util::Tolerance kFp32{1e-5, 1e-5};

struct Form {
  int64_t channels = 3, kernel = 8, stride = 8, pad = 0;
  bool bias = true;
  ir::Dim batch = 2;
  bool tokens = false;  // ViT's Reshape to [N, K, tokens] + Transpose(0,2,1) after the conv
};

ir::Graph Build(const Form& f) {
  GraphBuilder b;
  ir::ValueId x = b.SymbolicInput("x", {f.batch, f.channels, 32, 16});
  ir::ValueId w = b.Constant("w", RandomTensor({6, f.channels, f.kernel, f.kernel}, 1));
  std::vector<ir::ValueId> inputs = {x, w};
  if (f.bias) inputs.push_back(b.Constant("b", RandomTensor({6}, 2)));
  ir::ValueId y = b.Op("conv", "Conv", inputs,
                       Attrs({{"kernel_shape", std::vector<int64_t>{f.kernel, f.kernel}},
                              {"strides", std::vector<int64_t>{f.stride, f.stride}},
                              {"pads", std::vector<int64_t>{f.pad, f.pad, f.pad, f.pad}}}));
  if (f.tokens) {
    y = b.Op("flat", "Reshape", {y, b.Constant("flat_shape", ir::Tensor::FromInt64s({0, 6, -1}))});
    y = b.Op("tokens", "Transpose", {y}, Attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
  }
  b.Output(y);
  return b.Build().value();
}

std::string OpTypes(const ir::Graph& g) {
  std::string ops;
  for (const ir::Node& n : g.nodes()) ops += n.op_type + " ";
  return ops;
}

TEST(PatchConvTest, PatchConvBecomesAMatMulWithTheSameOutputs) {
  for (bool bias : {true, false}) {
    ir::Graph g = Build({.bias = bias});
    PatchConv pass;
    EXPECT_EQ(test::RunPassAndCompare(pass, g, kFp32), "") << "bias " << bias;
    EXPECT_EQ(pass.rewritten(), 1);
    EXPECT_EQ(OpTypes(g), bias ? "Reshape Transpose Reshape MatMul Add Transpose Reshape "
                               : "Reshape Transpose Reshape MatMul Transpose Reshape ");
    EXPECT_EQ(g.value(g.outputs()[0]).type.ToString(), "float32[2,6,4,2]");
  }
}

TEST(PatchConvTest, ViTTokenLayoutIsWhatTheMatMulWrites) {
  ir::Graph g = Build({.tokens = true});
  PatchConv pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, g, kFp32), "");
  EXPECT_EQ(OpTypes(g), "Reshape Transpose Reshape MatMul Add ");
  EXPECT_EQ(g.value(g.outputs()[0]).type.ToString(), "float32[2,8,6]");
}

TEST(PatchConvTest, SymbolicBatchKeepsItsDim) {
  ir::Graph g = Build({.batch = ir::Dim::Symbol("N")});
  PatchConv pass;
  ASSERT_TRUE(pass.Run(g).value());
  EXPECT_EQ(g.value(g.outputs()[0]).type.ToString(), "float32[N,6,4,2]");
}

TEST(PatchConvTest, OtherConvsStay) {
  const Form forms[] = {
      {.channels = 64, .kernel = 4, .stride = 4},  // a CNN's small stride-k kernel
      {.kernel = 8, .stride = 4},                  // overlapping windows
      {.kernel = 8, .stride = 8, .pad = 1},        // padded
  };
  for (const Form& f : forms) {
    ir::Graph g = Build(f);
    PatchConv pass;
    EXPECT_FALSE(pass.Run(g).value()) << f.kernel << " " << f.stride << " " << f.pad;
    EXPECT_EQ(OpTypes(g), "Conv ");
  }
}

}  // namespace
}  // namespace partitioner
