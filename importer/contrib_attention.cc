// ONNX Runtime's BERT fusions (what its transformers optimizer writes) as standard ops:
// com.microsoft Attention becomes one projection MatMul, a Split and ONNX's Attention (3-D form)
// with an additive mask of ORT's mask_filter_value, MultiHeadAttention the same Attention of its
// separate (biased) Q, K and V; EmbedLayerNormalization becomes Gathers, Adds
// and LayerNormalization, its mask index the count of ones per row.
#include <utility>

#include "absl/strings/str_cat.h"
#include "importer/contrib_ops.h"

namespace importer {
namespace {

using ir::Graph;
using ir::kNoValue;
using ir::Node;
using ir::Tensor;
using ir::ValueId;

ValueId Int64s(Graph& graph, const Node& node, const std::string& what, std::vector<int64_t> values) {
  return NodeConstant(graph, node, what, Tensor::FromInt64s(std::move(values)));
}

// Splits `x` on its last axis into parts of `sizes`.
std::vector<ValueId> PrependSplit(Graph& graph, const Node& node, std::vector<Node>& prefix, ValueId x,
                                  const std::vector<int64_t>& sizes) {
  std::vector<ValueId> parts =
      PrependWithOutputs(graph, node, prefix, "Split", {x, Int64s(graph, node, "split_sizes", sizes)}, sizes.size());
  prefix.back().attrs.Set("axis", int64_t{-1});
  return parts;
}

ValueId Int64Scalar(Graph& graph, const Node& node, const std::string& what, int64_t value) {
  return NodeConstant(graph, node, what, *Tensor::FromInt64s({value}).Reshaped({}));
}

// Shape(x)[start:end] as a 1-D int64 value.
ValueId ShapeSlice(Graph& graph, const Node& node, std::vector<Node>& prefix, ValueId x, int64_t start, int64_t end) {
  const ValueId dims = Prepend(graph, node, prefix, "Shape", {x});
  prefix.back().attrs.Set("start", start);
  prefix.back().attrs.Set("end", end);
  return dims;
}

// Where Attention's mask_index keeps a key, as bool: 2-D [B, T] and 3-D [B, S, T] masks keep
// entries > 0; a 1-D [B] one holds each row's end position (keys before it kept).
absl::StatusOr<ValueId> KeptKeys(Graph& graph, const Node& node, std::vector<Node>& prefix, ValueId mask_index,
                                 int64_t rank, ValueId keys_source) {
  const ValueId mask = PrependCast(graph, node, prefix, mask_index, ir::DType::kInt64);
  if (rank == 2 || rank == 3) {
    return Prepend(graph, node, prefix, "Greater", {mask, Int64Scalar(graph, node, "zero", 0)});
  }
  if (rank != 1) {
    return absl::UnimplementedError(absl::StrCat("Attention with a mask_index of rank ", rank, " is not supported"));
  }
  const ValueId keys = Prepend(graph, node, prefix, "Squeeze",
                               {ShapeSlice(graph, node, prefix, keys_source, 1, 2), Int64s(graph, node, "axis0", {0})});
  const ValueId positions = Prepend(graph, node, prefix, "Range",
                                    {Int64Scalar(graph, node, "start", 0), keys, Int64Scalar(graph, node, "delta", 1)});
  const ValueId ends = Prepend(graph, node, prefix, "Unsqueeze", {mask, Int64s(graph, node, "axis1", {1})});
  return Prepend(graph, node, prefix, "Less", {positions, ends});
}

// The additive mask ORT adds to the scores: 0 where kept, mask_filter_value elsewhere, shaped to
// broadcast over [B, heads, S, T].
absl::StatusOr<ValueId> AdditiveMask(Graph& graph, const Node& node, std::vector<Node>& prefix, ValueId mask_index,
                                     ValueId keys_source) {
  const int64_t rank = graph.value(mask_index).type.rank();
  const ir::DType dtype = graph.value(node.input(0)).type.dtype;
  absl::StatusOr<Tensor> zero = ValuesOfType(dtype, {0.0f}, {});
  absl::StatusOr<Tensor> filter = ValuesOfType(dtype, {node.attrs.GetFloat("mask_filter_value", -10000.0f)}, {});
  if (!zero.ok()) return zero.status();
  if (!filter.ok()) return filter.status();
  absl::StatusOr<ValueId> keep = KeptKeys(graph, node, prefix, mask_index, rank, keys_source);
  if (!keep.ok()) return keep.status();
  const ValueId additive = Prepend(graph, node, prefix, "Where",
                                   {*keep, NodeConstant(graph, node, "kept", *std::move(zero)),
                                    NodeConstant(graph, node, "filter", *std::move(filter))});
  const std::vector<int64_t> axes = rank == 3 ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2};
  return Prepend(graph, node, prefix, "Unsqueeze", {additive, Int64s(graph, node, "mask_axes", axes)});
}

// A KV cache ([B, heads, P, H] past_key / past_value) for ONNX Attention, and the node's outputs
// that receive the present cache (kNoValue: none).
struct KvCache {
  ValueId past_key = kNoValue, past_value = kNoValue, present_key = kNoValue, present_value = kNoValue;
};

// `node` (Attention or MultiHeadAttention, num_heads heads) becomes ONNX Attention of `qkv`, with
// ORT's additive mask from `mask_index` (keys counted in dim 1 of `keys_source`) plus
// `attention_bias`, is_causal where unidirectional (after the cached positions), ORT's scale, and
// the KV cache of `cache`.
absl::Status BecomeOnnxAttention(Graph& graph, Node& node, std::vector<Node>& prefix, std::vector<ValueId> qkv,
                                 ValueId mask_index, ValueId attention_bias, ValueId keys_source,
                                 const KvCache& cache = {}) {
  ValueId mask = kNoValue;
  if (mask_index != kNoValue) {
    absl::StatusOr<ValueId> additive = AdditiveMask(graph, node, prefix, mask_index, keys_source);
    if (!additive.ok()) return additive.status();
    mask = *additive;
  }
  if (attention_bias != kNoValue) {
    mask = mask == kNoValue ? attention_bias : Prepend(graph, node, prefix, "Add", {mask, attention_bias});
  }
  if (mask != kNoValue || cache.past_key != kNoValue) qkv.push_back(mask);
  if (cache.past_key != kNoValue) {
    qkv.push_back(cache.past_key);
    qkv.push_back(cache.past_value);
  }
  const ValueId output = node.outputs.empty() ? kNoValue : node.outputs[0];
  const int64_t heads = node.attrs.GetInt("num_heads", 0);
  const float scale = node.attrs.GetFloat("scale", 0.0f);  // 0: ORT's default, 1 / sqrt(head size)
  const bool causal = node.attrs.GetInt("unidirectional", 0) != 0;
  Become(node, "Attention", std::move(qkv));
  node.attrs.Set("q_num_heads", heads);
  node.attrs.Set("kv_num_heads", heads);
  if (causal) node.attrs.Set("is_causal", int64_t{1});
  if (scale != 0.0f) node.attrs.Set("scale", scale);
  node.outputs = {output};
  if (cache.present_key != kNoValue || cache.present_value != kNoValue) {
    node.outputs.push_back(cache.present_key);
    node.outputs.push_back(cache.present_value);
  }
  return absl::OkStatus();
}

// The sizes of Q, K and V in Attention's projection: qkv_hidden_sizes, else thirds of the weights.
absl::StatusOr<std::vector<int64_t>> ProjectionSizes(const Graph& graph, const Node& node, int64_t heads) {
  std::vector<int64_t> sizes = node.attrs.GetInts("qkv_hidden_sizes");
  const ir::TensorType& weights = graph.value(node.input(1)).type;
  if (sizes.empty() && weights.rank() == 2 && (*weights.shape)[1].known()) {
    sizes.assign(3, (*weights.shape)[1].value / 3);
  }
  if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] <= 0 || sizes[2] <= 0 || sizes[0] % heads != 0 ||
      sizes[2] % heads != 0) {
    return absl::InvalidArgumentError(
        "Attention needs weights [input_hidden, 3 * hidden] of known shape or qkv_hidden_sizes, Q and K of one size, "
        "each a multiple of num_heads");
  }
  return sizes;
}

