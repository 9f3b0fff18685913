// Importer: older op forms become the canonical form (ops/CANONICAL.md), symbolic dims flow through
// inference, Constant nodes and IR-3 initializers-as-inputs become constants. Expectations are the
// graph's text form.
#include "importer/importer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/util/import_text.h"
#include "tests/util/onnx_builder.h"

namespace importer {
namespace {

using ::testing::HasSubstr;
using testing_util::ImportText;
using testing_util::MakeNode;
using testing_util::TensorInfo;

TEST(ImporterTest, Opset6ClipAttributesBecomeInputs) {
  onnx::ModelProto model = testing_util::MakeModel(6);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {"N", 4});
  *g->add_output() = TensorInfo("y", {"N", 4});
  onnx::NodeProto clip = MakeNode("Clip", {"x"}, {"y"}, "clip");
  testing_util::SetFloatAttr(clip, "min", 0.0f);
  testing_util::SetFloatAttr(clip, "max", 6.0f);
  *g->add_node() = clip;
  const std::string text = ImportText(model);
  EXPECT_THAT(text, HasSubstr("%clip__min = const float32[]"));
  EXPECT_THAT(text, HasSubstr("clip: Clip(%x, %clip__min, %clip__max) -> (%y: float32[N,4])\n"));
}

TEST(ImporterTest, UpsampleBecomesResize) {
  onnx::ModelProto model = testing_util::MakeModel(7);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {1, 2, 3, 3});
  *g->add_output() = TensorInfo("y", {1, 2, 6, 6});
  onnx::NodeProto up = MakeNode("Upsample", {"x"}, {"y"}, "up");
  testing_util::SetFloatsAttr(up, "scales", {1, 1, 2, 2});
  testing_util::SetStringAttr(up, "mode", "bilinear");
  *g->add_node() = up;
  EXPECT_THAT(ImportText(model), HasSubstr("up: Resize(%x, _, %up__scales) -> (%y: float32[1,2,6,6]) "
                                           "{coordinate_transformation_mode=\"asymmetric\", mode=\"linear\", "
                                           "nearest_mode=\"simple\"}"));
}

// A one-node opset-8 model over an NCHW float input [1,3,4,5].
onnx::ModelProto ExperimentalOpModel(const onnx::NodeProto& node) {
  onnx::ModelProto model = testing_util::MakeModel(8);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {1, 3, 4, 5});
  *g->add_output() = TensorInfo("y", {});
  *g->add_node() = node;
  return model;
}

TEST(ImporterTest, ImageScalerBecomesMulAndAddOfAChannelBias) {
  onnx::NodeProto scaler = MakeNode("ImageScaler", {"x"}, {"y"}, "scaler");
  testing_util::SetFloatAttr(scaler, "scale", 0.5f);
  testing_util::SetFloatsAttr(scaler, "bias", {1, 2, 3});
  const std::string text = ImportText(ExperimentalOpModel(scaler));
  EXPECT_THAT(text, HasSubstr("%scaler__bias = const float32[3,1,1]"));
  EXPECT_THAT(text, HasSubstr("scaler__0_Mul: Mul(%x, %scaler__scale)"));
  EXPECT_THAT(text, HasSubstr("scaler: Add(%scaler__0_Mul_out, %scaler__bias) -> (%y: float32[1,3,4,5])"));
  testing_util::SetFloatsAttr(scaler, "bias", {1, 2});
  EXPECT_THAT(ImportText(ExperimentalOpModel(scaler)), HasSubstr("ImageScaler has 2 bias values for 3 channels"));
}

