// The squeeze-excite MLP of EfficientNet, MobileNetV3 and RegNetY blocks, found as one step: on a
// pooled value s[N, C, 1, 1],
//   Conv 1x1 (C -> R) -> Relu | SiLU (Sigmoid + Mul) -> [channel zero Pad R -> R'] -> Conv 1x1 (R' -> C)
//   -> Sigmoid | HardSigmoid
// gives the per-sample channel scale [N, C, 1, 1] that the block's Mul applies. The cover makes
// these 5-7 nodes one Kernel step (the CPU runs them node by node, like every step); the GPU runs
// it as one own kernel (kernels/cuda/squeeze_excite.h) instead of a cuDNN graph, a Pad, a legacy
// conv and a Sigmoid. Only for a known batch N <= kMaxSqueezeExciteBatch (measured on the H200 with
// the warp-per-row kernel, against cuDNN's steps, fp16: efficientnet_b0 batch 32 1.237 -> 1.163 ms,
// tf32 1.543 -> 1.479; regnet_y_400mf batch 32 1.185 -> 0.896; at batch 64 efficientnet_b0 fp16
// +0.9%, tf32 -2%, regnet_y_400mf -5%), and only for R * C <= kMaxSqueezeExciteWeights: each block
// reads all of W1, 17 us for MobileNetV3-Large's widest MLP (C 960, R 240), where cuDNN's steps are
// faster (with this limit that model takes 0.364 ms at batch 1, 0.373 with no MLP on the kernel).
//
// Usage:
//   auto readers = [&](ir::ValueId v) { return consumers[v]; };
//   std::optional<SqueezeExciteForm> se = MatchSqueezeExcite(graph, conv_node, readers);
//   if (se) { ... se->nodes is the step, se->output the scale ... }
#ifndef ONNXRUN_PARTITIONER_SQUEEZE_EXCITE_H_
#define ONNXRUN_PARTITIONER_SQUEEZE_EXCITE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "partitioner/silu_tail.h"  // ValueReaders

namespace partitioner {

struct SqueezeExciteForm {
  enum Activation { kRelu, kSilu };
  enum Gate { kSigmoid, kHardSigmoid };
  std::vector<ir::NodeId> nodes;                            // the chain, in graph order
  ir::ValueId input = ir::kNoValue, output = ir::kNoValue;  // [N, C, 1, 1]
  // Constants: W1 [R, C, 1, 1], W2 [C, R', 1, 1] (R' >= R; columns past R meet padded zeros),
  // biases [R] and [C] or kNoValue.
  ir::ValueId w1 = ir::kNoValue, b1 = ir::kNoValue, w2 = ir::kNoValue, b2 = ir::kNoValue;
  Activation activation = kRelu;
  Gate gate = kSigmoid;
  float alpha = 0.2f, beta = 0.5f;                // HardSigmoid: max(0, min(1, alpha * x + beta))
  int64_t channels = 0, reduced = 0, w2_row = 0;  // C, R, R'
};

// The squeeze-excite MLP starting at the Conv `fc1`, or nullopt. Every value inside the chain is
// read only inside it and is not a graph output; weights are constant and of the input's float
// type; C <= kMaxSqueezeExciteChannels, R' <= kMaxSqueezeExciteReduced, N <= kMaxSqueezeExciteBatch,
// R * C <= kMaxSqueezeExciteWeights.
std::optional<SqueezeExciteForm> MatchSqueezeExcite(const ir::Graph& graph, ir::NodeId fc1,
                                                    const ValueReaders& readers);

// The form of a step whose nodes are exactly such a chain (readers taken from the step), or nullopt.
std::optional<SqueezeExciteForm> MatchSqueezeExciteStep(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes);

inline constexpr int64_t kMaxSqueezeExciteChannels = 8192;
inline constexpr int64_t kMaxSqueezeExciteReduced = 1024;
inline constexpr int64_t kMaxSqueezeExciteBatch = 64;
inline constexpr int64_t kMaxSqueezeExciteWeights = 64 * 1024;

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_SQUEEZE_EXCITE_H_
