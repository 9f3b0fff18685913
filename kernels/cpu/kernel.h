// The CPU reference kernel interface: one function per op type, given the node (attributes in
// canonical form), its input tensors and its output tensors, already allocated (zero-filled) with
// the shapes the op's inference function computed from these inputs. An output whose shape depends
// on input data the inference does not evaluate (NonZero, Unique, ...) comes as an invalid Tensor:
// the kernel assigns it (`*ctx.output(i) = *std::move(created)`).
#ifndef ONNXRUN_KERNELS_CPU_KERNEL_H_
#define ONNXRUN_KERNELS_CPU_KERNEL_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace kernels::cpu {

class KernelCache;       // kernel_cache.h
struct FusedActivation;  // fused_activation.h

struct KernelContext {
  const ir::Node& node;
  std::vector<const ir::Tensor*> inputs;  // nullptr for an absent optional input
  std::vector<ir::Tensor*> outputs;       // nullptr for an absent optional output
  // Where the kernel may keep state between runs of this node (nullptr: none is kept), and which
  // inputs (bit i: input i) are plan constants, never written and alive as long as the cache.
  KernelCache* cache = nullptr;
  uint32_t constant_inputs = 0;
  // CPU executor only: bit i says input i (float32, rank 4) holds its NCHW value channels-last
  // (NHWC bytes under NCHW dims); whether output 0 may be written so, and whether the kernel did.
  // Only Conv (onednn_conv.h) takes or writes such tensors, and GlobalAveragePool takes them.
  uint32_t channels_last_inputs = 0;
  bool channels_last_output_ok = false;
  bool channels_last_output = false;
  // CPU executor only: the activation node that follows (reading only this node's output 0), for
  // the kernel to apply in place of that node, and whether it did (Conv on oneDNN does).
  const FusedActivation* activation = nullptr;
  bool activation_applied = false;

  const ir::Tensor* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  ir::Tensor* output(size_t i) const { return i < outputs.size() ? outputs[i] : nullptr; }
  const ir::Attributes& attrs() const { return node.attrs; }
};

using KernelFn = absl::Status (*)(KernelContext&);

struct KernelDef {
  std::string_view op_type;
  KernelFn fn;
};

// nullptr when no CPU kernel exists for the op.
KernelFn FindKernel(std::string_view op_type);

// Per-family tables (one .cc each); the registry concatenates them.
std::vector<KernelDef> ElementwiseKernels();
std::vector<KernelDef> NnKernels();
std::vector<KernelDef> TensorKernels();
std::vector<KernelDef> ReduceResizeKernels();
std::vector<KernelDef> CumSumKernels();        // cumsum.cc
std::vector<KernelDef> LrnKernels();           // lrn.cc
std::vector<KernelDef> RnnKernels();           // rnn.cc
std::vector<KernelDef> QuantizeKernels();      // quantize.cc
std::vector<KernelDef> QuantizeGemmKernels();  // quantize_gemm.cc
std::vector<KernelDef> VisionKernels();        // vision.cc
std::vector<KernelDef> TensorGenKernels();
std::vector<KernelDef> TensorSelectKernels();
std::vector<KernelDef> TensorScatterKernels();
std::vector<KernelDef> TensorSpatialKernels();
std::vector<KernelDef> LogicKernels();            // logic.cc
std::vector<KernelDef> MathKernels();             // math.cc
std::vector<KernelDef> EinsumKernels();           // einsum.cc
std::vector<KernelDef> MathNormKernels();         // math_norm.cc
std::vector<KernelDef> LossKernels();             // loss.cc
std::vector<KernelDef> SpectralKernels();         // spectral.cc
std::vector<KernelDef> DropoutKernels();          // dropout.cc
std::vector<KernelDef> RandomKernels();           // random.cc: RandomUniform/Normal(Like), Bernoulli, Multinomial
std::vector<KernelDef> AttentionKernels();        // attention.cc
std::vector<KernelDef> RotaryEmbeddingKernels();  // rotary_embedding.cc
std::vector<KernelDef> MlKernels();               // ml_ops.cc: ai.onnx.ml Binarizer, LabelEncoder, TreeEnsemble, ...
std::vector<KernelDef> MlModelKernels();          // ml_models.cc: ai.onnx.ml Linear*, SVM*
std::vector<KernelDef> MlTreeKernels();           // ml_trees.cc: ai.onnx.ml TreeEnsembleClassifier/Regressor
std::vector<KernelDef> MlTransformKernels();      // ml_transforms.cc: ai.onnx.ml Normalizer, Scaler, Imputer, ...
std::vector<KernelDef> MlMapKernels();            // ml_maps.cc: ai.onnx.ml DictVectorizer, CastMap
std::vector<KernelDef> RecurrentStateKernels();   // recurrent_state.cc: CausalConvWithState, LinearAttention
std::vector<KernelDef> KvCacheKernels();          // kv_cache.cc: TensorScatter
std::vector<KernelDef> TfIdfKernels();            // tfidf.cc
std::vector<KernelDef> OptimizerKernels();        // optimizer.cc: ai.onnx.preview.training Adagrad, Adam, Momentum
std::vector<KernelDef> DeformConvKernels();       // deform_conv.cc
std::vector<KernelDef> ImageDecoderKernels();     // image_decoder.cc (kernels/image decodes)
std::vector<KernelDef> GroupQueryAttentionKernels();  // group_query_attention.cc: com.microsoft GQA

// control_flow.cc: If, Loop, Scan.
std::vector<KernelDef> ControlFlowKernels();
std::vector<KernelDef> SequenceKernels();  // sequence.cc: Sequence*, ConcatFromSequence, SplitToSequence
std::vector<KernelDef> OptionalKernels();  // optional.cc: Optional*, SequenceMap
std::vector<KernelDef> StringKernels();  // string_normalizer.cc: StringNormalizer (Cast's string forms: string_cast.h)
std::vector<KernelDef> StringTextKernels();  // string_text.cc: StringConcat, StringSplit, RegexFullMatch
std::vector<KernelDef> TokenizerKernels();   // tokenizer.cc: com.microsoft.Tokenizer

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_KERNEL_H_