TEST(ImporterTest, CropBecomesSliceOrSaysWhatIsWrong) {
  onnx::NodeProto crop = MakeNode("Crop", {"x"}, {"y"}, "crop");
  testing_util::SetIntsAttr(crop, "border", {1, 0, 2, 1});  // left, top, right, bottom
  EXPECT_THAT(ImportText(ExperimentalOpModel(crop)), HasSubstr("-> (%y: float32[1,3,3,2])"));
  testing_util::SetIntsAttr(crop, "scale", {2, 3});  // height, width from (top, left)
  EXPECT_THAT(ImportText(ExperimentalOpModel(crop)), HasSubstr("-> (%y: float32[1,3,2,3])"));
  testing_util::SetIntsAttr(crop, "border", {1, 0, 2});
  EXPECT_THAT(ImportText(ExperimentalOpModel(crop)), HasSubstr("Crop needs border = [left, top, right, bottom]"));
  testing_util::SetIntsAttr(crop, "border", {1, -1, 2, 0});
  EXPECT_THAT(ImportText(ExperimentalOpModel(crop)), HasSubstr("Crop's border values must not be negative"));
}

TEST(ImporterTest, LegacyBroadcastWithAxisUnsqueezesB) {
  onnx::ModelProto model = testing_util::MakeModel(6);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("a", {2, 3, 4, 5});
  *g->add_input() = TensorInfo("b", {3});
  *g->add_output() = TensorInfo("y", {2, 3, 4, 5});
  onnx::NodeProto add = MakeNode("Add", {"a", "b"}, {"y"}, "add");
  testing_util::SetIntAttr(add, "broadcast", 1);
  testing_util::SetIntAttr(add, "axis", 1);
  *g->add_node() = add;
  const std::string text = ImportText(model);
  EXPECT_THAT(text, HasSubstr("add__broadcast: Unsqueeze(%b, %add__broadcast_axes) -> "
                              "(%add__broadcast_out: float32[3,1,1])"));
  EXPECT_THAT(text, HasSubstr("add: Add(%a, %add__broadcast_out) -> (%y: float32[2,3,4,5])\n"));
}

TEST(ImporterTest, SymbolicBatchFlowsThroughConvAndConstantsFold) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {"batch", 3, 8, 8});
  *g->add_input() = TensorInfo("w", {4, 3, 3, 3});  // IR 3 style: initializer also listed as input
  testing_util::AddInitializer(model, "w", {4, 3, 3, 3});
  *g->add_output() = TensorInfo("y", {"batch", 4, 8, 8});
  onnx::NodeProto conv = MakeNode("Conv", {"x", "w"}, {"c"}, "conv");
  testing_util::SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  *g->add_node() = conv;
  onnx::NodeProto k = MakeNode("Constant", {}, {"k"}, "k");
  testing_util::SetFloatAttr(k, "value_float", 2.0f);
  *g->add_node() = k;
  *g->add_node() = MakeNode("Mul", {"c", "k"}, {"y"}, "scale");
  const std::string text = ImportText(model);
  EXPECT_THAT(text, HasSubstr("graph test (%x: float32[batch,3,8,8]) -> (%y: float32[batch,4,8,8])"));
  EXPECT_THAT(text, HasSubstr("%k = const float32[]"));
  EXPECT_THAT(text, HasSubstr("conv: Conv(%x, %w) -> (%c: float32[batch,4,8,8])"));
}

TEST(ImporterTest, Opset9TopKAttributeBecomesInput) {
  onnx::ModelProto model = testing_util::MakeModel(9);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {"N", 8});
  *g->add_output() = TensorInfo("v", {"N", 3});
  *g->add_output() = TensorInfo("i", {"N", 3});
  onnx::NodeProto topk = MakeNode("TopK", {"x"}, {"v", "i"}, "topk");
  testing_util::SetIntAttr(topk, "k", 3);
  *g->add_node() = topk;
  const std::string text = ImportText(model);
  EXPECT_THAT(text, HasSubstr("%topk__k = const int64[1]"));
  EXPECT_THAT(text, HasSubstr("topk: TopK(%x, %topk__k) -> (%v: float32[N,3], %i: int64[N,3])\n"));
}

TEST(ImporterTest, ScatterBecomesScatterElements) {
  onnx::ModelProto model = testing_util::MakeModel(10);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("data", {3, 3});
  *g->add_input() = TensorInfo("idx", {1, 2}, onnx::TensorProto::INT64);
  *g->add_input() = TensorInfo("upd", {1, 2});
  *g->add_output() = TensorInfo("y", {3, 3});
  onnx::NodeProto scatter = MakeNode("Scatter", {"data", "idx", "upd"}, {"y"}, "scatter");
  testing_util::SetIntAttr(scatter, "axis", 1);
  *g->add_node() = scatter;
  EXPECT_THAT(ImportText(model),
              HasSubstr("scatter: ScatterElements(%data, %idx, %upd) -> (%y: float32[3,3]) {axis=1}"));
}

