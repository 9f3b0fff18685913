// ONNX Runtime's GroupQueryAttention (com.microsoft; onnxruntime-genai's LLMs) as its CPU kernel
// computes it: query [B, S, Hq * D] (or Q, K and V packed in it when key and value are absent),
// key / value [B, S, Hkv * D], a KV cache past_key / past_value [B, Hkv, P, D], seqlens_k [B]
// (int32: each sequence's total length after this step, minus 1) and total_sequence_length (int32
// scalar). The step is the first prompt when S equals total_sequence_length (no past is read),
// else each sequence's past length is seqlens_k[b] + 1 - S. present_key / present_value are
// [B, Hkv, max(total_sequence_length, P), D]: the past rows, then the new ones (rotated when
// do_rotary), zeros after. A query at absolute position p attends keys 0..p (the last
// local_window_size of them, p - window + 1 .. p, with a window), scores scaled (scale, else 1/sqrt(D)), softcapped,
// softmax (smooth_softmax: with an extra zero logit) in float32. do_rotary rotates Q and K with cos_cache / sin_cache
// [max_position, rotary_dim / 2] at position_ids, else at each token's absolute position.
// Refused with their names: the quantized cache, Q/K norms, query_seqlens, attention_bias,
// head_sink, qk_output, causal=0.
#ifndef ONNXRUN_OPS_GROUP_QUERY_ATTENTION_H_
#define ONNXRUN_OPS_GROUP_QUERY_ATTENTION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace ops {

struct GqaAttrs {
  int64_t num_heads = 0, kv_num_heads = 0;
  float scale = 0, softcap = 0;  // 0: 1/sqrt(D); no softcap
  int64_t local_window_size = -1;
  bool do_rotary = false, rotary_interleaved = false, smooth_softmax = false;
};

absl::StatusOr<GqaAttrs> ParseGqaAttrs(const ir::Node& node);

// Inputs by position.
enum GqaInput : size_t {
  kGqaQuery = 0,
  kGqaKey,
  kGqaValue,
  kGqaPastKey,
  kGqaPastValue,
  kGqaSeqlensK,
  kGqaTotalSequenceLength,
  kGqaCosCache,
  kGqaSinCache,
  kGqaPositionIds,
};

}  // namespace ops

#endif  // ONNXRUN_OPS_GROUP_QUERY_ATTENTION_H_
