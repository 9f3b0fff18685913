// The sm90 fusion rule tables and the checks that read them.
#include "partitioner/fusion_rules.h"

#include "absl/strings/str_cat.h"
#include "ops/dropout.h"

namespace partitioner {
namespace {

// Element size in bits of a value's dtype (0 when unknown).
int64_t ElementBits(const ir::Graph& graph, ir::ValueId id) {
  return id == ir::kNoValue ? 0 : static_cast<int64_t>(ir::DTypeSize(graph.value(id).type.dtype)) * 8;
}

const ir::Dim* DimOf(const ir::Graph& graph, ir::ValueId id, int64_t axis) {
  const ir::TensorType& t = graph.value(id).type;
  if (!t.shape) return nullptr;
  const int64_t rank = static_cast<int64_t>(t.shape->size());
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? &(*t.shape)[axis] : nullptr;
}

// "" when `channels` elements of `bits` bits meet the alignment, else the reason.
std::string AlignmentRejection(const FusionRules& rules, std::string_view what, const ir::Dim* channels, int64_t bits) {
  if (channels == nullptr || !channels->known() || bits == 0) {
    return absl::StrCat(std::string(what), " unknown: alignment cannot be checked");
  }
  const int64_t total = channels->value * bits;
  if (total % rules.mainloop_alignment_bits == 0) return "";
  return absl::StrCat(std::string(what), " = ", channels->value, ": ", total, " bits, not a multiple of ",
                      rules.mainloop_alignment_bits, " (sm90 mainloop alignment)");
}

bool IsFloat(const ir::Graph& graph, ir::ValueId id) {
  const ir::DType d = graph.value(id).type.dtype;
  return d == ir::DType::kFloat32 || d == ir::DType::kFloat16 || d == ir::DType::kBFloat16;
}

std::string ConvRejection(const FusionRules& rules, const ir::Graph& graph, const ir::Node& node) {
  const int64_t rank = graph.value(node.inputs[0]).type.rank();
  if (rank != 4) return absl::StrCat("conv of rank ", rank, ": only 2-D convolutions (4-D tensors) fuse");
  if (!IsFloat(graph, node.inputs[0])) return "conv dtype is not float32/float16";
  const int64_t group = node.attrs.GetInt("group", 1);
  const int64_t bits = ElementBits(graph, node.inputs[0]);
  const ir::Dim* c = DimOf(graph, node.inputs[0], 1);
  if (group != 1) {
    if (c == nullptr || !c->known()) return absl::StrCat("grouped conv (group=", group, ")");
    const int64_t per_group = c->value / group;
    return absl::StrCat(per_group == 1 ? "depthwise" : "grouped", " conv (group=", group, "): per-group alignment ",
                        per_group * bits, " bits < ", rules.mainloop_alignment_bits, "; runs on the legacy API");
  }
  if (c != nullptr && c->known() && bits == 16 && c->value == rules.fp16_stem_channels) return "";
  return AlignmentRejection(rules, "input channels C", c, bits);
}

std::string MatMulRejection(const FusionRules& rules, const ir::Graph& graph, const ir::Node& node) {
  const ir::ValueId a = node.inputs[0];
  if (!IsFloat(graph, a)) return "matmul dtype is not float32/float16";
  const int64_t rank_a = graph.value(a).type.rank(), rank_b = graph.value(node.inputs[1]).type.rank();
  if (rank_a < 2 || rank_b < 2) return "1-D matmul operand";
  if (node.op_type == "Gemm") {
    if (node.attrs.GetFloat("alpha", 1.0f) != 1.0f || node.attrs.GetFloat("beta", 1.0f) != 1.0f) {
      return "Gemm alpha or beta != 1 (cuDNN matmul fusion needs alpha = 1)";
    }
    const ir::Dim* k = DimOf(graph, a, node.attrs.GetInt("transA", 0) ? 0 : 1);
    if (k != nullptr && !k->known()) return "";  // decided when the plan is built for the concrete dims
    return AlignmentRejection(rules, "inner dim K", k, ElementBits(graph, a));
  }
  // K unknown until run time (dynamic exports reshape through computed shapes): the plan built
  // for the concrete dims decides; a misaligned K then runs the step split.
  const ir::Dim* k = DimOf(graph, a, -1);
  if (k != nullptr && !k->known()) return "";
  return AlignmentRejection(rules, "inner dim K", k, ElementBits(graph, a));
}

}  // namespace

const FusionRules& Sm90Rules() {
  static const FusionRules* rules = new FusionRules{
      128,
      {
          {"Add", "ADD", 2, true},
          {"Sub", "SUB", 2, false},
          {"Mul", "MUL", 2, true},
          {"Div", "DIV", 2, false},
          {"Relu", "MAX(x,0)", 1, false},  // RELU_FWD picks engine 0 for some convs (CUDNN_FACTS)
          {"Clip", "MAX+MIN", 1, false},   // ReLU6 as MAX+MIN: 600x faster than RELU with clip
          {"Sigmoid", "SIGMOID_FWD", 1, false},
          {"Tanh", "TANH_FWD", 1, false},
          {"LeakyRelu", "RELU_FWD(lower slope)", 1, false},
          {"Elu", "ELU_FWD", 1, false},
          {"HardSwish", "SWISH-like: MUL(x, MIN(MAX(x/6+0.5,0),1))", 1, false},
          {"HardSigmoid", "MIN(MAX(alpha*x+beta,0),1)", 1, false},
          {"Gelu", "GELU_FWD (tanh form: GELU_APPROX_TANH_FWD)", 1, false},
          {"Erf", "ERF", 1, false},
      },
      {OperandShape::kScalar, OperandShape::kPerChannel, OperandShape::kFull},
  };
  return *rules;
}

const EpilogueOpRule* FindEpilogueRule(const FusionRules& rules, std::string_view op_type) {
  for (const EpilogueOpRule& rule : rules.epilogue_ops) {
    if (rule.op_type == op_type) return &rule;
  }
  return nullptr;
}

bool IsAnchorOp(std::string_view op_type) { return op_type == "Conv" || op_type == "MatMul" || op_type == "Gemm"; }

std::string AnchorRejection(const FusionRules& rules, const ir::Graph& graph, const ir::Node& node) {
  if (node.op_type == "Conv") return ConvRejection(rules, graph, node);
  if (node.op_type == "MatMul" || node.op_type == "Gemm") return MatMulRejection(rules, graph, node);
  return absl::StrCat(node.op_type, " is not a conv or matmul");
}

std::string EpilogueNodeRejection(const FusionRules& rules, const ir::Graph& graph, const ir::Node& node) {
  if (FindEpilogueRule(rules, node.op_type) == nullptr) {
    return absl::StrCat(node.op_type, " is not a pointwise op cuDNN fuses");
  }
  if (node.op_type == "Clip") {
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != ir::kNoValue && !graph.value(node.inputs[i]).constant) {
        return "Clip with non-constant bounds";
      }
    }
  }
  if (node.op_type == "Gelu") {
    const std::string approximate = node.attrs.GetString("approximate", "none");
    if (approximate != "none" && approximate != "tanh") return "Gelu approximate=" + approximate;
  }
  return "";
}