// String graph inputs and Constant value_strings are read; StringNormalizer's length depends on
// the values (stopwords given), so its dim is unknown.
TEST(ImporterTest, StringInputsAndConstants) {
  onnx::ModelProto model = testing_util::MakeModel(10);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {"C"}, onnx::TensorProto::STRING);
  *g->add_output() = TensorInfo("y", {-1}, onnx::TensorProto::STRING);
  *g->add_output() = TensorInfo("k", {2}, onnx::TensorProto::STRING);
  onnx::NodeProto k = MakeNode("Constant", {}, {"k"}, "k");
  onnx::AttributeProto* value = k.add_attribute();
  value->set_name("value_strings");
  value->set_type(onnx::AttributeProto::STRINGS);
  value->add_strings("monday");
  value->add_strings("tuesday");
  *g->add_node() = k;
  onnx::NodeProto normalize = MakeNode("StringNormalizer", {"x"}, {"y"}, "normalize");
  onnx::AttributeProto* stopwords = normalize.add_attribute();
  stopwords->set_name("stopwords");
  stopwords->set_type(onnx::AttributeProto::STRINGS);
  stopwords->add_strings("monday");
  *g->add_node() = normalize;
  const std::string text = ImportText(model);
  EXPECT_THAT(text, HasSubstr("graph test (%x: string[C]) -> (%y: string[?], %k: string[2])"));
  EXPECT_THAT(text, HasSubstr("%k = const string[2]"));
}

TEST(ImporterTest, OpsetOutsideTheRangeIsRefused) {
  onnx::ModelProto model = testing_util::MakeModel(99);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {2});
  *g->add_output() = TensorInfo("y", {2});
  *g->add_node() = MakeNode("Relu", {"x"}, {"y"}, "relu");
  EXPECT_THAT(ImportText(model), HasSubstr("opset 99; onnxrun supports opsets 1 to 28"));
}

// If whose branches read the main graph: a computed value (produced after the If in file order)
// and a graph input become implicit inputs, in the order the branches read them; an initializer is
// copied into the branch instead.
TEST(ImporterTest, OuterReadsOfBodiesBecomeImplicitInputs) {
  onnx::ModelProto model = testing_util::MakeModel(13);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("c", {}, onnx::TensorProto::BOOL);
  *g->add_input() = TensorInfo("in", {3});
  *g->add_input() = TensorInfo("y", {3});
  *g->add_output() = TensorInfo("out", {3});
  testing_util::AddInitializer(model, "w", {3});
  onnx::GraphProto then_branch, else_branch;
  *then_branch.add_node() = MakeNode("Add", {"x", "w"}, {"t"}, "then_add");
  *then_branch.add_output() = TensorInfo("t", {3});
  *else_branch.add_node() = MakeNode("Sub", {"y", "x"}, {"e"}, "else_sub");
  *else_branch.add_output() = TensorInfo("e", {3});
  onnx::NodeProto if_node = MakeNode("If", {"c"}, {"out"}, "if");
  for (auto [name, body] : {std::pair{"then_branch", &then_branch}, std::pair{"else_branch", &else_branch}}) {
    onnx::AttributeProto* attr = if_node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::GRAPH);
    *attr->mutable_g() = *body;
  }
  *g->add_node() = if_node;
  *g->add_node() = MakeNode("Relu", {"in"}, {"x"}, "relu");
  const std::string text = ImportText(model);
  EXPECT_THAT(text, HasSubstr("relu: Relu(%in) -> (%x: float32[3])\n  if: If(%c, %x, %y) -> (%out: float32[3])"));
}

