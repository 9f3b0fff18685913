// MatchMatmulEpilogue on small graphs (no GPU needed): which MatMul steps the own epilogue kernel
// may finish (bias row, Relu / GELU, residual, in that order), and the reason for those it may not;
// MatmulEpilogueNote: what the step note says cuBLASLt and the own kernel each apply.
#include "runtime/matmul_epilogue_form.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda_executor.h"
#include "tests/util/pass_test_util.h"

namespace exec {
namespace {

using Params = kernels::cuda::MatmulEpilogueParams;
using partitioner::test::Attrs;
using partitioner::test::GraphBuilder;
using partitioner::test::RandomTensor;
using ::testing::HasSubstr;

// x[4, 8] -> MatMul(w[8, 6]) -> each op of `tail` in turn ("bias", "bias_first" (the bias as Add's
// first input), "relu", "gelu", "gelu_tanh", "sigmoid", "residual", "column" (an Add of a [4, 1]
// constant), "double" (Add of the value to itself), "skip" (Add of the MatMul's own output)) -> y.
// The step covers every node.
struct Built {
  ir::Graph graph;
  Step step;
};

Built Build(const std::vector<std::string>& tail) {
  GraphBuilder b(/*opset=*/20);
  const ir::ValueId mm = b.Op("mm", "MatMul", {b.Input("x", {4, 8}), b.Constant("w", RandomTensor({8, 6}, 1))});
  ir::ValueId v = mm;
  for (const std::string& op : tail) {
    if (op == "bias") v = b.Op(op, "Add", {v, b.Constant("b", RandomTensor({6}, 2))});
    if (op == "bias_first") v = b.Op(op, "Add", {b.Constant("b1", RandomTensor({1, 6}, 3)), v});
    if (op == "relu") v = b.Op(op, "Relu", {v});
    if (op == "gelu") v = b.Op(op, "Gelu", {v});
    if (op == "gelu_tanh") v = b.Op(op, "Gelu", {v}, Attrs({{"approximate", std::string("tanh")}}));
    if (op == "sigmoid") v = b.Op(op, "Sigmoid", {v});
    if (op == "residual") v = b.Op(op, "Add", {b.Input("r", {4, 6}), v});
    if (op == "column") v = b.Op(op, "Add", {v, b.Constant("c", RandomTensor({4, 1}, 4))});
    if (op == "double") v = b.Op(op, "Add", {v, v});
    if (op == "skip") v = b.Op(op, "Add", {v, mm});
  }
  b.Output(v);
  Built built{b.Build().value(), {}};
  built.step.kind = StepKind::kFusedGraph;
  for (ir::NodeId n = 0; n < static_cast<ir::NodeId>(built.graph.nodes().size()); ++n) built.step.nodes.push_back(n);
  built.step.outputs = {v};
  return built;
}

TEST(MatmulEpilogueFormTest, BiasActivationResidual) {
  const Built built = Build({"bias", "gelu", "residual"});
  absl::StatusOr<MatmulEpilogueForm> form = MatchMatmulEpilogue(built.graph, built.step);
  ASSERT_TRUE(form.ok()) << form.status();
  EXPECT_EQ(built.graph.value(form->bias).name, "b");
  EXPECT_EQ(built.graph.value(form->residual).name, "r");
  EXPECT_EQ(form->activation, Params::kGelu);
  EXPECT_EQ(built.graph.value(form->x).name, "x");
  EXPECT_EQ(built.graph.value(form->weights).name, "w");
}

TEST(MatmulEpilogueFormTest, EachStageAlone) {
  for (const auto& [tail, act] : std::vector<std::pair<std::string, Params::Activation>>{
           {"bias_first", Params::kNone}, {"relu", Params::kRelu}, {"gelu_tanh", Params::kGeluTanh}}) {
    const Built built = Build({tail});
    absl::StatusOr<MatmulEpilogueForm> form = MatchMatmulEpilogue(built.graph, built.step);
    ASSERT_TRUE(form.ok()) << tail << ": " << form.status();
    EXPECT_EQ(form->activation, act) << tail;
    EXPECT_EQ(form->bias != ir::kNoValue, tail == "bias_first") << tail;
  }
  const Built residual = Build({"residual"});
  absl::StatusOr<MatmulEpilogueForm> form = MatchMatmulEpilogue(residual.graph, residual.step);
  ASSERT_TRUE(form.ok()) << form.status();
  EXPECT_NE(form->residual, ir::kNoValue);
}

TEST(MatmulEpilogueFormTest, RejectsWhatTheKernelDoesNotDo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "no tail"},
      {{"sigmoid"}, "Sigmoid after the matmul"},
      {{"column"}, "Add after the matmul"},                 // not one value per output column
      {{"gelu", "bias"}, "Add after the matmul"},           // bias after the activation
      {{"residual", "relu"}, "Relu after the matmul"},      // activation after the residual
      {{"bias", "relu", "gelu"}, "Gelu after the matmul"},  // two activations
      {{"double"}, "Add after the matmul"},                 // the residual is the tail's own value
      {{"relu", "skip"}, "Add after the matmul"}};          // the residual is computed in the step
  for (const auto& [tail, why] : cases) {
    const Built built = Build(tail);
    absl::StatusOr<MatmulEpilogueForm> form = MatchMatmulEpilogue(built.graph, built.step);
    ASSERT_FALSE(form.ok()) << why;
    EXPECT_THAT(std::string(form.status().message()), HasSubstr(why));
  }
}

TEST(MatmulEpilogueNoteTest, NamesWhatCublasLtAndTheOwnKernelApply) {
  using LtActivation = kernels::cublas::LtMatmulShape::Activation;
  int bias_storage = 0;
  MatmulEpilogueForm form;
  form.bias = 1;
  form.activation = Params::kGelu;
  form.residual = 2;
  kernels::cublas::LtMatmulShape lt;
  lt.bias = &bias_storage;
  lt.activation = LtActivation::kGeluTanh;
  EXPECT_EQ(MatmulEpilogueNote(lt, form),
            "cuBLASLt matmul with its bias + GELU (tanh form) epilogue in place of the model's erf GELU (fast GELU: "
            "at most 4.73e-4 apart, under half a float16 ulp of the value there; --exact-gelu keeps erf), then "
            "the own epilogue kernel for the residual (kernels/cuda/matmul_epilogue)");
  lt.activation = LtActivation::kNone;  // --exact-gelu
  EXPECT_EQ(MatmulEpilogueNote(lt, form),
            "cuBLASLt matmul with its bias epilogue, then the own epilogue kernel for the activation, residual "
            "(kernels/cuda/matmul_epilogue)");
  lt.bias = nullptr;  // a bias of another dtype: the own kernel adds it
  EXPECT_EQ(MatmulEpilogueNote(lt, form),
            "cuBLASLt matmul, then the own epilogue kernel for the bias, activation, residual "
            "(kernels/cuda/matmul_epilogue)");
  form.activation = Params::kNone;
  lt.bias = &bias_storage;
  lt.residual = true;
  EXPECT_EQ(MatmulEpilogueNote(lt, form), "cuBLASLt matmul with its bias + residual (beta = 1) epilogue");
  form.activation = Params::kRelu;
  form.residual = ir::kNoValue;
  lt.residual = false;
  lt.activation = LtActivation::kRelu;
  EXPECT_EQ(MatmulEpilogueNote(lt, form), "cuBLASLt matmul with its bias + ReLU epilogue");
}

}  // namespace
}  // namespace exec
