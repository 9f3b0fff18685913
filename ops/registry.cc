// The op registry: one explicit table built from the per-family tables.
#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "ops/op_def.h"

namespace ops {
namespace {

const std::map<std::string_view, OpDef>& Registry() {
  static const auto* registry = [] {
    auto* map = new std::map<std::string_view, OpDef>();
    for (auto family : {ElementwiseOpDefs,
                        NnOpDefs,
                        TensorOpDefs,
                        TensorCopyOpDefs,
                        ReduceResizeOpDefs,
                        CumSumOpDefs,
                        LrnOpDefs,
                        RnnOpDefs,
                        QuantizeOpDefs,
                        VisionOpDefs,
                        TensorGenOpDefs,
                        TensorSelectOpDefs,
                        TensorScatterOpDefs,
                        TensorSpatialOpDefs,
                        LogicOpDefs,
                        MathOpDefs,
                        EinsumOpDefs,
                        MathNormOpDefs,
                        LossOpDefs,
                        SpectralOpDefs,
                        DropoutOpDefs,
                        TfIdfOpDefs,
                        OptimizerOpDefs,
                        RandomOpDefs,
                        GroupRmsNormOpDefs,
                        AttentionOpDefs,
                        RecurrentStateOpDefs,
                        ImageDecoderOpDefs,
                        GroupQueryAttentionOpDefs}) {
      for (const OpDef& def : family()) (*map)[def.op_type] = def;
    }
    for (const OpDef& def : ControlFlowOpDefs()) (*map)[def.op_type] = def;
    for (const OpDef& def : SequenceOpDefs()) (*map)[def.op_type] = def;
    for (const OpDef& def : StringOpDefs()) (*map)[def.op_type] = def;
    for (const OpDef& def : StringTextOpDefs()) (*map)[def.op_type] = def;
    for (const OpDef& def : TokenizerOpDefs()) (*map)[def.op_type] = def;
    for (const OpDef& def : DeformConvOpDefs()) (*map)[def.op_type] = def;
    for (const OpDef& def : MlOpDefs()) (*map)[def.op_type] = def;
    for (auto& [op_type, def] : *map) def.takes_strings = def.takes_strings || MovesElementsOnly(op_type);
    return map;
  }();
  return *registry;
}

// String tensors reach only ops that take them (OpDef::takes_strings): an error otherwise.
absl::Status CheckStringInputs(const OpDef& def, const InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs() && !def.takes_strings; ++i) {
    if (ctx.has_input(i) && ctx.type(i).dtype == ir::DType::kString) {
      return absl::UnimplementedError(absl::StrCat("input ", i, " is ", ctx.type(i).ToString(), "; ",
                                                   std::string(def.op_type), " does not take string tensors"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckStringOutputs(const OpDef& def, const InferContext& ctx, const std::vector<ir::TensorType>& types) {
  for (size_t o = 0; o < types.size() && o < ctx.num_outputs() && !def.takes_strings; ++o) {
    if (ctx.node.outputs[o] != ir::kNoValue && types[o].dtype == ir::DType::kString) {
      return absl::UnimplementedError(absl::StrCat("output ", o, " would be a string tensor; ",
                                                   std::string(def.op_type), " does not make string tensors"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool MovesElementsOnly(std::string_view op_type) {
  static const auto* const kOps =
      new std::set<std::string_view>{"Reshape",      "Flatten",         "Squeeze",   "Unsqueeze", "Transpose",
                                     "Gather",       "GatherElements",  "GatherND",  "Concat",    "Split",
                                     "Slice",        "Expand",          "Tile",      "Compress",  "Where",
                                     "Pad",          "ScatterElements", "ScatterND", "Scatter",   "DepthToSpace",
                                     "SpaceToDepth", "ReverseSequence", "Shape",     "Trilu"};
  return kOps->count(op_type) > 0;
}

absl::StatusOr<std::vector<ir::TensorType>> InferTypes(const OpDef& def, const InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs() && !def.takes_non_tensors; ++i) {
    if (ctx.has_input(i) && !ctx.type(i).is_tensor()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " is ", ctx.type(i).ToString(), "; ", std::string(def.op_type), " takes tensors"));
    }
  }
  if (absl::Status s = CheckStringInputs(def, ctx); !s.ok()) return s;
  absl::StatusOr<std::vector<ir::TensorType>> types = def.infer(ctx);
  if (!types.ok()) return types;
  if (absl::Status s = CheckStringOutputs(def, ctx, *types); !s.ok()) return s;
  return types;
}

const OpDef* FindOpDef(std::string_view op_type) {
  auto it = Registry().find(op_type);
  return it == Registry().end() ? nullptr : &it->second;
}

const std::vector<ImportedOp>& ImporterRewrittenOps() {
  static const auto* ops = new std::vector<ImportedOp>{
      {"Constant", "a constant"},
      {"Upsample", "Resize"},
      {"Scatter", "ScatterElements"},
      {"CastLike", "Cast"},
      {"ImageScaler", "Mul and Add (a channel bias)"},
      {"Crop", "Slice"},
      {"DynamicSlice", "Slice"},
      {"Scale", "Mul"},
      {"Affine", "Mul and Add"},
      {"ScaledTanh", "Mul, Tanh, Mul"},
      {"ParametricSoftplus", "Mul, Softplus, Mul"},
      {"SwiGLU", "Mul, Sigmoid, Mul, Mul"},
      {"ai.onnx.preview.FlexAttention", "MatMul, Softmax, MatMul, its score_mod / prob_mod graphs inlined"},
      // ONNX Runtime's contrib ops (importer/contrib_*.cc).
      {"SimplifiedLayerNormalization", "RMSNormalization"},
      {"com.microsoft.Gelu", "Gelu"},
      {"com.microsoft.BiasGelu", "Add and Gelu"},
      {"com.microsoft.FastGelu", "Add and Gelu (tanh form)"},
      {"com.microsoft.QuickGelu", "Mul, Sigmoid, Mul"},
      {"com.microsoft.SkipLayerNormalization", "Add and LayerNormalization"},
      {"com.microsoft.SkipSimplifiedLayerNormalization", "Add and RMSNormalization"},
      {"com.microsoft.FusedMatMul", "Transpose, MatMul, Mul"},
      {"com.microsoft.TransposeMatMul", "Transpose, MatMul, Mul (as FusedMatMul)"},
      {"com.microsoft.ExpandDims", "Unsqueeze (a constant axis)"},
      {"com.microsoft.CDist", "MatMul, ReduceSumSquare, Add, Abs (Sqrt)"},
      {"com.microsoft.FusedConv", "Conv, Add and the activation"},
      {"com.microsoft.GroupNorm", "Transpose, GroupNormalization, Sigmoid and Mul (SiLU), Transpose"},
      {"com.microsoft.SkipGroupNorm", "Add, then as GroupNorm"},
      {"com.microsoft.BiasSplitGelu", "Add, Split, Gelu, Mul"},
      {"com.microsoft.BiasAdd", "Add, Add"},
      {"com.microsoft.NhwcConv", "Transpose, Conv (weight transposed at import), Transpose"},
      {"com.microsoft.BiasDropout", "Add, Dropout, Add"},
      {"com.microsoft.FusedGemm", "Gemm and the activation"},
      {"com.microsoft.Attention", "MatMul, Split, Attention (ONNX's, with ORT's additive mask and KV cache)"},
      {"com.microsoft.MultiHeadAttention", "Split, Add, Attention (ONNX's, with ORT's additive mask and KV cache)"},
      {"com.microsoft.EmbedLayerNormalization", "Gather, Add, LayerNormalization (mask index: ReduceSum)"},
      {"com.microsoft.QAttention", "DequantizeLinear, then as Attention"},
      {"com.microsoft.QEmbedLayerNormalization", "DequantizeLinear, then as EmbedLayerNormalization"},
      {"com.microsoft.MatMulNBits", "MatMul (and Add) on the weight dequantized at import"},
      {"com.microsoft.GatherBlockQuantized", "Gather from the table dequantized at import"},
      {"com.microsoft.RotaryEmbedding", "RotaryEmbedding (ONNX's; a start position becomes [B, S] positions)"},
      {"com.microsoft.QLinearAdd", "DequantizeLinear, Add, QuantizeLinear"},
      {"com.microsoft.QLinearMul", "DequantizeLinear, Mul, QuantizeLinear"},
      {"com.microsoft.QLinearSigmoid", "DequantizeLinear, Sigmoid, QuantizeLinear"},
      {"com.microsoft.QLinearLeakyRelu", "DequantizeLinear, LeakyRelu, QuantizeLinear"},
      {"com.microsoft.QLinearSoftmax", "DequantizeLinear, Softmax, QuantizeLinear"},
      {"com.microsoft.QLinearGlobalAveragePool", "DequantizeLinear, GlobalAveragePool, QuantizeLinear"},
      {"com.microsoft.QLinearAveragePool", "DequantizeLinear, AveragePool, QuantizeLinear"},
      {"com.microsoft.QLinearConcat", "DequantizeLinear, Concat, QuantizeLinear"},
      {"com.microsoft.QLinearWhere", "DequantizeLinear, Where, QuantizeLinear"},
      {"com.microsoft.QLinearConv", "QLinearConv (Transpose around it where channels_last)"},
      {"com.microsoft.QuantizeLinear", "QuantizeLinear"},
      {"com.microsoft.DequantizeLinear", "DequantizeLinear"},
      {"com.microsoft.QGemm", "MatMulInteger, Add, Cast, Mul (QuantizeLinear)"},
      {"com.microsoft.MatMulIntegerToFloat", "MatMulInteger, Cast, Mul, Add"},
      {"com.microsoft.DynamicQuantizeMatMul", "DynamicQuantizeLinear, MatMulInteger, Cast, Mul, Add"},
      {"com.microsoft.DynamicQuantizeLSTM", "LSTM on the dequantized weights (Cast, Sub, Mul, Transpose)"},
  };
  return *ops;
}

std::vector<std::string> SupportedOpTypes() {
  std::vector<std::string> names;
  for (const auto& [name, def] : Registry()) names.emplace_back(name);
  return names;
}

}  // namespace ops
