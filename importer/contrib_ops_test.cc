// The importer's rewrites of ONNX Runtime's contrib ops: what the rewritten graph holds where it is
// not obvious (an output that becomes a helper node's, the quantized scale ratios), and the clear
// error of each form that is not supported. Their numbers are checked against ONNX Runtime by
// tests/models:small_models_test (models/ort_contrib_ops, models/ort_quantized_cnn).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/importer.h"
#include "tests/util/import_text.h"
#include "tests/util/onnx_builder.h"

namespace importer {
namespace {

using ::testing::HasSubstr;
using testing_util::ImportText;
using testing_util::MakeNode;
using testing_util::TensorInfo;

// One com.microsoft node (opset 17 + com.microsoft 1) over float inputs `x` [2,5,8], `w` [8,24]
// and `g` [8].
onnx::ModelProto ContribModel(onnx::NodeProto node, int ms_opset = 1) {
  onnx::ModelProto model = testing_util::MakeModel(17);
  auto* ms = model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(ms_opset);
  node.set_domain("com.microsoft");
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {2, 5, 8});
  *g->add_input() = TensorInfo("w", {8, 24});
  *g->add_input() = TensorInfo("g", {8});
  for (const std::string& out : node.output()) {
    if (!out.empty()) *g->add_output() = TensorInfo(out, {});
  }
  *g->add_node() = node;
  return model;
}

TEST(ContribOpsTest, SkipLayerNormalizationSumIsTheAddItWrites) {
  const std::string text =
      ImportText(ContribModel(MakeNode("SkipLayerNormalization", {"x", "x", "g"}, {"y", "", "", "sum"}, "skip_ln")));
  EXPECT_THAT(text, HasSubstr("skip_ln__0_Add: Add(%x, %x) -> (%sum: float32[2,5,8])"));
  EXPECT_THAT(text, HasSubstr("skip_ln: LayerNormalization(%sum, %g) -> (%y: float32[2,5,8]) {axis=-1, epsilon="));
}

TEST(ContribOpsTest, FastGeluIsTheTanhFormOfTheBiasedInput) {
  EXPECT_THAT(ImportText(ContribModel(MakeNode("FastGelu", {"x", "x"}, {"y"}, "gelu"))),
              HasSubstr("gelu: Gelu(%gelu__0_Add_out) -> (%y: float32[2,5,8]) {approximate=\"tanh\"}"));
}

TEST(ContribOpsTest, AttentionBecomesOnnxAttentionOnTheSplitProjection) {
  onnx::NodeProto node = MakeNode("Attention", {"x", "w"}, {"y"}, "attention");
  testing_util::SetIntAttr(node, "num_heads", 2);
  testing_util::SetIntAttr(node, "unidirectional", 1);
  const std::string text = ImportText(ContribModel(node));
  EXPECT_THAT(text, HasSubstr("attention__1_Split: Split(%attention__0_MatMul_out, %attention__split_sizes)"));
  EXPECT_THAT(text, HasSubstr("-> (%y: float32[2,5,8]) {is_causal=1, kv_num_heads=2, q_num_heads=2}"));
}

TEST(ContribOpsTest, AttentionCacheBecomesOnnxAttentionPastAndAStackedPresent) {
  onnx::NodeProto node = MakeNode("Attention", {"x", "w", "", "", "past"}, {"y", "present"}, "attention");
  testing_util::SetIntAttr(node, "num_heads", 2);
  onnx::ModelProto model = ContribModel(node);
  *model.mutable_graph()->add_input() = TensorInfo("past", {2, 2, 2, 3, 4});
  const std::string text = ImportText(model);
  EXPECT_THAT(text, HasSubstr("Gather(%past, %attention__keys)"));
  EXPECT_THAT(text, HasSubstr("-> (%y: float32[2,5,8], %attention__present_key: float32[2,2,8,4], "
                              "%attention__present_value: float32[2,2,8,4])"));
  EXPECT_THAT(text, HasSubstr("attention: Concat("));
  EXPECT_THAT(text, HasSubstr("-> (%present: float32[2,2,2,8,4]) {axis=0}"));
}

// transBatchA moves A's dim 0 in front of its last: x [2, 5, 8] is read as [5, 2, 8] (ORT's transpose
// fusion folds an attention's head split into the matmul so); tests/contrib_matmul has ORT's outputs.
TEST(ContribOpsTest, FusedMatMulTransBatchTransposesDimZeroBehindTheBatchDims) {
  onnx::NodeProto node = MakeNode("FusedMatMul", {"x", "x"}, {"y"}, "mm");
  testing_util::SetIntAttr(node, "transBatchA", 1);
  testing_util::SetIntAttr(node, "transBatchB", 1);
  testing_util::SetIntAttr(node, "transB", 1);
  const std::string text = ImportText(ContribModel(node));
  EXPECT_THAT(text, HasSubstr("Transpose(%x) -> (%mm__0_Transpose_out: float32[5,2,8])"));
  EXPECT_THAT(text, HasSubstr("Transpose(%x) -> (%mm__1_Transpose_out: float32[5,8,2])"));
  EXPECT_THAT(text, HasSubstr("mm: MatMul(%mm__0_Transpose_out, %mm__1_Transpose_out) -> (%y: float32[5,2,2])"));
  onnx::NodeProto ranks = MakeNode("FusedMatMul", {"x", "w"}, {"y"}, "mm");  // as ORT, refused: ranks 3 and 2
  testing_util::SetIntAttr(ranks, "transBatchA", 1);
  EXPECT_THAT(ImportText(ContribModel(ranks)), HasSubstr("needs inputs of one rank, 3 or more (ranks 3 and 2)"));
}

TEST(ContribOpsTest, UnsupportedFormsSayWhat) {
  onnx::NodeProto shared = MakeNode("Attention", {"x", "w", "", "", "", "", "g"}, {"y"}, "attention");
  testing_util::SetIntAttr(shared, "num_heads", 2);
  EXPECT_THAT(ImportText(ContribModel(shared)),
              HasSubstr("node 'attention' (Attention): Attention's past_sequence_length (a shared KV buffer)"));
  onnx::NodeProto uneven = MakeNode("Attention", {"x", "w"}, {"y"}, "attention");
  testing_util::SetIntAttr(uneven, "num_heads", 3);
  EXPECT_THAT(ImportText(ContribModel(uneven)), HasSubstr("each a multiple of num_heads"));
  EXPECT_THAT(ImportText(ContribModel(MakeNode("QLinearAdd", {"x", "", "", "x"}, {"y"}, "qadd"))),
              HasSubstr("node 'qadd' (QLinearAdd): input 1 is required"));
  onnx::NodeProto conv = MakeNode("FusedConv", {"x", "w"}, {"y"}, "conv");
  testing_util::SetStringAttr(conv, "activation", "Softsign");
  EXPECT_THAT(ImportText(ContribModel(conv)), HasSubstr("fused activation 'Softsign' is not supported"));
  EXPECT_THAT(ImportText(ContribModel(MakeNode("NhwcConv", {"x", "w"}, {"y"}, "nhwc"))),
              HasSubstr("node 'nhwc' (NhwcConv): NhwcConv with a computed weight is not supported"));
  EXPECT_THAT(ImportText(ContribModel(MakeNode("GroupNorm", {"x", "g", "g"}, {"y"}, "gn"))),
              HasSubstr("attribute 'groups' is required"));
  onnx::NodeProto bad_activation = MakeNode("GroupNorm", {"x", "g", "g"}, {"y"}, "gn");
  testing_util::SetIntAttr(bad_activation, "groups", 2);
  testing_util::SetIntAttr(bad_activation, "activation", 2);
  EXPECT_THAT(ImportText(ContribModel(bad_activation)), HasSubstr("activation must be 0 (none) or 1 (SiLU), got 2"));
  EXPECT_THAT(ImportText(ContribModel(MakeNode("ExpandDims", {"x", "g"}, {"y"}, "expand"))),
              HasSubstr("ExpandDims needs a constant scalar axis"));
}

TEST(ContribOpsTest, SkipGroupNormSumIsTheAddItWritesAndNcSkipIsUnsqueezed) {
  onnx::ModelProto model = testing_util::MakeModel(17);
  auto* ms = model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  auto* g = model.mutable_graph();
  *g->add_input() = TensorInfo("x", {2, 3, 3, 8});
  *g->add_input() = TensorInfo("skip", {2, 8});
  *g->add_input() = TensorInfo("gamma", {8});
  *g->add_output() = TensorInfo("y", {});
  *g->add_output() = TensorInfo("s", {});
  onnx::NodeProto node = MakeNode("SkipGroupNorm", {"x", "gamma", "gamma", "skip"}, {"y", "s"}, "sgn");
  node.set_domain("com.microsoft");
  testing_util::SetIntAttr(node, "groups", 4);
  *g->add_node() = node;
  const std::string text = ImportText(model);
  EXPECT_THAT(text, HasSubstr("Unsqueeze(%skip, %sgn__skip_axes) -> (%sgn__0_Unsqueeze_out: float32[2,1,1,8])"));
  EXPECT_THAT(text, HasSubstr("Add(%x, %sgn__0_Unsqueeze_out) -> (%s: float32[2,3,3,8])"));
  EXPECT_THAT(text, HasSubstr("GroupNormalization("));
  EXPECT_THAT(text, HasSubstr("sgn: Transpose("));
}

TEST(ContribOpsTest, UnknownContribOpsAreNamedWithTheirNodesAndOtherOpsetsRefused) {
  EXPECT_THAT(ImportText(ContribModel(MakeNode("WordConvEmbedding", {"x"}, {"y"}, "embed"))),
              HasSubstr("unsupported ops at opset 17: com.microsoft.WordConvEmbedding (nodes 'embed')"));
  EXPECT_THAT(ImportText(ContribModel(MakeNode("Gelu", {"x"}, {"y"}, "gelu"), 2)),
              HasSubstr("model uses com.microsoft opset 2; onnxrun supports opsets 1 to 1"));
}

TEST(ContribOpsTest, ContribNodesWithoutAnOpsetImportReadAsVersionOne) {
  onnx::ModelProto model = ContribModel(MakeNode("Gelu", {"x"}, {"y"}, "gelu"));
  model.mutable_opset_import()->RemoveLast();
  EXPECT_THAT(ImportText(model), HasSubstr("gelu: Gelu(%x) -> (%y: float32[2,5,8])"));
}

}  // namespace
}  // namespace importer
