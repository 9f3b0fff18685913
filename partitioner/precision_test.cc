// Precision: fp32/tf32 leave the graph alone; fp16 (and bf16) converts constants and Casts, wraps
// the float32 interface in Casts, keeps Resize's scales float32, and computes the same outputs
// within fp16 (bf16) tolerance; graphs without float32 are unchanged.
#include "partitioner/precision.h"

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

constexpr testing_util::Tolerance kFp16{1e-2, 1e-2};
constexpr testing_util::Tolerance kBf16{8e-2, 8e-2};

// x[1,3,6,6] -> Conv(w, b) -> Add(k) -> Relu -> y.
ir::Graph ConvGraph() {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 3, 6, 6});
  ir::ValueId w = b.Constant("w", RandomTensor({4, 3, 3, 3}, 1, -0.5f, 0.5f));
  ir::ValueId bias = b.Constant("b", RandomTensor({4}, 2));
  ir::ValueId conv = b.Op("conv", "Conv", {x, w, bias});
  ir::ValueId k = b.Constant("k", RandomTensor({4, 1, 1}, 3));
  b.Output(b.Op("relu", "Relu", {b.Op("add", "Add", {conv, k})}));
  return b.Build().value();
}

bool ConvertAndCompare(ir::Graph& graph, PrecisionMode mode = PrecisionMode::kFp16) {
  const ir::Graph before = graph;
  Precision pass(mode);
  absl::StatusOr<bool> changed = pass.Run(graph);
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(graph.Validate().ok());
  EXPECT_EQ(test::CompareGraphs(graph, before, test::RandomInputs(graph), mode == PrecisionMode::kBf16 ? kBf16 : kFp16),
            "");
  return changed.value_or(false);
}

TEST(PrecisionTest, Fp32AndTf32LeaveTheGraphAlone) {
  for (const char* name : {"fp32", "tf32"}) {
    ir::Graph graph = ConvGraph();
    const std::string before = ir::PrintGraph(graph);
    Precision pass = Precision::Create(name).value();
    EXPECT_FALSE(pass.Run(graph).value()) << name;
    EXPECT_EQ(ir::PrintGraph(graph), before) << name;
  }
}

TEST(PrecisionTest, UnknownPrecisionIsAnError) {
  absl::StatusOr<Precision> pass = Precision::Create("fp8");
  ASSERT_FALSE(pass.ok());
  EXPECT_THAT(pass.status().message(), HasSubstr("unknown precision 'fp8' (expected fp32, tf32, fp16 or bf16)"));
  EXPECT_EQ(Precision::Create("fp16")->mode(), PrecisionMode::kFp16);
  EXPECT_EQ(Precision::Create("bf16")->mode(), PrecisionMode::kBf16);
}

TEST(PrecisionTest, Fp16ConvertsConstantsAndWrapsTheInterface) {
  ir::Graph graph = ConvGraph();
  EXPECT_TRUE(ConvertAndCompare(graph));
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("graph test (%x: float32[1,3,6,6]) -> (%relu: float32[1,4,4,4])"));
  EXPECT_THAT(text, HasSubstr("%w = const float16[4,3,3,3]"));
  EXPECT_THAT(text, HasSubstr("%k = const float16[4,1,1]"));
  EXPECT_THAT(text, HasSubstr("x__to_fp16: Cast(%x) -> (%x__fp16: float16[1,3,6,6]) {to=10}"));
  EXPECT_THAT(text, HasSubstr("conv: Conv(%x__fp16, %w, %b) -> (%conv: float16[1,4,4,4])"));
  EXPECT_THAT(text, HasSubstr("relu: Relu(%add) -> (%relu__fp16: float16[1,4,4,4])"));
  EXPECT_THAT(text, HasSubstr("relu__to_f32: Cast(%relu__fp16) -> (%relu: float32[1,4,4,4]) "
                              "{to=1}"));
  EXPECT_THAT(text, Not(HasSubstr("const float32")));
}

TEST(PrecisionTest, Bf16ConvertsConstantsAndWrapsTheInterface) {
  ir::Graph graph = ConvGraph();
  EXPECT_TRUE(ConvertAndCompare(graph, PrecisionMode::kBf16));
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("graph test (%x: float32[1,3,6,6]) -> (%relu: float32[1,4,4,4])"));
  EXPECT_THAT(text, HasSubstr("%w = const bfloat16[4,3,3,3]"));
  EXPECT_THAT(text, HasSubstr("x__to_bf16: Cast(%x) -> (%x__bf16: bfloat16[1,3,6,6]) {to=16}"));
  EXPECT_THAT(text, HasSubstr("conv: Conv(%x__bf16, %w, %b) -> (%conv: bfloat16[1,4,4,4])"));
  EXPECT_THAT(text, HasSubstr("relu__to_f32: Cast(%relu__bf16) -> (%relu: float32[1,4,4,4]) {to=1}"));
  EXPECT_THAT(text, Not(HasSubstr("const float32")));
  EXPECT_THAT(text, Not(HasSubstr(" float16[")));
}

