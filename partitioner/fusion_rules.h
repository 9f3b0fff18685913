// The rules that decide what may join a FusedGraph step, as data that mirrors cuDNN's documented
// support surface for runtime fusion (sm90/sm80): NHWC fully packed; mainloop inputs (X, W, or A,
// B) 128-bit aligned along the reduced dim; epilogue operands shaped like a per-channel vector, the
// full output, or a scalar; the anchor's output as each pointwise op's first operand (commutative
// ops are swapped); alpha = 1; at most one reduction, as the exit. Each check returns "" when
// allowed, else the reason, which --explain prints.
#ifndef ONNXRUN_PARTITIONER_FUSION_RULES_H_
#define ONNXRUN_PARTITIONER_FUSION_RULES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace partitioner {

// One ONNX op allowed in an epilogue and how the cuDNN graph builder lowers it.
struct EpilogueOpRule {
  std::string_view op_type;
  std::string_view lowering;  // cuDNN pointwise mode(s), e.g. "ADD", "MAX+MIN"
  int operands;               // 1: unary; 2: binary
  bool commutative;           // a region value may be either operand
};

// Shapes a non-region epilogue operand may have, relative to the anchor's output.
enum class OperandShape { kScalar, kPerChannel, kFull };

struct FusionRules {
  int mainloop_alignment_bits = 128;  // sm90: X/W (A/B) aligned along the reduced dim
  std::vector<EpilogueOpRule> epilogue_ops;
  std::vector<OperandShape> operand_shapes;
  // A dense float16 conv with exactly this many input channels (the channel-padded stem, 64 bits)
  // fuses too: cuDNN's precompiled conv+bias+activation engine 48 runs it on tensor cores
  // (bench/stem_bench on the H200, batch 256: 0.41 ms, against 4.05 ms on the legacy API).
  int fp16_stem_channels = 4;
};

// The rules for the H100 (sm90), as documented by cuDNN 9 and measured in CUDNN_FACTS.md.
const FusionRules& Sm90Rules();

const EpilogueOpRule* FindEpilogueRule(const FusionRules& rules, std::string_view op_type);

// Why `node` cannot anchor a FusedGraph ("" when it can): only Conv (2-D, group 1, aligned input
// channels) and MatMul/Gemm (aligned inner dim, alpha = beta = 1) anchor.
std::string AnchorRejection(const FusionRules& rules, const ir::Graph& graph, const ir::Node& node);
bool IsAnchorOp(std::string_view op_type);

// Why `node` (an epilogue candidate) cannot join, given its op's attributes ("" when it can):
// e.g. Clip needs constant bounds, Gelu "tanh" is not lowered.
std::string EpilogueNodeRejection(const FusionRules& rules, const ir::Graph& graph, const ir::Node& node);

// Classifies `operand` against the anchor output shape; nullopt when no allowed shape fits.
std::optional<OperandShape> ClassifyOperand(const ir::Shape& anchor_output, const ir::Shape& operand,
                                            bool anchor_is_conv);
std::string OperandShapeName(OperandShape shape);

// Legacy routing: grouped/depthwise conv, BN that could not be folded, pools, softmax, LRN, and the
// recurrent ops LSTM, GRU and RNN (cuDNN's RNN API; the GPU runtime decides per form, see
// runtime/cuda_steps_rnn.h).
bool IsLegacyOp(const ir::Node& node);
// The step kind the cover gives a node of this op type as far as the type alone decides, for
// --list-ops: "FusedGraph" (anchors), "Legacy", "Alias", "Kernel+epilogue" (a Kernel step, or part
// of a FusedGraph epilogue after a conv/matmul), "Kernel". Attributes and shapes may still send one
// node elsewhere (a grouped Conv is Legacy); --explain gives the reason per node.
std::string_view PlannedStepKind(std::string_view op_type);
// Reshape-like ops that need no work (same bytes, new shape); Dropout only in its inference form
// (ops::DropoutIsIdentity) with its mask unused.
bool IsAliasOp(const ir::Node& node, const ir::Graph& graph);

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_FUSION_RULES_H_
