// Einsum (opset 12): the equation parsed once into per-axis labels, shared by inference
// (ops/einsum.cc) and the CPU kernel (kernels/cpu/einsum.cc).
#ifndef ONNXRUN_OPS_EINSUM_H_
#define ONNXRUN_OPS_EINSUM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/shape.h"
#include "ops/op_def.h"

namespace ops {

// Labels are ids in [0, num_labels): the letters a-z A-Z are 0..51; the dims an ellipsis stands
// for get 52 + i (i counted from the left of the broadcast ellipsis, right-aligned per input).
struct EinsumSpec {
  std::vector<std::vector<int>> inputs;  // per input, the label of each axis (repeats = diagonal)
  std::vector<int> output;               // the label of each output axis (no repeats)
  int num_labels = 0;
  std::vector<bool> is_ellipsis;  // per label: an ellipsis dim (broadcasts a 1 against any size)
};

// Parses `equation` for inputs of the given ranks: explicit ("ij,jk->ik") or implicit output
// (labels seen once, sorted, after the ellipsis dims). An error on a malformed equation, a term
// count or rank mismatch, or an output label that no input has.
absl::StatusOr<EinsumSpec> ParseEinsum(const std::string& equation, const std::vector<int64_t>& input_ranks);

// The size of every label from the input shapes: equal sizes per label, except ellipsis dims that
// broadcast (1 against any size). Unknown dims stay unknown unless another input knows the label.
absl::StatusOr<std::vector<ir::Dim>> EinsumLabelDims(const EinsumSpec& spec, const std::vector<ir::Shape>& shapes);

std::vector<OpDef> EinsumOpDefs();

}  // namespace ops

#endif  // ONNXRUN_OPS_EINSUM_H_