// An If branch that does not type-check with the shapes of the values it reads (x[5] does not
// split into 4 parts) imports, typed from their dtypes alone: the If's output keeps its dtype and
// loses only the shape the branches no longer agree on (tests/control_flow: the run-time side).
TEST(ImporterTest, IfBranchThatCannotRunWithTheOuterShapesImportsWithoutThem) {
  onnx::ModelProto model = testing_util::MakeModel(18);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("c", {}, onnx::TensorProto::BOOL);
  *g->add_input() = TensorInfo("x", {5});
  *g->add_output() = TensorInfo("out", {5});
  onnx::GraphProto then_branch, else_branch;
  onnx::NodeProto split = MakeNode("Split", {"x"}, {"t", "t1", "t2", "t3"}, "split");
  testing_util::SetIntAttr(split, "num_outputs", 4);
  *then_branch.add_node() = split;
  *then_branch.add_output() = TensorInfo("t", {2});
  *else_branch.add_node() = MakeNode("Identity", {"x"}, {"e"}, "copy");
  *else_branch.add_output() = TensorInfo("e", {5});
  onnx::NodeProto if_node = MakeNode("If", {"c"}, {"out"}, "if");
  for (auto [name, body] : {std::pair{"then_branch", &then_branch}, std::pair{"else_branch", &else_branch}}) {
    onnx::AttributeProto* attr = if_node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::GRAPH);
    *attr->mutable_g() = *body;
  }
  *g->add_node() = if_node;
  EXPECT_THAT(ImportText(model), HasSubstr("if: If(%c, %x) -> (%out: float32[*])"));
}

// Momentum(R, T, X, G, V) in `domain`; the model imports ai.onnx.preview.training at
// `training_version` (none when 0) and ai.onnx at `opset` (none when 0).
onnx::ModelProto MomentumModel(const std::string& domain, int64_t training_version, int opset) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  if (training_version > 0) {
    auto* import = model.add_opset_import();
    import->set_domain("ai.onnx.preview.training");
    import->set_version(training_version);
  }
  if (opset > 0) model.add_opset_import()->set_version(opset);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("R", {});
  *g->add_input() = TensorInfo("T", {}, onnx::TensorProto::INT64);
  for (const char* name : {"X", "G", "V"}) *g->add_input() = TensorInfo(name, {2});
  *g->add_output() = TensorInfo("X_new", {2});
  *g->add_output() = TensorInfo("V_new", {2});
  onnx::NodeProto node = MakeNode("Momentum", {"R", "T", "X", "G", "V"}, {"X_new", "V_new"}, "momentum");
  node.set_domain(domain);
  for (const char* name : {"alpha", "beta", "norm_coefficient"}) testing_util::SetFloatAttr(node, name, 0.5f);
  testing_util::SetStringAttr(node, "mode", "standard");
  *g->add_node() = node;
  return model;
}

TEST(ImporterTest, TrainingDomainOpGetsItsDomainInTheOpType) {
  EXPECT_THAT(ImportText(MomentumModel("ai.onnx.preview.training", 1, 0)),
              HasSubstr("momentum: ai.onnx.preview.training.Momentum(%R, %T, %X, %G, %V) -> (%X_new: float32[2]"));
}

TEST(ImporterTest, TrainingOpOutsideItsDomainOrVersionIsRefused) {
  EXPECT_THAT(ImportText(MomentumModel("", 0, 13)),
              HasSubstr("unsupported ops at opset 13: Momentum (nodes 'momentum')"));
  EXPECT_THAT(ImportText(MomentumModel("ai.onnx.preview.training", 2, 0)),
              HasSubstr("ai.onnx.preview.training opset 2; onnxrun supports opsets 1 to 1"));
  EXPECT_THAT(ImportText(MomentumModel("ai.onnx.preview.training", 0, 13)),
              HasSubstr("domain 'ai.onnx.preview.training' has no opset_import"));
  EXPECT_THAT(ImportText(MomentumModel("com.example", 0, 13)),
              HasSubstr("unsupported ops at opset 13: com.example.Momentum (nodes 'momentum')"));
  EXPECT_THAT(ImportText(MomentumModel("com.microsoft.nchwc", 0, 13)),
              HasSubstr("com.microsoft.nchwc.Momentum (nodes 'momentum') (com.microsoft.nchwc ops come from a model "
                        "ONNX Runtime saved at ORT_ENABLE_ALL"));
}

