// LayerNormFusion: the decomposed layer normalisation torch writes before opset 17 (Pow or Mul for
// the square; with gamma and beta, or without either) becomes one LayerNormalization node that
// computes the same outputs; a reduction over a non-trailing axis, or a centred value read by
// another node, stays as it is.
#include "partitioner/layer_norm_fusion.h"

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

int FuseAndCompare(ir::Graph& graph) {
  LayerNormFusion pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, graph, kFp32), "");
  return pass.fused();
}

struct Form {
  bool pow = true, affine = true, other_reader = false;
  int64_t axis = -1;
};

// x [2, 5, 8] normalised over `axis` as torch 1.13 exports nn.LayerNorm at opset 13.
ir::Graph Decomposed(const Form& f) {
  GraphBuilder b(13);
  ir::ValueId x = b.Input("x", {2, 5, 8});
  ir::ValueId axes = b.Constant("axes", ir::Tensor::FromInt64s({f.axis}));
  ir::ValueId mean = b.Op("mean", "ReduceMean", {x, axes});
  ir::ValueId d = b.Op("d", "Sub", {x, mean});
  ir::ValueId sq =
      f.pow ? b.Op("sq", "Pow", {d, b.Constant("two", ir::Tensor::Scalar(2.0f))}) : b.Op("sq", "Mul", {d, d});
  ir::ValueId var = b.Op("var", "ReduceMean", {sq, axes});
  ir::ValueId std = b.Op("std", "Sqrt", {b.Op("var_eps", "Add", {var, b.Constant("eps", ir::Tensor::Scalar(1e-6f))})});
  ir::ValueId y = b.Op("norm", "Div", {d, std});
  if (f.affine) {
    y = b.Op("scaled", "Mul", {y, b.Constant("gamma", RandomTensor({8}, 1, 0.5f, 1.5f))});
    y = b.Op("shifted", "Add", {y, b.Constant("beta", RandomTensor({8}, 2))});
  }
  b.Output(b.Op("out", "Relu", {y}));
  if (f.other_reader) b.Output(d);
  return b.Build().value();
}

TEST(LayerNormFusionTest, DecomposedFormsBecomeOneLayerNormalization) {
  for (Form f : {Form{}, Form{.pow = false}, Form{.affine = false}}) {
    ir::Graph graph = Decomposed(f);
    EXPECT_EQ(FuseAndCompare(graph), 1) << "pow " << f.pow << " affine " << f.affine;
    const std::string text = ir::PrintGraph(graph);
    EXPECT_THAT(text, HasSubstr("LayerNormalization(%x")) << text;
    EXPECT_THAT(text, Not(HasSubstr("ReduceMean"))) << text;
    EXPECT_THAT(text, HasSubstr(f.affine ? "%gamma, %beta" : "layer_norm_scale")) << text;
  }
}

TEST(LayerNormFusionTest, OtherAxisOrSharedCentredValueStays) {
  for (Form f : {Form{.axis = 1}, Form{.other_reader = true}}) {
    ir::Graph graph = Decomposed(f);
    EXPECT_EQ(FuseAndCompare(graph), 0) << "axis " << f.axis;
    EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("ReduceMean"));
  }
}

}  // namespace
}  // namespace partitioner