// half_inputs: the float32 input itself becomes float16 (no Cast), except one that a float32-only
// slot reads (Resize's scales) or that is a graph output too; outputs stay float32.
TEST(PrecisionTest, HalfInputsRetypeTheInputInsteadOfCastingIt) {
  ir::Graph graph = ConvGraph();
  ASSERT_TRUE(Precision(PrecisionMode::kFp16, /*half_inputs=*/true).Run(graph).value());
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("graph test (%x: float16[1,3,6,6]) -> (%relu: float32[1,4,4,4])"));
  EXPECT_THAT(text, HasSubstr("conv: Conv(%x, %w, %b) -> (%conv: float16[1,4,4,4])"));
  EXPECT_THAT(text, Not(HasSubstr("x__to_fp16")));

  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 1, 2, 2});
  ir::ValueId scales = b.Input("scales", {4});
  ir::ValueId passed = b.Input("passed", {3});
  b.Output(b.Op("up", "Resize", {x, ir::kNoValue, scales}, Attrs({{"mode", std::string("nearest")}})));
  b.Output(b.Op("sig", "Sigmoid", {passed}));
  b.Output(passed);
  ir::Graph resize = b.Build().value();
  ASSERT_TRUE(Precision(PrecisionMode::kFp16, /*half_inputs=*/true).Run(resize).value());
  const std::string resized = ir::PrintGraph(resize);
  EXPECT_THAT(resized, HasSubstr("(%x: float16[1,1,2,2], %scales: float32[4], %passed: float32[3])"));
  EXPECT_THAT(resized, HasSubstr("passed__to_fp16: Cast(%passed)"));
}

TEST(PrecisionTest, Fp16RewritesCastToFloat) {
  GraphBuilder b;
  ir::ValueId i = b.Input("i", {2, 3}, ir::DType::kInt64);
  ir::ValueId f = b.Op("to_float", "Cast", {i}, Attrs({{"to", int64_t{1}}}));
  b.Output(b.Op("sig", "Sigmoid", {f}));
  ir::Graph graph = b.Build().value();
  EXPECT_TRUE(ConvertAndCompare(graph));
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("to_float: Cast(%i) -> (%to_float: float16[2,3]) {to=10}"));
  EXPECT_THAT(text, HasSubstr("graph test (%i: int64[2,3]) -> (%sig: float32[2,3])"));
}

// Exporters write masks as (1 - mask) * finfo(float32).min: in the 16-bit types that constant
// saturates to the largest finite value, so a kept position (mask 1) adds 0, not 0 * -inf = NaN.
TEST(PrecisionTest, HugeConstantsSaturateInsteadOfBecomingInfinite) {
  for (PrecisionMode mode : {PrecisionMode::kFp16, PrecisionMode::kBf16}) {
    GraphBuilder b;
    ir::ValueId x = b.Input("x", {4});
    ir::ValueId mask = b.Input("mask", {4});
    ir::ValueId one = b.Constant("one", RandomTensor({1}, 1, 1.0f, 1.0f));
    ir::ValueId lowest = b.Constant("lowest", RandomTensor({1}, 1, -3.4028235e38f, -3.4028235e38f));
    ir::ValueId ext = b.Op("ext", "Mul", {b.Op("inverted", "Sub", {one, mask}), lowest});
    b.Output(b.Op("y", "Add", {x, ext}));
    ir::Graph graph = b.Build().value();
    ASSERT_TRUE(Precision(mode).Run(graph).value());
    ir::Tensor xs = RandomTensor({4}, 2);
    ir::Tensor mask_values = RandomTensor({4}, 3, 1.0f, 1.0f);
    mask_values.data<float>()[3] = 0.0f;  // the last position is masked out
    absl::StatusOr<std::vector<ir::Tensor>> y = test::RunOnCpu(graph, {xs, mask_values});
    ASSERT_TRUE(y.ok()) << y.status();
    const float max_finite = mode == PrecisionMode::kFp16 ? 65504.0f : 3.38953139e38f;
    for (int i = 0; i < 3; ++i) EXPECT_NEAR((*y)[0].data<float>()[i], xs.data<float>()[i], 1e-2f) << i;
    EXPECT_EQ((*y)[0].data<float>()[3], -max_finite);
  }
}

