// AttentionFusion: the attention forms exporters write (torch's scaled_dot_product_attention export
// with a 4-D transposed K and an additive mask; torch 1.13 MultiheadAttention's 3-D form with the
// query scaled first; a head-splitting Transpose of K; masked_fill's boolean mask) each become one
// Attention node that computes the same outputs as the nodes it replaces; patterns with another
// reader of an intermediate, softmax on another axis or a non-scalar scale stay as they are.
#include "partitioner/attention_fusion.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using test::Attrs;
using test::GraphBuilder;
using test::RandomTensor;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr testing_util::Tolerance kFp32{1e-5, 1e-5};

// Runs the pass, checks the rewritten graph against the original on random inputs, and returns how
// many Attention nodes it made.
int FuseAndCompare(ir::Graph& graph) {
  AttentionFusion pass;
  bool changed = false;
  EXPECT_EQ(test::RunPassAndCompare(pass, graph, kFp32, &changed), "");
  EXPECT_EQ(changed, pass.fused() > 0);
  return pass.fused();
}

ir::ValueId Scalar(GraphBuilder& b, const std::string& name, float value) {
  return b.Constant(name, ir::Tensor::Scalar(value));
}

ir::Attributes Perm(std::vector<int64_t> perm) { return Attrs({{"perm", std::move(perm)}}); }

TEST(AttentionFusionTest, ScaledDotProductWithAdditiveMask4D) {
  GraphBuilder b(17);
  ir::ValueId q = b.Input("q", {2, 3, 5, 8}), k = b.Input("k", {2, 3, 7, 8}), v = b.Input("v", {2, 3, 7, 4});
  ir::ValueId mask = b.Input("mask", {2, 1, 1, 7});
  ir::ValueId kt = b.Op("kt", "Transpose", {k}, Perm({0, 1, 3, 2}));
  ir::ValueId s = b.Op("qk", "MatMul", {q, kt});
  ir::ValueId scaled = b.Op("scale", "Div", {s, Scalar(b, "sqrt_d", std::sqrt(8.0f))});
  ir::ValueId masked = b.Op("mask_add", "Add", {scaled, mask});
  ir::ValueId p = b.Op("softmax", "Softmax", {masked}, Attrs({{"axis", int64_t{-1}}}));
  b.Output(b.Op("pv", "MatMul", {p, v}));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FuseAndCompare(graph), 1);
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("Attention(%q, %k, %v, %mask)"));
  EXPECT_THAT(text, Not(HasSubstr("Softmax")));
  EXPECT_THAT(text, Not(HasSubstr("Transpose")));  // K read directly: the transpose only swapped the last axes
}

TEST(AttentionFusionTest, MultiheadAttention3DWithScaledQueryAndMaskFirst) {
  GraphBuilder b(13);
  ir::ValueId q = b.Input("q", {6, 5, 8}), k = b.Input("k", {6, 7, 8}), v = b.Input("v", {6, 7, 8});
  ir::ValueId mask = b.Input("mask", {6, 1, 7});
  ir::ValueId qs = b.Op("q_scaled", "Mul", {q, Scalar(b, "inv_sqrt_d", 1.0f / std::sqrt(8.0f))});
  ir::ValueId kt = b.Op("kt", "Transpose", {k}, Perm({0, 2, 1}));
  ir::ValueId s = b.Op("qk", "MatMul", {qs, kt});
  ir::ValueId masked = b.Op("mask_add", "Add", {mask, s});
  ir::ValueId p = b.Op("softmax", "Softmax", {masked}, Attrs({{"axis", int64_t{-1}}}));
  b.Output(b.Op("pv", "MatMul", {p, v}));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FuseAndCompare(graph), 1);
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("Attention("));
  EXPECT_THAT(text, HasSubstr("Squeeze("));
  EXPECT_THAT(text, Not(HasSubstr("Softmax")));
}

TEST(AttentionFusionTest, HeadSplitTransposeOfKeysIsKeptWithoutTheLastSwap) {
  GraphBuilder b(17);
  ir::ValueId q = b.Input("q", {2, 3, 5, 8}), v = b.Input("v", {2, 3, 7, 8});
  ir::ValueId k_rows = b.Input("k_rows", {2, 7, 3, 8});                    // [B, L, H, D]
  ir::ValueId kt = b.Op("kt", "Transpose", {k_rows}, Perm({0, 2, 3, 1}));  // [B, H, D, L]
  ir::ValueId half_scale = Scalar(b, "root_scale", std::pow(8.0f, -0.25f));
  ir::ValueId s = b.Op("qk", "MatMul", {b.Op("qm", "Mul", {q, half_scale}), b.Op("km", "Mul", {kt, half_scale})});
  ir::ValueId p = b.Op("softmax", "Softmax", {s}, Attrs({{"axis", int64_t{3}}}));
  b.Output(b.Op("pv", "MatMul", {p, v}));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FuseAndCompare(graph), 1);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("perm=[0,2,1,3]"));
}

