// Attention (opsets 23 and 24), RotaryEmbedding (opset 23) and TensorScatter (opset 24): attributes and the layout of
// their inputs, read once for inference and the CPU kernels (kernels/cpu/attention.cc,
// kernels/cpu/rotary_embedding.cc), and their type/shape inference.
//
// Attention(Q, K, V, attn_mask?, past_key?, past_value?, nonpad_kv_seqlen?) -> (Y, present_key?,
// present_value?, qk_matmul_output?), as ONNX 1.23 defines it: 4-D inputs [B, heads, seq, head]
// or 3-D [B, seq, heads * head] with q_num_heads / kv_num_heads; keys and values after past ones;
// scores = scale * Q K^T (scale defaults to 1/sqrt(head size)), softcap, plus the mask (bool: false
// masks out; otherwise added; a mask shorter than the keys masks the rest), the causal mask
// (key j <= query i + past length) and the padding mask of nonpad_kv_seqlen; softmax over the keys
// (a row with every key masked gives zeros); Y = P V. Query head h reads key/value head
// h / (q_heads / kv_heads) (grouped-query attention).
//
// RotaryEmbedding(X, cos_cache, sin_cache, position_ids?) -> Y: X [B, heads, seq, head] or
// [B, seq, hidden] (num_heads then required); the first rotary_embedding_dim (0: all) of each head
// rotated by the cache rows of each position: halves (x1, x2) or, with interleaved, even/odd pairs,
// to (x1 cos - x2 sin, x2 cos + x1 sin).
#ifndef ONNXRUN_OPS_ATTENTION_H_
#define ONNXRUN_OPS_ATTENTION_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace ops {

struct AttentionAttrs {
  bool is_causal = false;
  std::optional<double> scale;                // default 1/sqrt(head size)
  int64_t q_num_heads = 0, kv_num_heads = 0;  // required for 3-D inputs
  double softcap = 0;
  int64_t qk_matmul_output_mode = 0;  // 0 scaled QK, 1 after softcap, 2 after the mask, 3 after softmax
  // Opset 25's sliding window: a query at absolute position p attends keys p - left .. p + right
  // (-1: unbounded on that side).
  int64_t left_window = -1, right_window = -1;
  bool windowed() const { return left_window >= 0 || right_window >= 0; }
  // Whether the window hides key j from the query at absolute position p.
  bool OutsideWindow(int64_t p, int64_t j) const {
    return (left_window >= 0 && p - j > left_window) || (right_window >= 0 && j - p > right_window);
  }
};
absl::StatusOr<AttentionAttrs> ParseAttentionAttrs(const ir::Node& node);

// The 4-D view of the inputs: batch, heads, lengths and head sizes.
struct AttentionDims {
  int64_t batch = 0, q_heads = 0, kv_heads = 0;
  int64_t q_seq = 0, kv_seq = 0, past_seq = 0;
  int64_t head_size = 0, v_head_size = 0;
  bool three_d = false;
  int64_t total_seq() const { return past_seq + kv_seq; }
};
// From the dims of Q, K, V and past_key (empty when absent); an error for inconsistent ones.
absl::StatusOr<AttentionDims> AttentionDimsOf(const AttentionAttrs& attrs, const std::vector<int64_t>& q,
                                              const std::vector<int64_t>& k, const std::vector<int64_t>& v,
                                              const std::vector<int64_t>& past_key);

struct RotaryAttrs {
  bool interleaved = false;
  int64_t num_heads = 0;
  int64_t rotary_dim = 0;  // 0: the whole head
};
absl::StatusOr<RotaryAttrs> ParseRotaryAttrs(const ir::Node& node);

// TensorScatter (opset 24): writes update into a copy of past_cache along `axis` (default -2,
// never 0) from write_indices[b] (default 0) on, per batch; mode "linear" (writes must fit) or
// "circular" (positions modulo the cache length).
struct TensorScatterAttrs {
  int64_t axis = -2;
  bool circular = false;
};
absl::StatusOr<TensorScatterAttrs> ParseTensorScatterAttrs(const ir::Node& node);

std::vector<OpDef> AttentionOpDefs();  // Attention, RotaryEmbedding, TensorScatter

}  // namespace ops

#endif  // ONNXRUN_OPS_ATTENTION_H_
