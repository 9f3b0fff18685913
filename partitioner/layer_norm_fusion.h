// LayerNormFusion: the layer normalisation exporters write before opset 17,
//   d = x - ReduceMean(x);  y = d / Sqrt(ReduceMean(d^2) + eps)  [* gamma]  [+ beta]
// (d^2 as Pow(d, 2) or Mul(d, d); the reductions over the same trailing axes, keepdims), rewritten
// to one LayerNormalization node (axis = the first reduced axis, epsilon = eps), which runs as one
// own kernel on the GPU instead of eight passes. Without gamma the scale is a constant of ones (the
// normalised dims must then be known). Intermediates must have no other reader; anything else is
// left alone.
#ifndef ONNXRUN_PARTITIONER_LAYER_NORM_FUSION_H_
#define ONNXRUN_PARTITIONER_LAYER_NORM_FUSION_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class LayerNormFusion : public Pass {
 public:
  std::string_view name() const override { return "layer-norm-fusion"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  int fused() const { return fused_; }  // LayerNormalization nodes made by the last Run

 private:
  int fused_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_LAYER_NORM_FUSION_H_