// Attention's KV cache: past [2, B, heads, P, H] (keys, values) read as ONNX Attention's past_key /
// past_value; the ONNX Attention moves into the prefix and `node` becomes the present
// [2, B, heads, P + S, H] = Concat(Unsqueeze(present_key), Unsqueeze(present_value)).
absl::Status AttentionWithCache(Graph& graph, Node& node, std::vector<Node>& prefix, const std::vector<ValueId>& qkv,
                                ValueId present) {
  const ValueId past = node.input(4), mask_index = node.input(3);
  if (past != kNoValue && mask_index != kNoValue && graph.value(mask_index).type.rank() == 1) {
    return absl::UnimplementedError("Attention with a 1-D mask_index and past state is not supported");
  }
  KvCache cache;
  if (past != kNoValue) {
    cache.past_key = Prepend(graph, node, prefix, "Gather", {past, Int64Scalar(graph, node, "keys", 0)});
    cache.past_value = Prepend(graph, node, prefix, "Gather", {past, Int64Scalar(graph, node, "values", 1)});
  }
  cache.present_key = graph.AddValue(absl::StrCat(node.name, "__present_key"));
  cache.present_value = graph.AddValue(absl::StrCat(node.name, "__present_value"));
  if (absl::Status s = BecomeOnnxAttention(graph, node, prefix, qkv, mask_index, node.input(5), node.input(0), cache);
      !s.ok()) {
    return s;
  }
  Node attention = node;
  attention.name = absl::StrCat(node.name, "__attention");
  prefix.push_back(std::move(attention));
  const ValueId axis0 = Int64s(graph, node, "stack_axis", {0});
  const ValueId keys = Prepend(graph, node, prefix, "Unsqueeze", {cache.present_key, axis0});
  const ValueId values = Prepend(graph, node, prefix, "Unsqueeze", {cache.present_value, axis0});
  Become(node, "Concat", {keys, values});
  node.attrs.Set("axis", int64_t{0});
  node.outputs = {present};
  if (present == kNoValue) node.outputs = {graph.AddValue(absl::StrCat(node.name, "__present"))};
  return absl::OkStatus();
}