TEST(AttentionFusionTest, MaskedFillBooleanMaskBecomesNegatedMask) {
  GraphBuilder b(17);
  ir::ValueId q = b.Input("q", {1, 2, 4, 8}), k = b.Input("k", {1, 2, 6, 8}), v = b.Input("v", {1, 2, 6, 8});
  ir::Tensor fill = *ir::Tensor::Create(ir::DType::kBool, {4, 6});  // true: masked out; key 0 always kept
  for (int64_t i = 0; i < 24; ++i) fill.data<uint8_t>()[i] = (i % 6) > (i / 6) ? 1 : 0;
  ir::ValueId cond = b.Constant("causal_fill", fill);
  ir::ValueId s = b.Op("qk", "MatMul", {q, b.Op("kt", "Transpose", {k}, Perm({0, 1, 3, 2}))});
  ir::ValueId neg = Scalar(b, "neg_inf", -std::numeric_limits<float>::infinity());
  ir::ValueId filled = b.Op("fill", "Where", {cond, neg, s});
  ir::ValueId p = b.Op("softmax", "Softmax", {filled}, Attrs({{"axis", int64_t{-1}}}));
  b.Output(b.Op("pv", "MatMul", {p, v}));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FuseAndCompare(graph), 1);
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("Not(%causal_fill)"));
  EXPECT_THAT(text, HasSubstr("scale=1"));  // no scale in the pattern: 1, not Attention's 1/sqrt(D)
}

// torch 2's export of scaled_dot_product_attention: the scale 1/sqrt(D) computed from Q's shape at
// run time, its square root multiplying Q and the transposed K.
TEST(AttentionFusionTest, RunTimeScaleOfTorchExportScalesQueryAndKeys) {
  GraphBuilder b(17);
  ir::ValueId q = b.Input("q", {2, 3, 5, 16}), k = b.Input("k", {2, 3, 7, 16}), v = b.Input("v", {2, 3, 7, 16});
  ir::ValueId last = b.Op("d", "Slice",
                          {b.Op("shape", "Shape", {q}), b.Constant("start", ir::Tensor::FromInt64s({-1})),
                           b.Constant("end", ir::Tensor::FromInt64s({100}))});
  ir::ValueId d = b.Op("d_float", "Cast", {last}, Attrs({{"to", int64_t{1}}}));
  ir::ValueId scale = b.Op("scale", "Div", {Scalar(b, "one", 1.0f), b.Op("sqrt_d", "Sqrt", {d})});
  ir::ValueId root = b.Op("root", "Sqrt", {scale});
  ir::ValueId kt = b.Op("kt", "Transpose", {k}, Perm({0, 1, 3, 2}));
  ir::ValueId s = b.Op("qk", "MatMul", {b.Op("qs", "Mul", {q, root}), b.Op("ks", "Mul", {kt, root})});
  ir::ValueId p = b.Op("softmax", "Softmax", {s}, Attrs({{"axis", int64_t{-1}}}));
  b.Output(b.Op("pv", "MatMul", {p, v}));
  ir::Graph graph = b.Build().value();
  EXPECT_EQ(FuseAndCompare(graph), 1);
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("Mul(%k, %root)"));
  EXPECT_THAT(text, Not(HasSubstr("Transpose")));
  EXPECT_THAT(text, Not(HasSubstr("Softmax")));
}

// The plain pattern, with one thing changed by `variant`.
ir::Graph AlmostAttention(int variant) {
  GraphBuilder b(17);
  ir::ValueId q = b.Input("q", {2, 3, 5, 8}), k = b.Input("k", {2, 3, 7, 8}), v = b.Input("v", {2, 3, 7, 8});
  ir::ValueId s = b.Op("qk", "MatMul", {q, b.Op("kt", "Transpose", {k}, Perm({0, 1, 3, 2}))});
  if (variant == 0) s = b.Op("scale", "Mul", {s, b.Constant("per_key", RandomTensor({7}, 3))});
  ir::ValueId p = b.Op("softmax", "Softmax", {s}, Attrs({{"axis", int64_t{variant == 1 ? 2 : -1}}}));
  b.Output(b.Op("pv", "MatMul", {p, v}));
  if (variant == 2) b.Output(p);  // the attention weights are read too
  return b.Build().value();
}

TEST(AttentionFusionTest, NonScalarScaleOtherAxisOrSharedWeightsStay) {
  for (int variant : {0, 1, 2}) {
    ir::Graph graph = AlmostAttention(variant);
    EXPECT_EQ(FuseAndCompare(graph), 0) << "variant " << variant;
    EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("Softmax")) << "variant " << variant;
  }
}

}  // namespace
}  // namespace partitioner