std::optional<OperandShape> ClassifyOperand(const ir::Shape& out, const ir::Shape& operand, bool anchor_is_conv) {
  if (operand.size() > out.size()) return std::nullopt;
  const size_t offset = out.size() - operand.size();
  bool all_one = true, full = operand.size() == out.size();
  int64_t non_one_axis = -1;
  for (size_t i = 0; i < operand.size(); ++i) {
    const ir::Dim& d = operand[i];
    const bool one = d.known() && d.value == 1;
    if (!one) {
      all_one = false;
      if (non_one_axis >= 0) non_one_axis = -2;  // more than one non-1 dim
      if (non_one_axis == -1) non_one_axis = static_cast<int64_t>(i + offset);
    }
    if (d != out[i + offset]) full = false;
  }
  if (all_one) return OperandShape::kScalar;
  if (full) return OperandShape::kFull;
  const int64_t channel_axis = anchor_is_conv ? 1 : static_cast<int64_t>(out.size()) - 1;
  if (non_one_axis == channel_axis && operand[non_one_axis - offset] == out[channel_axis]) {
    return OperandShape::kPerChannel;
  }
  return std::nullopt;
}

std::string OperandShapeName(OperandShape shape) {
  switch (shape) {
    case OperandShape::kScalar: return "scalar";
    case OperandShape::kPerChannel: return "per-channel";
    case OperandShape::kFull: return "full";
  }
  return "?";
}

namespace {

bool IsLegacyOpType(std::string_view op_type) {
  static const char* const kOps[] = {"BatchNormalization",
                                     "MaxPool",
                                     "AveragePool",
                                     "GlobalAveragePool",
                                     "GlobalMaxPool",
                                     "Softmax",
                                     "LogSoftmax",
                                     "LRN",
                                     "LSTM",
                                     "GRU",
                                     "RNN"};
  for (const char* op : kOps) {
    if (op_type == op) return true;
  }
  return false;
}

bool IsAliasOpType(std::string_view op_type) {
  static const char* const kOps[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  for (const char* op : kOps) {
    if (op_type == op) return true;
  }
  return false;
}

}  // namespace

bool IsLegacyOp(const ir::Node& node) {
  if (IsLegacyOpType(node.op_type)) return true;
  return node.op_type == "Conv" && node.attrs.GetInt("group", 1) != 1;
}

std::string_view PlannedStepKind(std::string_view op_type) {
  if (IsAnchorOp(op_type)) return "FusedGraph";
  if (IsLegacyOpType(op_type)) return "Legacy";
  if (IsAliasOpType(op_type) || op_type == "Dropout") return "Alias";
  if (FindEpilogueRule(Sm90Rules(), op_type) != nullptr) return "Kernel+epilogue";
  return "Kernel";
}

bool IsAliasOp(const ir::Node& node, const ir::Graph& graph) {
  if (IsAliasOpType(node.op_type)) return true;
  // Dropout is an alias in its inference form when its mask output is not used.
  return node.op_type == "Dropout" && (node.outputs.size() < 2 || node.outputs[1] == ir::kNoValue) &&
         ops::DropoutIsIdentity(graph, node);
}

}  // namespace partitioner