// Attention(input [B, S, H_in], weights [H_in, Hq + Hk + Hv], bias?, mask_index?, past?,
// attention_bias?): Q, K, V = split(input @ weights + bias), then ONNX Attention.
absl::Status AttentionToStandard(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  if (node.input(6) != kNoValue) {
    return absl::UnimplementedError("Attention's past_sequence_length (a shared KV buffer) is not supported");
  }
  if (node.attrs.GetInt("do_rotary", 0) != 0) {
    return absl::UnimplementedError("Attention with do_rotary is not supported");
  }
  const int64_t heads = node.attrs.GetInt("num_heads", 0);
  if (heads <= 0) return absl::InvalidArgumentError("Attention needs num_heads > 0");
  absl::StatusOr<std::vector<int64_t>> sizes = ProjectionSizes(graph, node, heads);
  if (!sizes.ok()) return sizes.status();
  ValueId qkv = Prepend(graph, node, prefix, "MatMul", {node.input(0), node.input(1)});
  if (node.input(2) != kNoValue) qkv = Prepend(graph, node, prefix, "Add", {qkv, node.input(2)});
  const std::vector<ValueId> parts = PrependSplit(graph, node, prefix, qkv, *sizes);
  const ValueId present = node.outputs.size() > 1 ? node.outputs[1] : kNoValue;
  if (node.input(4) == kNoValue && present == kNoValue) {
    return BecomeOnnxAttention(graph, node, prefix, parts, node.input(3), node.input(5), node.input(0));
  }
  return AttentionWithCache(graph, node, prefix, parts, present);
}