TEST(PrecisionTest, Fp16KeepsResizeScalesFloat32) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 3, 3});
  ir::ValueId scales = b.Constant("scales", ir::Tensor::FromFloats({1, 1, 2, 2}, {4}));
  b.Output(b.Op("up", "Resize", {x, ir::kNoValue, scales}, Attrs({{"mode", std::string("linear")}})));
  ir::Graph graph = b.Build().value();
  EXPECT_TRUE(ConvertAndCompare(graph));
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("%scales = const float32[4]"));
  EXPECT_THAT(text, HasSubstr("up: Resize(%x__fp16, _, %scales) -> (%up__fp16: float16[1,2,6,6])"));
}

TEST(PrecisionTest, Fp16CastsComputedResizeScalesBackToFloat32) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {1, 2, 3, 3});
  ir::ValueId half = b.Constant("half", ir::Tensor::FromFloats({0.5f, 0.5f, 1, 1}, {4}));
  ir::ValueId scales = b.Op("scales", "Add", {half, half});
  b.Output(b.Op("up", "Resize", {x, ir::kNoValue, scales}));
  ir::Graph graph = b.Build().value();
  EXPECT_TRUE(ConvertAndCompare(graph));
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("%half = const float16[4]"));
  EXPECT_THAT(text, HasSubstr("up__in2_to_f32: Cast(%scales) -> (%scales__up_f32: float32[4])"));
  EXPECT_THAT(text, HasSubstr("up: Resize(%x__fp16, _, %scales__up_f32)"));
}

TEST(PrecisionTest, Fp16KeepsGridSampleGridFloat32) {
  GraphBuilder b(16);
  ir::ValueId x = b.Input("x", {1, 2, 5, 5});
  ir::ValueId grid = b.Input("grid", {1, 3, 4, 2});
  b.Output(b.Op("sample", "GridSample", {x, grid}, Attrs({{"mode", std::string("nearest")}})));
  ir::Graph graph = b.Build().value();
  EXPECT_TRUE(ConvertAndCompare(graph));
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("sample: GridSample(%x__fp16, %grid) -> (%sample__fp16: float16[1,2,3,4])"));
  EXPECT_THAT(text, Not(HasSubstr("grid__fp16")));
}

TEST(PrecisionTest, Fp16ConstantThatIsAlsoAGraphOutputGetsAHalfCopy) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {3});
  ir::ValueId k = b.Constant("k", RandomTensor({3}, 4));
  b.Output(b.Op("add", "Add", {x, k}));
  b.Output(k);
  ir::Graph graph = b.Build().value();
  EXPECT_TRUE(ConvertAndCompare(graph));
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("%k = const float32[3]"));
  EXPECT_THAT(text, HasSubstr("add: Add(%x__fp16, %k__fp16)"));
}

TEST(PrecisionTest, Fp16AddsNoCastForAnUnreadOrPassThroughInput) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {2});
  b.Input("unused", {2});
  b.Output(b.Op("relu", "Relu", {x}));
  b.Output(x);
  ir::Graph graph = b.Build().value();
  EXPECT_TRUE(ConvertAndCompare(graph));
  const std::string text = ir::PrintGraph(graph);
  EXPECT_THAT(text, Not(HasSubstr("unused__to_fp16")));
  EXPECT_THAT(text, HasSubstr("-> (%relu: float32[2], %x: float32[2])"));
}

TEST(PrecisionTest, QuantizedGraphsStayFloat32AndSayWhy) {
  GraphBuilder b;
  ir::ValueId x = b.Input("x", {2, 3});
  ir::ValueId scale = b.Constant("scale", ir::Tensor::FromFloats({0.1f}, {}));
  ir::ValueId q = b.Op("quantize", "QuantizeLinear", {x, scale});
  b.Output(b.Op("dequantize", "DequantizeLinear", {q, scale}));
  ir::Graph graph = b.Build().value();
  const std::string before = ir::PrintGraph(graph);
  Precision pass(PrecisionMode::kFp16);
  EXPECT_FALSE(pass.Run(graph).value());
  EXPECT_EQ(ir::PrintGraph(graph), before);
  EXPECT_EQ(pass.kept_fp32_reason(), "node 'quantize' (QuantizeLinear) is quantized: its scales stay float32");
}

TEST(PrecisionTest, Fp16LeavesGraphsWithoutFloat32Alone) {
  GraphBuilder b;
  ir::ValueId i = b.Input("i", {4}, ir::DType::kInt64);
  ir::ValueId d = b.Input("d", {4}, ir::DType::kFloat64);
  b.Output(b.Op("add", "Add", {i, i}));
  b.Output(b.Op("neg", "Neg", {d}));
  ir::Graph graph = b.Build().value();
  const std::string before = ir::PrintGraph(graph);
  EXPECT_FALSE(ConvertAndCompare(graph));
  EXPECT_EQ(ir::PrintGraph(graph), before);
}

}  // namespace
}  // namespace partitioner
