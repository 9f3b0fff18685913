// EinsumLowering: an Einsum of float inputs without repeated labels in one term is rewritten to
// the ops the fusion rules and both backends run fast, contracting the inputs left to right: per
// pair, ReduceSum over the labels only one side has and nothing later needs, Transposes to
// [batch, M, K] x [batch, K, N] order, Reshapes that merge the contracted labels (and the second
// input's kept labels) into one dim, one MatMul and a Reshape back; then the sums and the Transpose
// to the output's order. The first input's kept labels stay separate
// dims (MatMul broadcasts the second input over them), so symbolic batch and sequence dims need no
// merging. A merge needs the merged dims known but one. Anything else (diagonals, broadcasting
// contracted ellipsis dims, integer types) stays an Einsum on its reference kernel. Exporters write Einsum for
// attention scores ("bhqd,bhkd->bhqk") and projections ("bld,dhk->blhk"); lowered, they run on cuBLAS / cuDNN on the
// GPU and join the attention and epilogue fusions.
#ifndef ONNXRUN_PARTITIONER_EINSUM_LOWERING_H_
#define ONNXRUN_PARTITIONER_EINSUM_LOWERING_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "partitioner/pass.h"

namespace partitioner {

class EinsumLowering : public Pass {
 public:
  std::string_view name() const override { return "einsum-lowering"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

  int lowered() const { return lowered_; }  // Einsum nodes rewritten by the last Run

 private:
  int lowered_ = 0;
};

}  // namespace partitioner

#endif  // ONNXRUN_PARTITIONER_EINSUM_LOWERING_H_