// The last dim of `value`, or -1 where unknown.
int64_t LastDim(const Graph& graph, ValueId value) {
  const ir::TensorType& type = graph.value(value).type;
  return type.rank() >= 1 && type.shape->back().known() ? type.shape->back().value : -1;
}

// [B, heads, L, H] -> [B, L, heads * H] (MultiHeadAttention's projected cross-attention keys).
ValueId HeadsToHidden(Graph& graph, const Node& node, std::vector<Node>& prefix, ValueId x) {
  const ValueId moved = Prepend(graph, node, prefix, "Transpose", {x});
  prefix.back().attrs.Set("perm", std::vector<int64_t>{0, 2, 1, 3});
  return Prepend(graph, node, prefix, "Reshape", {moved, Int64s(graph, node, "hidden_shape", {0, 0, -1})});
}

// The checks of MultiHeadAttention's optional inputs and outputs; `cache` gets its KV cache.
absl::Status ReadMhaCache(const Graph& graph, const Node& node, KvCache& cache) {
  if (node.input(8) != kNoValue || node.input(9) != kNoValue) {
    return absl::UnimplementedError("MultiHeadAttention's past_sequence_length / cache_indirection are not supported");
  }
  if (node.outputs.size() > 3 && node.outputs[3] != kNoValue) {
    return absl::UnimplementedError("MultiHeadAttention's qk output is not supported");
  }
  cache.past_key = node.input(6), cache.past_value = node.input(7);
  if ((cache.past_key == kNoValue) != (cache.past_value == kNoValue)) {
    return absl::InvalidArgumentError("MultiHeadAttention needs both past_key and past_value, or neither");
  }
  cache.present_key = node.outputs.size() > 1 ? node.outputs[1] : kNoValue;
  cache.present_value = node.outputs.size() > 2 ? node.outputs[2] : kNoValue;
  if (cache.past_key != kNoValue && node.input(4) != kNoValue && graph.value(node.input(4)).type.rank() == 1) {
    return absl::UnimplementedError("MultiHeadAttention with a 1-D key_padding_mask and past state is not supported");
  }
  return absl::OkStatus();
}

// MultiHeadAttention(query [B, S, D], key [B, L, D], value [B, L, Dv], bias? [D + D + Dv],
// key_padding_mask? [B, T] or [B], attention_bias?, past_key? / past_value? [B, heads, P, H]):
// Q, K and V, each plus its part of bias, then ONNX Attention (the cache and present_key /
// present_value as its past and present). Key and value may also come projected, [B, heads, L, H]
// (cross attention over cached encoder states; bias then adds to Q only). The packed QKV / KV
// forms, past_sequence_length and the qk output are refused.
absl::Status MultiHeadAttentionToStandard(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  KvCache cache;
  if (absl::Status s = ReadMhaCache(graph, node, cache); !s.ok()) return s;
  std::vector<ValueId> qkv = {node.input(0), node.input(1), node.input(2)};
  const int64_t rank_k = graph.value(qkv[1]).type.rank(), rank_v = graph.value(qkv[2]).type.rank();
  const bool projected = rank_k == 4 && rank_v == 4;
  if (graph.value(qkv[0]).type.rank() != 3 || rank_k != rank_v || (rank_k != 3 && !projected)) {
    return absl::UnimplementedError(
        "MultiHeadAttention supports a 3-D query with 3-D key and value, or projected [B, heads, L, H] ones");
  }
  if (projected && cache.past_key != kNoValue) {
    return absl::UnimplementedError("MultiHeadAttention with projected key / value and past state is not supported");
  }
  const int64_t heads = node.attrs.GetInt("num_heads", 0);
  if (heads <= 0) return absl::InvalidArgumentError("MultiHeadAttention needs num_heads > 0");
  if (node.input(3) != kNoValue) {
    const int64_t per_head = projected ? heads : 1;  // a projected key's last dim is one head's
    const std::vector<int64_t> sizes = {LastDim(graph, qkv[0]), per_head * LastDim(graph, qkv[1]),
                                        per_head * LastDim(graph, qkv[2])};
    if (sizes[0] < 0 || sizes[1] < 0 || sizes[2] < 0) {
      return absl::InvalidArgumentError("MultiHeadAttention's bias needs query, key and value of known hidden sizes");
    }
    const std::vector<ValueId> bias = PrependSplit(graph, node, prefix, node.input(3), sizes);
    for (int i = 0; i < (projected ? 1 : 3); ++i) qkv[i] = Prepend(graph, node, prefix, "Add", {qkv[i], bias[i]});
  }
  if (projected) {
    for (int i = 1; i < 3; ++i) qkv[i] = HeadsToHidden(graph, node, prefix, qkv[i]);
  }
  const ValueId keys_source = projected ? qkv[1] : node.input(1);
  return BecomeOnnxAttention(graph, node, prefix, qkv, node.input(4), node.input(5), keys_source, cache);
}

// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
// segment_embedding?, gamma, beta, mask?, position_ids?): LayerNormalization of word + position (+
// segment) embeddings (that sum is output 2); output 1, the mask index, counts each row's ones in
// mask (zeros without one).
absl::Status EmbedLayerNormToStandard(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  std::vector<ValueId> outputs = node.outputs;
  outputs.resize(3, kNoValue);
  const ValueId ids = node.input(0), segments = node.input(1), position_ids = node.input(8), mask = node.input(7);
  const bool with_segments = segments != kNoValue && node.input(4) != kNoValue;
  ValueId positions;
  if (position_ids != kNoValue) {
    positions = Prepend(graph, node, prefix, "Gather", {node.input(3), position_ids});
  } else {  // rows 0 .. S-1 of the position table, broadcast over the batch
    positions = Prepend(graph, node, prefix, "Slice",
                        {node.input(3), Int64s(graph, node, "first_row", {0}),
                         ShapeSlice(graph, node, prefix, ids, 1, 2), Int64s(graph, node, "rows", {0})});
  }
  const ValueId words = Prepend(graph, node, prefix, "Gather", {node.input(2), ids});
  ValueId sum = Prepend(graph, node, prefix, "Add", {words, positions}, with_segments ? kNoValue : outputs[2]);
  if (with_segments) {
    sum = Prepend(graph, node, prefix, "Add", {sum, Prepend(graph, node, prefix, "Gather", {node.input(4), segments})},
                  outputs[2]);
  }
  if (outputs[1] != kNoValue && mask != kNoValue) {
    const ValueId ones =
        Prepend(graph, node, prefix, "Equal",
                {PrependCast(graph, node, prefix, mask, ir::DType::kInt64), Int64Scalar(graph, node, "one", 1)});
    Prepend(graph, node, prefix, "ReduceSum",
            {PrependCast(graph, node, prefix, ones, ir::DType::kInt32), Int64s(graph, node, "sum_axes", {1})},
            outputs[1]);
    prefix.back().attrs.Set("keepdims", int64_t{0});
  } else if (outputs[1] != kNoValue) {
    Prepend(graph, node, prefix, "ConstantOfShape", {ShapeSlice(graph, node, prefix, ids, 0, 1)}, outputs[1]);
    absl::StatusOr<Tensor> value = Tensor::Create(ir::DType::kInt32, {1});
    if (!value.ok()) return value.status();
    prefix.back().attrs.Set("value", *std::move(value));
  }
  const float epsilon = node.attrs.GetFloat("epsilon", 1e-12f);
  Become(node, "LayerNormalization", {sum, node.input(5), node.input(6)});
  node.attrs.Set("axis", int64_t{-1});
  node.attrs.Set("epsilon", epsilon);
  node.outputs = {outputs[0]};
  return absl::OkStatus();
}

