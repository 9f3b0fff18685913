// GeluFusion: the two forms of GELU as exporters write them before opset 20,
//   0.5 * x * (1 + erf(x / sqrt(2)))                           (Div by sqrt(2) or Mul by 1/sqrt(2))
//   0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))    (x^3 as Pow(x, 3) or x * x * x:
//                                                               torch's approximate="tanh",
//                                                               Hugging Face's gelu_new)
// with the 0.5 on x, on the sum, or on the product, rewritten to one Gelu node (approximate "none"
// or "tanh"), so that it joins the preceding matmul's cuDNN epilogue (GELU_FWD /
// GELU_APPROX_TANH_FWD) instead of running as five to nine full passes. Every intermediate must
// have that one reader; anything else is left alone.
#ifndef ONNXRUN_PARTITIONER_GELU_FUSION_H_
#define ONNXRUN_PARTITIONER_GELU_FUSION_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class GeluFusion : public Pass {
 public:
  std::string_view name() const override { return "gelu-fusion"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  int fused() const { return fused_; }  // Gelu nodes made by the last Run

 private:
  int fused_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_GELU_FUSION_H_
