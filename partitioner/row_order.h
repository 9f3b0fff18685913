// RowOrder: a row-wise projection (Gemm with a constant B and a bias row, or MatMul with a constant
// 2-D weight) that runs on rows in one order between two Transposes swapping that order runs on the
// rows in the final order instead:
//   Transpose(Reshape(Gemm(Reshape(Transpose(a, p), [d0*d1, K])), [d0, d1, N]), perm 1,0,2)
//     ->  MatMul(Reshape(Transpose(a, p'), [d1, d0, K]), W) + bias      (p' = p with p[0], p[1] swapped)
// torch exports nn.MultiheadAttention's output projection like this (batch-first module, seq-first
// inside): afterwards the attention writes its output straight in the new order (a view), and the
// projection's bias and the residual Add after it fuse into one matmul graph. Values keep their ids.
#ifndef ONNXRUN_PARTITIONER_ROW_ORDER_H_
#define ONNXRUN_PARTITIONER_ROW_ORDER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class RowOrder : public Pass {
 public:
  std::string_view name() const override { return "row-order"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  int rewritten() const { return rewritten_; }  // projections moved by the last Run

 private:
  int rewritten_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_ROW_ORDER_H_