// DequantizeLinear(q, scale, zero_point?) with its type set (the scale's dtype, q's shape), so the
// rewrites that read types see it; a scale of more than one element is per column (axis 1).
ValueId PrependDequantized(Graph& graph, const Node& node, std::vector<Node>& prefix, ValueId q, ValueId scale,
                           ValueId zero_point) {
  std::vector<ValueId> inputs = {q, scale};
  if (zero_point != kNoValue) inputs.push_back(zero_point);
  const ValueId x = Prepend(graph, node, prefix, "DequantizeLinear", std::move(inputs));
  const ir::TensorType& scale_type = graph.value(scale).type;
  const bool per_column = scale_type.rank() == 1 && (*scale_type.shape)[0] != ir::Dim(1);
  if (per_column) prefix.back().attrs.Set("axis", int64_t{1});
  graph.value(x).type = ir::TensorType{scale_type.dtype, graph.value(q).type.shape};
  return x;
}

// QAttention (ORT's dynamic quantization of an optimized transformer): input (with input_scale,
// input_zero_point) and weight (weight_scale, weight_zero_point: per tensor or per column)
// dequantized, then Attention as above (input @ weight + bias on the dequantized values, where ORT
// multiplies the integers and scales the sums).
absl::Status QAttentionToStandard(Graph& graph, Node& node, std::vector<Node>& prefix) {
  if (node.input(8) != kNoValue || (node.outputs.size() > 1 && node.outputs[1] != kNoValue)) {
    return absl::UnimplementedError("QAttention with past / present state is not supported");
  }
  const ValueId x = PrependDequantized(graph, node, prefix, node.input(0), node.input(3), node.input(6));
  const ValueId w = PrependDequantized(graph, node, prefix, node.input(1), node.input(4), node.input(7));
  node.inputs = {x, w, node.input(2), node.input(5)};
  return AttentionToStandard(graph, node, prefix);
}

// QEmbedLayerNormalization: the quantized tables, gamma and beta (each with its scale and zero
// point, inputs 8-17) dequantized, then EmbedLayerNormalization as above.
absl::Status QEmbedLayerNormToStandard(Graph& graph, Node& node, std::vector<Node>& prefix) {
  std::vector<ValueId> inputs = {node.input(0), node.input(1)};
  for (size_t table : {2, 3, 4, 5, 6}) {  // its scale is input table + 6, its zero point table + 11
    const size_t scale = table + 6, zero_point = scale + 5;
    const bool present = node.input(table) != kNoValue;
    if (present && node.input(scale) == kNoValue) {
      return absl::InvalidArgumentError(absl::StrCat("input ", table, " needs its scale (input ", scale, ")"));
    }
    inputs.push_back(
        present ? PrependDequantized(graph, node, prefix, node.input(table), node.input(scale), node.input(zero_point))
                : kNoValue);
  }
  inputs.push_back(node.input(7));
  node.inputs = std::move(inputs);
  return EmbedLayerNormToStandard(graph, node, prefix);
}

}  // namespace

// The number of heads of a 3-D RotaryEmbedding input when num_heads is 0 (ORT derives it from the
// rotated width: all of a head when rotary_embedding_dim is 0); 0 when the dims are not known.
int64_t DerivedHeads(const Graph& graph, const Node& node) {
  const ir::TensorType &x = graph.value(node.input(0)).type, &cos = graph.value(node.input(2)).type;
  if (x.rank() != 3 || cos.rank() != 2 || !(*x.shape)[2].known() || !(*cos.shape)[1].known()) return 0;
  const int64_t rotary = node.attrs.GetInt("rotary_embedding_dim", 0),
                head = rotary > 0 ? rotary : 2 * (*cos.shape)[1].value;
  return head > 0 && (*x.shape)[2].value % head == 0 ? (*x.shape)[2].value / head : 0;
}