TEST(ImporterTest, DefaultDomainOpNeedsAnAiOnnxImport) {
  onnx::ModelProto model = MomentumModel("ai.onnx.preview.training", 1, 0);
  *model.mutable_graph()->add_node() = MakeNode("Relu", {"X_new"}, {"r"}, "relu");
  EXPECT_THAT(ImportText(model), HasSubstr("node 'relu' (Relu): model has no ai.onnx opset_import"));
}

// FlexAttention(Q [1,4,3,8], K and V [1,kv_heads,5,8]) in ai.onnx.preview 1 over ai.onnx 24; a
// score_mod graph adding the main graph's input "bias" (read from the enclosing graph) when asked.
onnx::ModelProto FlexAttentionModel(int64_t kv_heads, bool score_mod) {
  onnx::ModelProto model = testing_util::MakeModel(24);
  auto* import = model.add_opset_import();
  import->set_domain("ai.onnx.preview");
  import->set_version(1);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("q", {1, 4, 3, 8});
  *g->add_input() = TensorInfo("k", {1, kv_heads, 5, 8});
  *g->add_input() = TensorInfo("v", {1, kv_heads, 5, 8});
  *g->add_input() = TensorInfo("bias", {5});
  *g->add_output() = TensorInfo("y", {1, 4, 3, 8});
  onnx::NodeProto node = MakeNode("FlexAttention", {"q", "k", "v"}, {"y"}, "flex");
  node.set_domain("ai.onnx.preview");
  if (score_mod) {
    onnx::AttributeProto* attr = node.add_attribute();
    attr->set_name("score_mod");
    attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* body = attr->mutable_g();
    *body->add_input() = TensorInfo("s", {});
    *body->add_output() = TensorInfo("s_out", {});
    *body->add_node() = MakeNode("Add", {"s", "bias"}, {"s_out"}, "add_bias");
  }
  *g->add_node() = node;
  return model;
}

TEST(ImporterTest, FlexAttentionBecomesMatMulSoftmaxMatMulWithItsScoreModInlined) {
  const std::string text = ImportText(FlexAttentionModel(4, true));
  EXPECT_THAT(text, HasSubstr("flex/score_mod/add_bias: Add("));
  EXPECT_THAT(text, HasSubstr(", %bias) -> (%flex/score_mod_"));
  EXPECT_THAT(text, HasSubstr("Softmax("));
  EXPECT_THAT(text, HasSubstr("-> (%y: float32[1,4,3,8])"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("Expand(")));  // equal head counts: no repeat
}

TEST(ImporterTest, FlexAttentionRepeatsKeyValueHeadsForGroupedQueries) {
  const std::string text = ImportText(FlexAttentionModel(2, false));
  EXPECT_THAT(text, HasSubstr("Expand("));
  EXPECT_THAT(text, HasSubstr("-> (%y: float32[1,4,3,8])"));
}

TEST(ImporterTest, MalformedFlexAttentionIsRefusedWithItsReason) {
  EXPECT_THAT(ImportText(FlexAttentionModel(3, false)),
              HasSubstr("node 'flex' (ai.onnx.preview.FlexAttention): q_num_heads (4) must be a multiple of "
                        "kv_num_heads (3)"));
  onnx::ModelProto two_inputs = FlexAttentionModel(4, true);
  onnx::GraphProto* body = two_inputs.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  *body->add_input() = TensorInfo("extra", {});
  EXPECT_THAT(ImportText(two_inputs), HasSubstr("score_mod must be a graph with one input and one output"));
  onnx::ModelProto int_softmax = FlexAttentionModel(4, false);
  testing_util::SetIntAttr(*int_softmax.mutable_graph()->mutable_node(0), "softmax_precision", 7);
  EXPECT_THAT(ImportText(int_softmax), HasSubstr("softmax_precision 7 is not one of float, float16, bfloat16, double"));
}

}  // namespace
}  // namespace importer
