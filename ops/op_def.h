// The supported op set: for each ONNX op type (in the canonical form the importer produces; an op
// of a domain other than ai.onnx is named "<domain>.<op_type>"), its arity and its type/shape
// inference function. Used by the importer (symbolic shapes, constants
// partly known) and by the runtime (concrete shapes, every input value known) alike.
#ifndef ONNXRUN_OPS_OP_DEF_H_
#define ONNXRUN_OPS_OP_DEF_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace ops {

// What an inference function sees of one node.
struct InferContext {
  const ir::Node& node;
  std::vector<const ir::TensorType*> input_types;  // nullptr for an absent optional input
  std::vector<const ir::Tensor*> input_values;     // nullptr when the value is not known

  size_t num_inputs() const { return input_types.size(); }
  bool has_input(size_t i) const { return i < input_types.size() && input_types[i] != nullptr; }
  // Precondition: has_input(i).
  const ir::TensorType& type(size_t i) const { return *input_types[i]; }
  // nullptr when absent or not a known constant.
  const ir::Tensor* value(size_t i) const { return i < input_values.size() ? input_values[i] : nullptr; }
  const ir::Attributes& attrs() const { return node.attrs; }
  size_t num_outputs() const { return node.outputs.size(); }
};

// Returns one TensorType per node output (also for absent optional outputs, whose type is ignored).
// Errors describe the problem without the node name (the caller adds it).
using InferFn = absl::StatusOr<std::vector<ir::TensorType>> (*)(const InferContext&);

struct OpDef {
  std::string_view op_type;
  int min_inputs;
  int max_inputs;
  InferFn infer;
  // Whether inputs may be non-tensor values (sequences, optionals); other ops get an error naming
  // the input instead of a kernel reading a sequence as a tensor.
  bool takes_non_tensors = false;
  // Whether the op takes or produces string tensors (dtype kString, whose elements are not bytes).
  // Other ops get an error naming the input or output, so that no byte-moving kernel sees one.
  bool takes_strings = false;
};

// The op's inference on `ctx`, after checking that only ops that take them see non-tensor inputs
// and string tensors (and that only those ops produce string tensors).
absl::StatusOr<std::vector<ir::TensorType>> InferTypes(const OpDef& def, const InferContext& ctx);

// nullptr when the op is not supported.
const OpDef* FindOpDef(std::string_view op_type);
// Ops whose outputs only copy, select or rearrange input elements (Reshape, Gather, Concat, Where,
// Pad, ...): they take string tensors, and their kernels run on element indices in their place
// (kernels::cpu::RunNode), so no byte-moving kernel sees a string.
bool MovesElementsOnly(std::string_view op_type);
// Sorted op type names, for help text and errors.
std::vector<std::string> SupportedOpTypes();
// Default-domain ops that are not in the registry because the importer consumes them or rewrites
// them into registered ops (importer/canonicalize.cc), each with what it becomes: older names
// (Upsample, Scatter), CastLike, and the ops ONNX dropped from its experimental set.
struct ImportedOp {
  std::string_view op_type, becomes;
};
const std::vector<ImportedOp>& ImporterRewrittenOps();

// Per-family tables (one .cc each); the registry concatenates them.
std::vector<OpDef> ElementwiseOpDefs();     // unary/binary/variadic math, activations, Cast, Where, Clip, Identity
std::vector<OpDef> NnOpDefs();              // Conv, ConvTranspose, pools, norms, MatMul, Gemm
std::vector<OpDef> TensorOpDefs();          // shape ops: Reshape, Squeeze, Transpose, Shape, Expand, ...
std::vector<OpDef> TensorCopyOpDefs();      // data movement: Concat, Split, Slice, Gather, Pad
std::vector<OpDef> ReduceResizeOpDefs();    // ReduceMean/Sum/Max, Softmax, LogSoftmax, Resize
std::vector<OpDef> CumSumOpDefs();          // ops/cumsum.h
std::vector<OpDef> LrnOpDefs();             // ops/lrn.h
std::vector<OpDef> RnnOpDefs();             // RNN, GRU, LSTM
std::vector<OpDef> QuantizeOpDefs();        // Quantize/DequantizeLinear, MatMulInteger, QLinearConv, ...
std::vector<OpDef> VisionOpDefs();          // NonMaxSuppression, RoiAlign, MaxRoiPool, GridSample, LpPool, GlobalLpPool
std::vector<OpDef> TensorGenOpDefs();       // ConstantOfShape, Range, EyeLike, Tile, Trilu, Size, OneHot, windows
std::vector<OpDef> TensorSelectOpDefs();    // TopK, NonZero, Compress, Unique (data-dependent sizes)
std::vector<OpDef> TensorScatterOpDefs();   // Gather/ScatterElements, Gather/ScatterND, SpaceToDepth, ReverseSequence
std::vector<OpDef> TensorSpatialOpDefs();   // MaxUnpool, Col2Im, CenterCropPad
std::vector<OpDef> LogicOpDefs();           // ops/logic.h: comparisons, Not/And/Or/Xor, IsInf, IsNaN, Sign, Mod, Bit*
std::vector<OpDef> MathOpDefs();            // ops/math.h: rounding, trig, Softsign..Mish, Mean, Hardmax
std::vector<OpDef> EinsumOpDefs();          // ops/einsum.h
std::vector<OpDef> MathNormOpDefs();        // ops/math_norm.h: Det, LpNormalization, MeanVarianceNormalization
std::vector<OpDef> LossOpDefs();            // ops/loss.h: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
std::vector<OpDef> SpectralOpDefs();        // ops/spectral.h: DFT, STFT, MelWeightMatrix
std::vector<OpDef> DropoutOpDefs();         // ops/dropout.h
std::vector<OpDef> RandomOpDefs();          // ops/random.h
std::vector<OpDef> GroupRmsNormOpDefs();    // ops/group_rms_norm.h
std::vector<OpDef> AttentionOpDefs();       // ops/attention.h: Attention, RotaryEmbedding
std::vector<OpDef> TfIdfOpDefs();           // ops/tfidf.h: TfIdfVectorizer
std::vector<OpDef> OptimizerOpDefs();       // ops/optimizer.h: ai.onnx.preview.training Adagrad, Adam, Momentum
std::vector<OpDef> ControlFlowOpDefs();     // ops/control_flow.h: If, Loop, Scan
std::vector<OpDef> SequenceOpDefs();        // ops/sequence.h: Sequence*, Optional*
std::vector<OpDef> StringOpDefs();          // ops/string_normalizer.h: StringNormalizer
std::vector<OpDef> StringTextOpDefs();      // ops/string_text.h: StringConcat, StringSplit, RegexFullMatch
std::vector<OpDef> TokenizerOpDefs();       // ops/tokenizer.h: com.microsoft.Tokenizer
std::vector<OpDef> DeformConvOpDefs();      // ops/deform_conv.h: DeformConv
std::vector<OpDef> MlOpDefs();              // ops/ml_ops.h: ai.onnx.ml Binarizer, ArrayFeatureExtractor, ...
std::vector<OpDef> RecurrentStateOpDefs();  // ops/recurrent_state.cc: CausalConvWithState, LinearAttention
std::vector<OpDef> ImageDecoderOpDefs();    // ops/image_decoder.cc: ImageDecoder
std::vector<OpDef> GroupQueryAttentionOpDefs();  // ops/group_query_attention.h: com.microsoft GQA

}  // namespace ops

#endif  // ONNXRUN_OPS_OP_DEF_H_