// Positions [B, S] = start + 0..S-1 from a one-element position_ids (ORT's form for a batch whose
// sequences all start at `start`).
ValueId PositionsFromStart(Graph& graph, const Node& node, std::vector<Node>& prefix, ValueId start) {
  const int64_t seq_axis = graph.value(node.input(0)).type.rank() == 4 ? 2 : 1;
  const ValueId shape = Prepend(graph, node, prefix, "Shape", {node.input(0)});
  const ValueId batch =
      Prepend(graph, node, prefix, "Gather", {shape, NodeConstant(graph, node, "batch_axis", Tensor::FromInt64s({0}))});
  const ValueId seq = Prepend(graph, node, prefix, "Gather",
                              {shape, NodeConstant(graph, node, "seq_axis", Tensor::FromInt64s({seq_axis}))});
  const ValueId scalar_shape = NodeConstant(graph, node, "scalar_shape", Tensor::FromInt64s({}));
  const ValueId first = Prepend(graph, node, prefix, "Reshape",
                                {PrependCast(graph, node, prefix, start, ir::DType::kInt64), scalar_shape});
  const ValueId last =
      Prepend(graph, node, prefix, "Add", {first, Prepend(graph, node, prefix, "Reshape", {seq, scalar_shape})});
  const ValueId range = Prepend(graph, node, prefix, "Range", {first, last, Int64Scalar(graph, node, "one", 1)});
  std::vector<ValueId> dims = {batch, seq};
  const ValueId target = Prepend(graph, node, prefix, "Concat", dims);
  prefix.back().attrs.Set("axis", int64_t{0});
  return Prepend(graph, node, prefix, "Expand", {range, target});
}

// com.microsoft.RotaryEmbedding(input, position_ids, cos_cache, sin_cache): ONNX's RotaryEmbedding
// (X, cos_cache, sin_cache, position_ids) with interleaved, num_heads and rotary_embedding_dim.
absl::Status ContribRotaryToRotary(Graph& graph, Node& node, std::vector<Node>& prefix) {
  AtTargetOpset(node);
  if (node.attrs.GetInt("is_packed_batching", 0) != 0) {
    return absl::UnimplementedError("RotaryEmbedding with is_packed_batching=1 is not supported");
  }
  const int64_t interleaved = node.attrs.GetInt("interleaved", 0),
                rotary = node.attrs.GetInt("rotary_embedding_dim", 0);
  int64_t heads = node.attrs.GetInt("num_heads", 0);
  if (heads == 0) heads = DerivedHeads(graph, node);
  ValueId positions = node.input(1);
  const ir::TensorType& position_type = graph.value(positions).type;
  if (position_type.shape && position_type.shape->size() <= 1 &&
      (position_type.shape->empty() || (*position_type.shape)[0].value == 1)) {
    positions = PositionsFromStart(graph, node, prefix, positions);
  }
  Become(node, "RotaryEmbedding", {node.input(0), node.input(2), node.input(3), positions});
  node.attrs.Set("interleaved", interleaved);
  if (heads > 0) node.attrs.Set("num_heads", heads);
  if (rotary > 0) node.attrs.Set("rotary_embedding_dim", rotary);
  return absl::OkStatus();
}

std::map<std::string, Rewrite> AttentionContribRewrites() {
  return {
      {"com.microsoft.Attention", NeedsInputs({0, 1}, AttentionToStandard)},
      {"com.microsoft.MultiHeadAttention", NeedsInputs({0, 1, 2}, MultiHeadAttentionToStandard)},
      {"com.microsoft.EmbedLayerNormalization", NeedsInputs({0, 2, 3, 5, 6}, EmbedLayerNormToStandard)},
      {"com.microsoft.RotaryEmbedding", NeedsInputs({0, 1, 2, 3}, ContribRotaryToRotary)},
      {"com.microsoft.QAttention", NeedsInputs({0, 1, 3, 4}, QAttentionToStandard)},
      {"com.microsoft.QEmbedLayerNormalization", NeedsInputs({0, 2, 3, 5, 6, 8, 9, 11, 12}, QEmbedLayerNormToStandard)},
  };
}

}  // namespace importer
