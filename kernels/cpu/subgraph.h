// The control-flow interpreter's pieces: running a body (an ir::Graph held by a GRAPH attribute)
// node by node on the CPU, and the byte-level slicing and stacking along an axis that Loop and Scan
// use for their scan inputs and outputs (any dtype).
#ifndef ONNXRUN_KERNELS_CPU_SUBGRAPH_H_
#define ONNXRUN_KERNELS_CPU_SUBGRAPH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace kernels::cpu {

// Runs `body` with `inputs` bound to its inputs in order (formal ones, then captured ones) and
// returns its outputs in order. Errors name the failing body node; an input whose dtype differs
// from the body's declared one is an InvalidArgument.
absl::StatusOr<std::vector<ir::Tensor>> RunBody(const ir::Graph& body, const std::vector<const ir::Tensor*>& inputs);

// Index `index` of `t` along `axis` (in [0, rank)): a tensor of rank - 1.
absl::StatusOr<ir::Tensor> SliceAt(const ir::Tensor& t, int64_t axis, int64_t index);
// The `parts` (same dtype and shape) stacked along a new axis `axis` (in [0, rank]), in order or,
// when `reverse`, last part first. Zero parts give `empty_dims` with 0 inserted at `axis`.
absl::StatusOr<ir::Tensor> Stack(const std::vector<ir::Tensor>& parts, int64_t axis, bool reverse, ir::DType dtype,
                                 const std::vector<int64_t>& empty_dims);

}  // namespace kernels::cpu

#endif  // ONNXRUN_KERNELS_CPU_SUBGRAPH_H_
