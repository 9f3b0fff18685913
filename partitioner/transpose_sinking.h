// TransposeSinking: a Transpose that keeps the last axis in place, read only by a MatMul with a
// constant 2-D weight (a row-wise op: each row of the result depends on one row of the input),
// optionally followed by that MatMul's bias Add (a constant that varies along the last axis only),
// moves after them:
//   MatMul(Transpose(x, p), W) + b  ->  Transpose(MatMul(x, W) + b, p)
// The matmul then reads x as it is stored, and the moved Transpose lands where the GPU executor can
// make it a view: torch's multi-head attention transposes [B, S, E] to [S, B, E] before its input
// projection, whose result is split into heads for attention (runtime/cuda_views.cc) — after
// the move no copy of the activations is left there. Values keep their ids and types.
#ifndef ONNXRUN_PARTITIONER_TRANSPOSE_SINKING_H_
#define ONNXRUN_PARTITIONER_TRANSPOSE_SINKING_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class TransposeSinking : public Pass {
 public:
  std::string_view name() const override { return "transpose-sinking"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  int moved() const { return moved_; }  // Transposes moved by the last Run

 private:
  int moved_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_TRANSPOSE_SINKING_H_
