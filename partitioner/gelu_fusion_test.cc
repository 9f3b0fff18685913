// GeluFusion: the erf and tanh GELU in the orders torch and Hugging Face exports write them become
// one Gelu node with the same outputs; a pattern whose intermediate has another reader, or whose
// constant is not the form's, stays.
#include "partitioner/gelu_fusion.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "tests/util/pass_test_util.h"

namespace partitioner {
namespace {

using test::GraphBuilder;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr testing_util::Tolerance kFp32{1e-5, 1e-5};

int FuseAndCompare(ir::Graph& graph) {
  GeluFusion pass;
  EXPECT_EQ(test::RunPassAndCompare(pass, graph, kFp32), "");
  return pass.fused();
}

ir::ValueId Scalar(GraphBuilder& b, const std::string& name, float v) {
  return b.Constant(name, ir::Tensor::Scalar(v));
}

// order 0: (x * (1 + erf(x / sqrt2))) * 0.5 (torch); 1: (x * 0.5) * (1 + erf(x * (1/sqrt2)))
// (Hugging Face); 2: ((1 + erf) * 0.5) * x; `root2` is the divisor.
ir::Graph Gelu(int order, float root2 = std::sqrt(2.0f), bool erf_read_twice = false) {
  GraphBuilder b(17);
  ir::ValueId x = b.Input("x", {2, 3, 8});
  ir::ValueId scaled = order == 1 ? b.Op("scaled", "Mul", {x, Scalar(b, "inv_root2", 1 / root2)})
                                  : b.Op("scaled", "Div", {x, Scalar(b, "root2", root2)});
  ir::ValueId erf = b.Op("erf", "Erf", {scaled});
  ir::ValueId sum = b.Op("sum", "Add", {erf, Scalar(b, "one", 1.0f)});
  ir::ValueId y;
  if (order == 0) y = b.Op("y", "Mul", {b.Op("xs", "Mul", {x, sum}), Scalar(b, "half", 0.5f)});
  if (order == 1) y = b.Op("y", "Mul", {b.Op("xh", "Mul", {x, Scalar(b, "half", 0.5f)}), sum});
  if (order == 2) y = b.Op("y", "Mul", {b.Op("sh", "Mul", {sum, Scalar(b, "half", 0.5f)}), x});
  b.Output(b.Op("out", "Relu", {y}));
  if (erf_read_twice) b.Output(erf);
  return b.Build().value();
}

TEST(GeluFusionTest, ErfFormsBecomeOneGelu) {
  for (int order : {0, 1, 2}) {
    ir::Graph graph = Gelu(order);
    EXPECT_EQ(FuseAndCompare(graph), 1) << "order " << order;
    const std::string text = ir::PrintGraph(graph);
    EXPECT_THAT(text, HasSubstr("Gelu(%x) -> (%y")) << text;
    EXPECT_THAT(text, Not(HasSubstr("Erf"))) << text;
  }
}

// The tanh form. hugging_face: gelu_new, 0.5 * x * (1 + tanh(c * (x + 0.044715 * pow(x, 3))));
// else torch's approximate="tanh" export: 0.5 * (x * (1 + tanh(c * (x + 0.044715 * (x * (x * x))))).
ir::Graph TanhGelu(bool hugging_face, float kappa = 0.044715f) {
  GraphBuilder b(17);
  ir::ValueId x = b.Input("x", {2, 3, 8});
  ir::ValueId cube = hugging_face ? b.Op("cube", "Pow", {x, Scalar(b, "three", 3.0f)})
                                  : b.Op("cube", "Mul", {x, b.Op("square", "Mul", {x, x})});
  ir::ValueId cubic = b.Op("cubic", "Mul", {Scalar(b, "kappa", kappa), cube});
  ir::ValueId inner = b.Op("inner", "Mul", {Scalar(b, "beta", std::sqrt(2 / M_PI)), b.Op("sum", "Add", {x, cubic})});
  ir::ValueId plus = b.Op("plus", "Add", {Scalar(b, "one", 1.0f), b.Op("tanh", "Tanh", {inner})});
  ir::ValueId y = hugging_face ? b.Op("y", "Mul", {b.Op("xh", "Mul", {Scalar(b, "half", 0.5f), x}), plus})
                               : b.Op("y", "Mul", {Scalar(b, "half", 0.5f), b.Op("xs", "Mul", {x, plus})});
  b.Output(b.Op("out", "Relu", {y}));
  return b.Build().value();
}

TEST(GeluFusionTest, TanhFormsBecomeOneTanhGelu) {
  for (bool hugging_face : {true, false}) {
    ir::Graph graph = TanhGelu(hugging_face);
    EXPECT_EQ(FuseAndCompare(graph), 1) << "hugging_face " << hugging_face;
    const std::string text = ir::PrintGraph(graph);
    EXPECT_THAT(text, HasSubstr("Gelu(%x) -> (%y")) << text;
    EXPECT_THAT(text, HasSubstr("approximate=\"tanh\"")) << text;
    EXPECT_THAT(text, Not(HasSubstr("Tanh("))) << text;
    EXPECT_THAT(text, Not(HasSubstr("Pow("))) << text;
  }
}

TEST(GeluFusionTest, TanhFormWithAnotherCubicFactorStays) {
  ir::Graph graph = TanhGelu(true, 0.05f);
  EXPECT_EQ(FuseAndCompare(graph), 0);
  EXPECT_THAT(ir::PrintGraph(graph), HasSubstr("Tanh("));
}

TEST(GeluFusionTest, OtherConstantOrSharedIntermediateStays) {
  ir::Graph other = Gelu(0, 1.5f);
  EXPECT_EQ(FuseAndCompare(other), 0);
  ir::Graph shared = Gelu(0, std::sqrt(2.0f), /*erf_read_twice=*/true);
  EXPECT_EQ(FuseAndCompare(shared), 0);
  EXPECT_THAT(ir::PrintGraph(shared), HasSubstr("Erf"));
}

}  // namespace
}  // namespace partitioner
