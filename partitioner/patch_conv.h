// PatchConv: a "patchify" convolution — the patch embedding of ViT, DeiT, BEiT, CLIP (kernel equal
// to stride and at least 8x8, no padding, no dilation, one group, constant weights) — becomes a
// matmul over the patches:
//   Conv(x[N,C,H,W], W[K,C,p,q], b)  ->
//   Transpose(MatMul(Reshape(Transpose(Reshape(x, [N,C,H/p,p,W/q,q]), [0,2,4,1,3,5]),
//                            [N, H/p*W/q, C*p*q]), W'[C*p*q, K]) + b, [0,2,1]) reshaped to [N,K,H/p,W/q]
// A patch conv is one GEMM of [N*H*W/(p*q), C*p*q] x [C*p*q, K]; cuDNN's conv engines run it several
// times slower than its matmul engines (ViT-B/16's 16x16 stride-16 conv: 0.20 ms at batch 32 on an
// H200 against ~0.02 ms as a matmul), and the matmul joins the bias in one graph. Smaller kernels
// (a CNN's 1x1 convs, ConvNeXt's 4x4 stem and 2x2 downsampling) stay convs: they sit between
// channels-last ops whose layout a rewrite would break. Needs the input's C, H, W known and
// divisible. When the conv's output only goes through ViT's Reshape to [N, K, H/p*W/q] and
// Transpose(0,2,1), the matmul writes that [N, tokens, K] result directly (no copies back and forth).
#ifndef ONNXRUN_PARTITIONER_PATCH_CONV_H_
#define ONNXRUN_PARTITIONER_PATCH_CONV_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class PatchConv : public Pass {
 public:
  std::string_view name() const override { return "patch-conv"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  int rewritten() const { return rewritten_; }  // convs made matmuls by the last Run

 private:
  int rewritten_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_PATCH_CONV_H_
